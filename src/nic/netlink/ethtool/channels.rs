//! Queue counts: CHANNELS_GET (`ethtool -l`) and CHANNELS_SET (`ethtool -L`).

use super::super::NetlinkError;
use super::super::attr::{AttrError, AttrTable};
use super::{Ethtool, header, msg};
use crate::nic::model::{Channels, ChannelsSet};

const A_RX_MAX: u16 = 2;
const A_TX_MAX: u16 = 3;
const A_OTHER_MAX: u16 = 4;
const A_COMBINED_MAX: u16 = 5;
const A_RX_COUNT: u16 = 6;
const A_TX_COUNT: u16 = 7;
const A_OTHER_COUNT: u16 = 8;
const A_COMBINED_COUNT: u16 = 9;

/// Decode a CHANNELS_GET reply. Like `ethtool -l` ("n/a"), a kind of channel
/// whose maximum is 0 is reported as absent.
pub(crate) fn parse(attrs: &[u8]) -> Result<Channels, AttrError> {
    let t = AttrTable::parse(attrs)?;
    let pair = |count: u16, max: u16| -> Result<(Option<u32>, Option<u32>), AttrError> {
        match t.u32(max)? {
            None | Some(0) => Ok((None, None)),
            Some(m) => Ok((t.u32(count)?, Some(m))),
        }
    };
    let (rx, rx_max) = pair(A_RX_COUNT, A_RX_MAX)?;
    let (tx, tx_max) = pair(A_TX_COUNT, A_TX_MAX)?;
    let (other, other_max) = pair(A_OTHER_COUNT, A_OTHER_MAX)?;
    let (combined, combined_max) = pair(A_COMBINED_COUNT, A_COMBINED_MAX)?;
    Ok(Channels {
        rx,
        tx,
        other,
        combined,
        rx_max,
        tx_max,
        other_max,
        combined_max,
    })
}

/// CHANNELS_SET, genetlink header onward: rx, tx, other, combined.
pub(crate) fn encode_set(ifname: &str, set: &ChannelsSet) -> Result<Vec<u8>, AttrError> {
    let mut b = header::request(msg::CHANNELS_SET, ifname, 0);
    for (kind, v) in [
        (A_RX_COUNT, set.rx),
        (A_TX_COUNT, set.tx),
        (A_OTHER_COUNT, set.other),
        (A_COMBINED_COUNT, set.combined),
    ] {
        if let Some(v) = v {
            b.put_u32(kind, v);
        }
    }
    b.finish()
}

pub(crate) fn get(e: &mut Ethtool, ifname: &str) -> Result<Option<Channels>, NetlinkError> {
    e.get(msg::CHANNELS_GET, "CHANNELS_GET", ifname, 0, parse)
}

pub(crate) fn set(e: &mut Ethtool, ifname: &str, set: &ChannelsSet) -> Result<(), NetlinkError> {
    if *set == ChannelsSet::default() {
        return Ok(());
    }
    e.set("CHANNELS_SET", ifname, encode_set(ifname, set))
        .map(drop)
}

#[cfg(test)]
mod tests {
    use super::super::super::attr::Builder;
    use super::*;
    use crate::nic::netlink::fixtures::assert_matches_ethtool;

    #[test]
    fn channels_set_equals_ethtool() {
        let combined = ChannelsSet {
            combined: Some(1),
            ..Default::default()
        };
        assert_matches_ethtool(
            "channels_set_combined",
            &encode_set("vcap0", &combined).unwrap(),
        );
        let rxtx = ChannelsSet {
            rx: Some(1),
            tx: Some(1),
            ..Default::default()
        };
        assert_matches_ethtool("channels_set_rx_tx", &encode_set("vcap0", &rxtx).unwrap());
    }

    #[test]
    fn reply_with_zero_maxima_is_not_available() {
        let mut b = Builder::new();
        b.put_u32(A_RX_MAX, 2)
            .put_u32(A_TX_MAX, 2)
            .put_u32(A_OTHER_MAX, 0)
            .put_u32(A_COMBINED_MAX, 0)
            .put_u32(A_RX_COUNT, 1)
            .put_u32(A_TX_COUNT, 2)
            .put_u32(A_OTHER_COUNT, 0)
            .put_u32(A_COMBINED_COUNT, 0);
        let c = parse(&b.finish().unwrap()).unwrap();
        assert_eq!(
            (c.rx, c.rx_max, c.tx, c.tx_max),
            (Some(1), Some(2), Some(2), Some(2))
        );
        assert_eq!(
            (c.other, c.other_max, c.combined, c.combined_max),
            (None, None, None, None)
        );
    }
}
