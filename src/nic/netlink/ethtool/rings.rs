//! Ring sizes: RINGS_GET (`ethtool -g`) and RINGS_SET (`ethtool -G`).

use super::super::NetlinkError;
use super::super::attr::{AttrError, AttrTable};
use super::{Ethtool, header, msg};
use crate::nic::model::{Rings, RingsSet};

const A_RX_MAX: u16 = 2;
const A_RX_MINI_MAX: u16 = 3;
const A_RX_JUMBO_MAX: u16 = 4;
const A_TX_MAX: u16 = 5;
const A_RX: u16 = 6;
const A_RX_MINI: u16 = 7;
const A_RX_JUMBO: u16 = 8;
const A_TX: u16 = 9;

/// Decode a RINGS_GET reply (the kernel omits a ring whose maximum is 0).
pub(crate) fn parse(attrs: &[u8]) -> Result<Rings, AttrError> {
    let t = AttrTable::parse(attrs)?;
    Ok(Rings {
        rx: t.u32(A_RX)?,
        tx: t.u32(A_TX)?,
        rx_mini: t.u32(A_RX_MINI)?,
        rx_jumbo: t.u32(A_RX_JUMBO)?,
        rx_max: t.u32(A_RX_MAX)?,
        tx_max: t.u32(A_TX_MAX)?,
        rx_mini_max: t.u32(A_RX_MINI_MAX)?,
        rx_jumbo_max: t.u32(A_RX_JUMBO_MAX)?,
    })
}

/// RINGS_SET, genetlink header onward: rx, rx-mini, rx-jumbo, tx.
pub(crate) fn encode_set(ifname: &str, set: &RingsSet) -> Result<Vec<u8>, AttrError> {
    let mut b = header::request(msg::RINGS_SET, ifname, 0);
    for (kind, v) in [
        (A_RX, set.rx),
        (A_RX_MINI, set.rx_mini),
        (A_RX_JUMBO, set.rx_jumbo),
        (A_TX, set.tx),
    ] {
        if let Some(v) = v {
            b.put_u32(kind, v);
        }
    }
    b.finish()
}

pub(crate) fn get(e: &mut Ethtool, ifname: &str) -> Result<Option<Rings>, NetlinkError> {
    e.get(msg::RINGS_GET, "RINGS_GET", ifname, 0, parse)
}

pub(crate) fn set(e: &mut Ethtool, ifname: &str, set: &RingsSet) -> Result<(), NetlinkError> {
    if *set == RingsSet::default() {
        return Ok(());
    }
    e.set("RINGS_SET", ifname, encode_set(ifname, set))
        .map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nic::netlink::fixtures::{assert_matches_ethtool, parse_request};

    #[test]
    fn rings_set_equals_ethtool() {
        let set = RingsSet {
            rx: Some(512),
            tx: Some(256),
            ..Default::default()
        };
        assert_matches_ethtool("rings_set", &encode_set("vcap0", &set).unwrap());
        let all = RingsSet {
            rx: Some(512),
            rx_mini: Some(64),
            rx_jumbo: Some(128),
            tx: Some(256),
        };
        assert_matches_ethtool("rings_set_all", &encode_set("vcap0", &all).unwrap());
    }

    #[test]
    fn set_round_trips_through_the_get_decoder() {
        let set = RingsSet {
            rx: Some(4096),
            tx: Some(256),
            ..Default::default()
        };
        let r = parse(&parse_request(&encode_set("eth0", &set).unwrap())).unwrap();
        assert_eq!(
            (r.rx, r.tx, r.rx_mini, r.rx_max),
            (Some(4096), Some(256), None, None)
        );
    }
}
