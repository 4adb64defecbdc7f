//! String sets: ETHTOOL_GSSET_INFO (how many) and ETHTOOL_GSTRINGS (the names).

use std::io;
use std::os::fd::OwnedFd;

use super::{Command, c_string, call, ethtool_ioctl, not_supported};

const ETHTOOL_GSTRINGS: u32 = 0x1b;
const ETHTOOL_GSSET_INFO: u32 = 0x37;
pub(crate) const ETH_SS_STATS: u32 = 1;
pub(crate) const ETH_SS_FEATURES: u32 = 4;
const ETH_GSTRING_LEN: usize = 32;

/// The kernel writes as many strings as the set has *now*, whatever count we
/// pass. Between our count query and the fetch a driver may grow (veth: more
/// queues), so buffers get this much headroom (entries).
pub(super) const HEADROOM: usize = 1024;

/// `struct ethtool_sset_info` asking about one string set.
#[repr(C)]
pub(super) struct SsetInfo {
    cmd: u32,
    reserved: u32,
    sset_mask: u64,
    data: [u32; 1],
}

// SAFETY: one set asked for, so the kernel writes at most one u32 of data.
unsafe impl Command for SsetInfo {}

/// How many strings `set` has (0 when the device or kernel has none).
pub(crate) fn count(fd: &OwnedFd, ifname: &str, set: u32) -> io::Result<usize> {
    let mut info = SsetInfo::with_cmd(ETHTOOL_GSSET_INFO);
    info.sset_mask = 1 << set;
    match call(fd, ifname, &mut info) {
        Ok(()) if info.sset_mask & (1 << set) != 0 => Ok(info.data[0] as usize),
        Ok(()) => Ok(0),
        Err(e) if not_supported(&e) => Ok(0),
        Err(e) => Err(e),
    }
}

/// The names of `set`, `count` as just reported by [`count`].
pub(crate) fn names(fd: &OwnedFd, ifname: &str, set: u32, count: usize) -> io::Result<Vec<String>> {
    let cap = count * 2 + HEADROOM;
    // struct ethtool_gstrings: cmd, string_set, len, then len * 32 bytes.
    let mut buf = vec![0u32; 3 + cap * ETH_GSTRING_LEN / 4];
    buf[0] = ETHTOOL_GSTRINGS;
    buf[1] = set;
    buf[2] = count as u32;
    // SAFETY: the buffer holds `cap` strings, well above the count just reported.
    unsafe { ethtool_ioctl(fd, ifname, buf.as_mut_ptr().cast())? };
    let n = (buf[2] as usize).min(cap);
    let bytes: Vec<u8> = buf[3..].iter().flat_map(|w| w.to_ne_bytes()).collect();
    Ok(bytes
        .chunks(ETH_GSTRING_LEN)
        .take(n)
        .map(c_string)
        .collect())
}

/// The whole of `set` (empty when there is none).
pub(crate) fn all(fd: &OwnedFd, ifname: &str, set: u32) -> io::Result<Vec<String>> {
    match count(fd, ifname, set)? {
        0 => Ok(Vec::new()),
        n => names(fd, ifname, set, n),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn struct_layouts_match_the_kernel() {
        assert_eq!(size_of::<SsetInfo>(), 24);
        assert_eq!(std::mem::offset_of!(SsetInfo, data), 16);
    }

    #[test]
    fn this_kernels_feature_names_include_gro() {
        let fd = super::super::ctl_socket().unwrap();
        let names = all(&fd, "lo", ETH_SS_FEATURES).unwrap();
        assert!(names.iter().any(|n| n == "rx-gro"), "{names:?}");
    }
}
