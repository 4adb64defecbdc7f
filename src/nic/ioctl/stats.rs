//! ETHTOOL_GSTATS (`ethtool -S`): the driver's private statistics by name.

use std::collections::BTreeMap;
use std::io;
use std::os::fd::OwnedFd;

use super::strings::{self, ETH_SS_STATS, HEADROOM};
use super::{ctl_socket, ethtool_ioctl, not_supported};

const ETHTOOL_GSTATS: u32 = 0x1d;

fn stat_values(fd: &OwnedFd, ifname: &str, count: usize) -> io::Result<Vec<u64>> {
    let cap = count * 2 + HEADROOM;
    // struct ethtool_stats: cmd, n_stats (one u64's worth), then n_stats u64.
    let mut buf = vec![0u64; 1 + cap];
    buf[0] = u64::from(ETHTOOL_GSTATS) | (count as u64) << 32;
    // SAFETY: the buffer holds `cap` values, well above the count just reported.
    unsafe { ethtool_ioctl(fd, ifname, buf.as_mut_ptr().cast())? };
    let n = ((buf[0] >> 32) as usize).min(cap);
    Ok(buf[1..=n].to_vec())
}

/// ETHTOOL_GSSET_INFO + GSTRINGS(ETH_SS_STATS) + GSTATS. `Ok(None)` when the driver has none.
pub fn driver_stats(ifname: &str) -> io::Result<Option<BTreeMap<String, u64>>> {
    let fd = ctl_socket()?;
    // The number of statistics can change between calls (queues added): retry then.
    for _ in 0..3 {
        let count = match strings::count(&fd, ifname, ETH_SS_STATS) {
            Ok(0) => return Ok(None),
            Ok(c) => c,
            Err(e) if not_supported(&e) => return Ok(None),
            Err(e) => return Err(e),
        };
        let names = strings::names(&fd, ifname, ETH_SS_STATS, count)?;
        let values = stat_values(&fd, ifname, count)?;
        if names.len() == values.len() {
            let mut out = BTreeMap::new();
            for (name, value) in names.into_iter().zip(values) {
                // A driver repeating a name keeps its first value, as listed first by ethtool -S.
                out.entry(name).or_insert(value);
            }
            return Ok(Some(out));
        }
    }
    Err(io::Error::new(
        io::ErrorKind::Interrupted,
        format!("{ifname}: driver statistics kept changing size while being read"),
    ))
}
