//! Flow control: PAUSE_GET (`ethtool -a`) and PAUSE_SET (`ethtool -A`).

use super::super::NetlinkError;
use super::super::attr::{AttrError, AttrTable};
use super::{Ethtool, header, msg};
use crate::nic::model::{Pause, PauseSet};

const A_AUTONEG: u16 = 2;
const A_RX: u16 = 3;
const A_TX: u16 = 4;

pub(crate) fn parse(attrs: &[u8]) -> Result<Pause, AttrError> {
    let t = AttrTable::parse(attrs)?;
    Ok(Pause {
        autoneg: t.bool(A_AUTONEG)?.unwrap_or(false),
        rx: t.bool(A_RX)?.unwrap_or(false),
        tx: t.bool(A_TX)?.unwrap_or(false),
    })
}

/// PAUSE_SET, genetlink header onward: autoneg, rx, tx.
pub(crate) fn encode_set(ifname: &str, set: &PauseSet) -> Result<Vec<u8>, AttrError> {
    let mut b = header::request(msg::PAUSE_SET, ifname, 0);
    for (kind, v) in [(A_AUTONEG, set.autoneg), (A_RX, set.rx), (A_TX, set.tx)] {
        if let Some(v) = v {
            b.put_bool(kind, v);
        }
    }
    b.finish()
}

pub(crate) fn get(e: &mut Ethtool, ifname: &str) -> Result<Option<Pause>, NetlinkError> {
    e.get(msg::PAUSE_GET, "PAUSE_GET", ifname, 0, parse)
}

pub(crate) fn set(e: &mut Ethtool, ifname: &str, set: &PauseSet) -> Result<(), NetlinkError> {
    if *set == PauseSet::default() {
        return Ok(());
    }
    e.set("PAUSE_SET", ifname, encode_set(ifname, set))
        .map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nic::netlink::fixtures::{assert_matches_ethtool, parse_request};

    #[test]
    fn pause_set_equals_ethtool() {
        let set = PauseSet {
            autoneg: Some(false),
            rx: Some(true),
            tx: Some(false),
        };
        assert_matches_ethtool("pause_set", &encode_set("vcap0", &set).unwrap());
    }

    #[test]
    fn set_round_trips_through_the_get_decoder() {
        let set = PauseSet {
            autoneg: Some(true),
            rx: Some(false),
            tx: Some(true),
        };
        let p = parse(&parse_request(&encode_set("eth0", &set).unwrap())).unwrap();
        assert_eq!(
            p,
            Pause {
                autoneg: true,
                rx: false,
                tx: true
            }
        );
    }
}
