//! Ring sizes: ETHTOOL_GRINGPARAM (`ethtool -g`) and ETHTOOL_SRINGPARAM (`ethtool -G`).

use super::{Command, IoctlError, get, read_modify_write};
use crate::nic::model::{Rings, RingsSet};

pub(crate) const GET: u32 = 0x10;
const SET: u32 = 0x11;

/// `struct ethtool_ringparam`.
#[repr(C)]
#[derive(Debug, Default)]
pub(crate) struct RingParam {
    cmd: u32,
    rx_max: u32,
    rx_mini_max: u32,
    rx_jumbo_max: u32,
    tx_max: u32,
    rx: u32,
    rx_mini: u32,
    rx_jumbo: u32,
    tx: u32,
}

// SAFETY: struct ethtool_ringparam, plain u32s (size asserted below).
unsafe impl Command for RingParam {}

/// As RINGS_GET answers: a ring whose maximum is 0 is left out, value and maximum.
fn to_rings(p: &RingParam) -> Rings {
    let pair = |v: u32, max: u32| {
        if max == 0 {
            (None, None)
        } else {
            (Some(v), Some(max))
        }
    };
    let (rx, rx_max) = pair(p.rx, p.rx_max);
    let (rx_mini, rx_mini_max) = pair(p.rx_mini, p.rx_mini_max);
    let (rx_jumbo, rx_jumbo_max) = pair(p.rx_jumbo, p.rx_jumbo_max);
    let (tx, tx_max) = pair(p.tx, p.tx_max);
    Rings {
        rx,
        tx,
        rx_mini,
        rx_jumbo,
        rx_max,
        tx_max,
        rx_mini_max,
        rx_jumbo_max,
    }
}

pub(crate) fn read(ifname: &str) -> Result<Option<Rings>, IoctlError> {
    Ok(get::<RingParam>(ifname, "ETHTOOL_GRINGPARAM", GET)?.map(|p| to_rings(&p)))
}

pub(crate) fn write(ifname: &str, set: &RingsSet) -> Result<(), IoctlError> {
    if *set == RingsSet::default() {
        return Ok(());
    }
    let ops = ("ETHTOOL_GRINGPARAM", "ETHTOOL_SRINGPARAM");
    read_modify_write(ifname, ops, (GET, SET), |p: &mut RingParam| {
        p.rx = set.rx.unwrap_or(p.rx);
        p.tx = set.tx.unwrap_or(p.tx);
        p.rx_mini = set.rx_mini.unwrap_or(p.rx_mini);
        p.rx_jumbo = set.rx_jumbo.unwrap_or(p.rx_jumbo);
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn struct_layouts_match_the_kernel() {
        assert_eq!(size_of::<RingParam>(), 36);
        assert_eq!(std::mem::offset_of!(RingParam, rx), 20);
    }

    #[test]
    fn rings_without_a_maximum_are_absent() {
        let p = RingParam {
            rx_max: 4096,
            tx_max: 4096,
            rx: 256,
            tx: 512,
            ..Default::default()
        };
        let r = to_rings(&p);
        assert_eq!(
            (r.rx, r.rx_max, r.tx, r.tx_max),
            (Some(256), Some(4096), Some(512), Some(4096))
        );
        assert_eq!((r.rx_mini, r.rx_mini_max, r.rx_jumbo), (None, None, None));
    }
}
