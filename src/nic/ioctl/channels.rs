//! Queue counts: ETHTOOL_GCHANNELS (`ethtool -l`) and ETHTOOL_SCHANNELS (`ethtool -L`).

use super::{Command, IoctlError, get, read_modify_write};
use crate::nic::model::{Channels, ChannelsSet};

const GET: u32 = 0x3c;
const SET: u32 = 0x3d;

/// `struct ethtool_channels`.
#[repr(C)]
#[derive(Debug, Default)]
struct ChannelsParam {
    cmd: u32,
    max_rx: u32,
    max_tx: u32,
    max_other: u32,
    max_combined: u32,
    rx_count: u32,
    tx_count: u32,
    other_count: u32,
    combined_count: u32,
}

// SAFETY: struct ethtool_channels, plain u32s (size asserted below).
unsafe impl Command for ChannelsParam {}

/// As CHANNELS_GET is decoded: a kind of channel whose maximum is 0 is absent.
fn to_channels(p: &ChannelsParam) -> Channels {
    let pair = |v: u32, max: u32| {
        if max == 0 {
            (None, None)
        } else {
            (Some(v), Some(max))
        }
    };
    let (rx, rx_max) = pair(p.rx_count, p.max_rx);
    let (tx, tx_max) = pair(p.tx_count, p.max_tx);
    let (other, other_max) = pair(p.other_count, p.max_other);
    let (combined, combined_max) = pair(p.combined_count, p.max_combined);
    Channels {
        rx,
        tx,
        other,
        combined,
        rx_max,
        tx_max,
        other_max,
        combined_max,
    }
}

pub(crate) fn read(ifname: &str) -> Result<Option<Channels>, IoctlError> {
    Ok(get::<ChannelsParam>(ifname, "ETHTOOL_GCHANNELS", GET)?.map(|p| to_channels(&p)))
}

pub(crate) fn write(ifname: &str, set: &ChannelsSet) -> Result<(), IoctlError> {
    if *set == ChannelsSet::default() {
        return Ok(());
    }
    let ops = ("ETHTOOL_GCHANNELS", "ETHTOOL_SCHANNELS");
    read_modify_write(ifname, ops, (GET, SET), |p: &mut ChannelsParam| {
        p.rx_count = set.rx.unwrap_or(p.rx_count);
        p.tx_count = set.tx.unwrap_or(p.tx_count);
        p.other_count = set.other.unwrap_or(p.other_count);
        p.combined_count = set.combined.unwrap_or(p.combined_count);
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn struct_layouts_match_the_kernel() {
        assert_eq!(size_of::<ChannelsParam>(), 36);
        assert_eq!(std::mem::offset_of!(ChannelsParam, rx_count), 20);
    }

    #[test]
    fn zero_maxima_are_not_available() {
        let p = ChannelsParam {
            max_rx: 2,
            max_tx: 2,
            rx_count: 1,
            tx_count: 2,
            ..Default::default()
        };
        let c = to_channels(&p);
        assert_eq!(
            (c.rx, c.rx_max, c.tx, c.tx_max),
            (Some(1), Some(2), Some(2), Some(2))
        );
        assert_eq!((c.other, c.combined, c.combined_max), (None, None, None));
    }
}
