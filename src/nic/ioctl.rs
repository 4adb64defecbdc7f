//! The SIOCETHTOOL ioctl: what netlink does not carry (`ethtool -i`, `ethtool -S`).

use std::collections::BTreeMap;

/// `ethtool -i` data.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DriverInfo {
    pub driver: String,
    pub version: String,
    pub firmware_version: String,
    pub bus_info: String,
}

/// ETHTOOL_GDRVINFO. `Ok(None)` when the device has no ethtool ops.
pub fn driver_info(_ifname: &str) -> std::io::Result<Option<DriverInfo>> {
    todo!()
}

/// ETHTOOL_GSSET_INFO + GSTRINGS(ETH_SS_STATS) + GSTATS. `Ok(None)` when the driver has none.
pub fn driver_stats(_ifname: &str) -> std::io::Result<Option<BTreeMap<String, u64>>> {
    todo!()
}
