//! ETHTOOL_GDRVINFO (`ethtool -i`).

use std::io;

use super::{Command, c_string, call, ctl_socket, not_supported};

/// `ethtool -i` data.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DriverInfo {
    pub driver: String,
    pub version: String,
    pub firmware_version: String,
    pub bus_info: String,
}

const ETHTOOL_GDRVINFO: u32 = 0x03;

/// `struct ethtool_drvinfo`.
#[repr(C)]
pub(super) struct DrvInfo {
    cmd: u32,
    driver: [u8; 32],
    version: [u8; 32],
    fw_version: [u8; 32],
    bus_info: [u8; 32],
    erom_version: [u8; 32],
    reserved2: [u8; 12],
    n_priv_flags: u32,
    n_stats: u32,
    testinfo_len: u32,
    eedump_len: u32,
    regdump_len: u32,
}

// SAFETY: struct ethtool_drvinfo, plain data (layout asserted below).
unsafe impl Command for DrvInfo {}

/// ETHTOOL_GDRVINFO. `Ok(None)` when the device has no ethtool ops.
pub fn driver_info(ifname: &str) -> io::Result<Option<DriverInfo>> {
    let fd = ctl_socket()?;
    let mut info = DrvInfo::with_cmd(ETHTOOL_GDRVINFO);
    match call(&fd, ifname, &mut info) {
        Ok(()) => Ok(Some(DriverInfo {
            driver: c_string(&info.driver),
            version: c_string(&info.version),
            firmware_version: c_string(&info.fw_version),
            bus_info: c_string(&info.bus_info),
        })),
        Err(e) if not_supported(&e) => Ok(None),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn struct_layouts_match_the_kernel() {
        assert_eq!(size_of::<DrvInfo>(), 196);
        assert_eq!(std::mem::offset_of!(DrvInfo, n_stats), 180);
    }
}
