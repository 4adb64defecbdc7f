//! Interrupt coalescing: ETHTOOL_GCOALESCE (`ethtool -c`) and ETHTOOL_SCOALESCE (`ethtool -C`).
//!
//! The ioctl answers every field whether the driver uses it or not; netlink
//! leaves out a parameter that is 0 and not among the driver's supported
//! ones. Without that list here, a 0 is taken as not supported: the same
//! answer for every parameter a driver does not support, and `None` instead
//! of `Some(0)` (or `Some(false)` for adaptive) for one it supports and has at 0.

use super::{Command, IoctlError, get, read_modify_write};
use crate::nic::model::{Coalesce, CoalesceSet};

const GET: u32 = 0x0e;
const SET: u32 = 0x0f;

/// `struct ethtool_coalesce`: the fields we use, then the rest of its 23 u32s.
#[repr(C)]
#[derive(Debug, Default)]
struct CoalesceParam {
    cmd: u32,
    rx_usecs: u32,
    rx_frames: u32,
    rx_usecs_irq: u32,
    rx_frames_irq: u32,
    tx_usecs: u32,
    tx_frames: u32,
    tx_usecs_irq: u32,
    tx_frames_irq: u32,
    stats_block_usecs: u32,
    adaptive_rx: u32,
    adaptive_tx: u32,
    /// pkt_rate_low through rate_sample_interval.
    rest: [u32; 11],
}

// SAFETY: struct ethtool_coalesce, plain u32s (size asserted below).
unsafe impl Command for CoalesceParam {}

fn to_coalesce(p: &CoalesceParam) -> Coalesce {
    let n = |v: u32| (v != 0).then_some(v);
    let b = |v: u32| (v != 0).then_some(true);
    Coalesce {
        rx_usecs: n(p.rx_usecs),
        tx_usecs: n(p.tx_usecs),
        rx_frames: n(p.rx_frames),
        tx_frames: n(p.tx_frames),
        adaptive_rx: b(p.adaptive_rx),
        adaptive_tx: b(p.adaptive_tx),
    }
}

pub(crate) fn read(ifname: &str) -> Result<Option<Coalesce>, IoctlError> {
    Ok(get::<CoalesceParam>(ifname, "ETHTOOL_GCOALESCE", GET)?.map(|p| to_coalesce(&p)))
}

pub(crate) fn write(ifname: &str, set: &CoalesceSet) -> Result<(), IoctlError> {
    if *set == CoalesceSet::default() {
        return Ok(());
    }
    let ops = ("ETHTOOL_GCOALESCE", "ETHTOOL_SCOALESCE");
    read_modify_write(ifname, ops, (GET, SET), |p: &mut CoalesceParam| {
        p.rx_usecs = set.rx_usecs.unwrap_or(p.rx_usecs);
        p.tx_usecs = set.tx_usecs.unwrap_or(p.tx_usecs);
        p.rx_frames = set.rx_frames.unwrap_or(p.rx_frames);
        p.tx_frames = set.tx_frames.unwrap_or(p.tx_frames);
        p.adaptive_rx = set.adaptive_rx.map_or(p.adaptive_rx, u32::from);
        p.adaptive_tx = set.adaptive_tx.map_or(p.adaptive_tx, u32::from);
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn struct_layouts_match_the_kernel() {
        assert_eq!(size_of::<CoalesceParam>(), 92);
        assert_eq!(std::mem::offset_of!(CoalesceParam, adaptive_rx), 40);
    }

    #[test]
    fn zero_is_not_reported() {
        let p = CoalesceParam {
            rx_usecs: 3,
            ..Default::default()
        };
        let c = to_coalesce(&p);
        assert_eq!(c.rx_usecs, Some(3));
        assert_eq!((c.tx_usecs, c.rx_frames, c.adaptive_rx), (None, None, None));
    }
}
