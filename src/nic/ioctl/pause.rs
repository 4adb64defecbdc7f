//! Flow control: ETHTOOL_GPAUSEPARAM (`ethtool -a`) and ETHTOOL_SPAUSEPARAM (`ethtool -A`).

use super::{Command, IoctlError, get, read_modify_write};
use crate::nic::model::{Pause, PauseSet};

const GET: u32 = 0x12;
const SET: u32 = 0x13;

/// `struct ethtool_pauseparam`.
#[repr(C)]
struct PauseParam {
    cmd: u32,
    autoneg: u32,
    rx_pause: u32,
    tx_pause: u32,
}

// SAFETY: struct ethtool_pauseparam, plain u32s (size asserted below).
unsafe impl Command for PauseParam {}

pub(crate) fn read(ifname: &str) -> Result<Option<Pause>, IoctlError> {
    Ok(
        get::<PauseParam>(ifname, "ETHTOOL_GPAUSEPARAM", GET)?.map(|p| Pause {
            autoneg: p.autoneg != 0,
            rx: p.rx_pause != 0,
            tx: p.tx_pause != 0,
        }),
    )
}

pub(crate) fn write(ifname: &str, set: &PauseSet) -> Result<(), IoctlError> {
    if *set == PauseSet::default() {
        return Ok(());
    }
    let ops = ("ETHTOOL_GPAUSEPARAM", "ETHTOOL_SPAUSEPARAM");
    read_modify_write(ifname, ops, (GET, SET), |p: &mut PauseParam| {
        let put = |field: &mut u32, v: Option<bool>| *field = v.map_or(*field, u32::from);
        put(&mut p.autoneg, set.autoneg);
        put(&mut p.rx_pause, set.rx);
        put(&mut p.tx_pause, set.tx);
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn struct_layouts_match_the_kernel() {
        assert_eq!(size_of::<PauseParam>(), 16);
    }
}
