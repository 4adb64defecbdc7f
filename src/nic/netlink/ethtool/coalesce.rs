//! Interrupt coalescing: COALESCE_GET (`ethtool -c`) and COALESCE_SET (`ethtool -C`).

use super::super::NetlinkError;
use super::super::attr::{AttrError, AttrTable};
use super::{Ethtool, header, msg};
use crate::nic::model::{Coalesce, CoalesceSet};

const A_RX_USECS: u16 = 2;
const A_RX_MAX_FRAMES: u16 = 3;
const A_TX_USECS: u16 = 6;
const A_TX_MAX_FRAMES: u16 = 7;
const A_USE_ADAPTIVE_RX: u16 = 11;
const A_USE_ADAPTIVE_TX: u16 = 12;

/// Decode a COALESCE_GET reply; the kernel leaves out parameters the driver
/// does not support (when they are 0).
pub(crate) fn parse(attrs: &[u8]) -> Result<Coalesce, AttrError> {
    let t = AttrTable::parse(attrs)?;
    Ok(Coalesce {
        rx_usecs: t.u32(A_RX_USECS)?,
        tx_usecs: t.u32(A_TX_USECS)?,
        rx_frames: t.u32(A_RX_MAX_FRAMES)?,
        tx_frames: t.u32(A_TX_MAX_FRAMES)?,
        adaptive_rx: t.bool(A_USE_ADAPTIVE_RX)?,
        adaptive_tx: t.bool(A_USE_ADAPTIVE_TX)?,
    })
}

/// COALESCE_SET, genetlink header onward, in attribute order: rx-usecs,
/// rx-frames, tx-usecs, tx-frames, adaptive-rx, adaptive-tx.
pub(crate) fn encode_set(ifname: &str, set: &CoalesceSet) -> Result<Vec<u8>, AttrError> {
    let mut b = header::request(msg::COALESCE_SET, ifname, 0);
    for (kind, v) in [
        (A_RX_USECS, set.rx_usecs),
        (A_RX_MAX_FRAMES, set.rx_frames),
        (A_TX_USECS, set.tx_usecs),
        (A_TX_MAX_FRAMES, set.tx_frames),
    ] {
        if let Some(v) = v {
            b.put_u32(kind, v);
        }
    }
    for (kind, v) in [
        (A_USE_ADAPTIVE_RX, set.adaptive_rx),
        (A_USE_ADAPTIVE_TX, set.adaptive_tx),
    ] {
        if let Some(v) = v {
            b.put_bool(kind, v);
        }
    }
    b.finish()
}

pub(crate) fn get(e: &mut Ethtool, ifname: &str) -> Result<Option<Coalesce>, NetlinkError> {
    e.get(msg::COALESCE_GET, "COALESCE_GET", ifname, 0, parse)
}

pub(crate) fn set(e: &mut Ethtool, ifname: &str, set: &CoalesceSet) -> Result<(), NetlinkError> {
    if *set == CoalesceSet::default() {
        return Ok(());
    }
    e.set("COALESCE_SET", ifname, encode_set(ifname, set))
        .map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nic::netlink::fixtures::{assert_matches_ethtool, parse_request};

    #[test]
    fn coalesce_set_equals_ethtool() {
        let one = CoalesceSet {
            rx_usecs: Some(50),
            ..Default::default()
        };
        assert_matches_ethtool("coalesce_set", &encode_set("vcap0", &one).unwrap());
        let all = CoalesceSet {
            rx_usecs: Some(50),
            rx_frames: Some(8),
            tx_usecs: Some(30),
            tx_frames: Some(4),
            adaptive_rx: Some(true),
            adaptive_tx: Some(false),
        };
        assert_matches_ethtool("coalesce_set_all", &encode_set("vcap0", &all).unwrap());
    }

    #[test]
    fn set_round_trips_through_the_get_decoder() {
        let all = CoalesceSet {
            rx_usecs: Some(50),
            rx_frames: Some(8),
            tx_usecs: None,
            tx_frames: Some(4),
            adaptive_rx: Some(true),
            adaptive_tx: Some(false),
        };
        let c = parse(&parse_request(&encode_set("eth0", &all).unwrap())).unwrap();
        assert_eq!(
            c,
            Coalesce {
                rx_usecs: Some(50),
                tx_usecs: None,
                rx_frames: Some(8),
                tx_frames: Some(4),
                adaptive_rx: Some(true),
                adaptive_tx: Some(false),
            }
        );
    }
}
