//! The SIOCETHTOOL ioctl: what netlink does not carry (`ethtool -i`, `ethtool -S`).
//!
//! Requests go through an AF_INET datagram socket (AF_NETLINK when IPv4 is
//! unavailable) created in the calling thread's network namespace.

use std::collections::BTreeMap;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// `ethtool -i` data.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DriverInfo {
    pub driver: String,
    pub version: String,
    pub firmware_version: String,
    pub bus_info: String,
}

const ETHTOOL_GDRVINFO: u32 = 0x03;
const ETHTOOL_GSTRINGS: u32 = 0x1b;
const ETHTOOL_GSTATS: u32 = 0x1d;
const ETHTOOL_GSSET_INFO: u32 = 0x37;
const ETH_SS_STATS: u32 = 1;
const ETH_GSTRING_LEN: usize = 32;
const IFNAMSIZ: usize = 16;

/// The kernel writes as many strings/stats as the driver has *now*, whatever
/// count we pass. Between our count query and the fetch a driver may grow
/// (veth: more queues), so buffers get this much headroom (entries).
const HEADROOM: usize = 1024;

/// `struct ifreq` with the `ifr_data` member of its union.
#[repr(C)]
struct IfReq {
    name: [u8; IFNAMSIZ],
    data: *mut libc::c_void,
    _rest: [u8; 16],
}

/// `struct ethtool_drvinfo`.
#[repr(C)]
struct DrvInfo {
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

/// `struct ethtool_sset_info` asking about one string set.
#[repr(C)]
struct SsetInfo {
    cmd: u32,
    reserved: u32,
    sset_mask: u64,
    data: [u32; 1],
}

fn ctl_socket() -> io::Result<OwnedFd> {
    let mut last = io::Error::from_raw_os_error(libc::EAFNOSUPPORT);
    for (family, kind, proto) in [
        (libc::AF_INET, libc::SOCK_DGRAM, 0),
        (libc::AF_NETLINK, libc::SOCK_RAW, libc::NETLINK_GENERIC),
    ] {
        // SAFETY: plain syscall; the result is checked before use.
        let fd = unsafe { libc::socket(family, kind | libc::SOCK_CLOEXEC, proto) };
        if fd >= 0 {
            // SAFETY: `fd` is a fresh descriptor we own.
            return Ok(unsafe { OwnedFd::from_raw_fd(fd) });
        }
        last = io::Error::last_os_error();
    }
    Err(last)
}

fn ifname_bytes(ifname: &str) -> io::Result<[u8; IFNAMSIZ]> {
    let b = ifname.as_bytes();
    if b.is_empty() || b.len() >= IFNAMSIZ || b.contains(&0) {
        return Err(io::Error::from_raw_os_error(libc::ENODEV));
    }
    let mut name = [0u8; IFNAMSIZ];
    name[..b.len()].copy_from_slice(b);
    Ok(name)
}

/// Run one SIOCETHTOOL command whose argument (starting with the u32 command) is at `data`.
///
/// # Safety
/// `data` must point to a writable buffer large enough for everything the
/// kernel writes back for that command.
unsafe fn ethtool_ioctl(fd: &OwnedFd, ifname: &str, data: *mut libc::c_void) -> io::Result<()> {
    let mut req = IfReq {
        name: ifname_bytes(ifname)?,
        data,
        _rest: [0; 16],
    };
    // SAFETY: `req` is a live ifreq; the caller vouches for `data`.
    let r = unsafe { libc::ioctl(fd.as_raw_fd(), libc::SIOCETHTOOL, &mut req as *mut IfReq) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

fn c_string(b: &[u8]) -> String {
    let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    String::from_utf8_lossy(&b[..end]).into_owned()
}

fn not_supported(e: &io::Error) -> bool {
    e.raw_os_error() == Some(libc::EOPNOTSUPP)
}

/// ETHTOOL_GDRVINFO. `Ok(None)` when the device has no ethtool ops.
pub fn driver_info(ifname: &str) -> io::Result<Option<DriverInfo>> {
    let fd = ctl_socket()?;
    // SAFETY: DrvInfo is plain data; all-zero is valid.
    let mut info: DrvInfo = unsafe { std::mem::zeroed() };
    info.cmd = ETHTOOL_GDRVINFO;
    // SAFETY: `info` is a whole struct ethtool_drvinfo, all GDRVINFO writes.
    match unsafe { ethtool_ioctl(&fd, ifname, (&mut info as *mut DrvInfo).cast()) } {
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

/// How many ETH_SS_STATS strings the driver has (0 when none).
fn stats_count(fd: &OwnedFd, ifname: &str) -> io::Result<usize> {
    let mut info = SsetInfo {
        cmd: ETHTOOL_GSSET_INFO,
        reserved: 0,
        sset_mask: 1 << ETH_SS_STATS,
        data: [0],
    };
    // SAFETY: one set requested, so the kernel writes at most one u32 of data.
    unsafe { ethtool_ioctl(fd, ifname, (&mut info as *mut SsetInfo).cast())? };
    Ok(if info.sset_mask & (1 << ETH_SS_STATS) != 0 {
        info.data[0] as usize
    } else {
        0
    })
}

fn stat_names(fd: &OwnedFd, ifname: &str, count: usize) -> io::Result<Vec<String>> {
    let cap = count * 2 + HEADROOM;
    // struct ethtool_gstrings: cmd, string_set, len, then len * 32 bytes.
    let mut buf = vec![0u32; 3 + cap * ETH_GSTRING_LEN / 4];
    buf[0] = ETHTOOL_GSTRINGS;
    buf[1] = ETH_SS_STATS;
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
        let count = match stats_count(&fd, ifname) {
            Ok(0) => return Ok(None),
            Ok(c) => c,
            Err(e) if not_supported(&e) => return Ok(None),
            Err(e) => return Err(e),
        };
        let names = stat_names(&fd, ifname, count)?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn struct_layouts_match_the_kernel() {
        assert_eq!(size_of::<IfReq>(), 40);
        assert_eq!(size_of::<DrvInfo>(), 196);
        assert_eq!(std::mem::offset_of!(DrvInfo, n_stats), 180);
        assert_eq!(std::mem::offset_of!(SsetInfo, data), 16);
    }

    #[test]
    fn bad_names_are_no_such_device() {
        for n in ["", "a-name-that-is-too-long", "a\0b"] {
            assert_eq!(
                ifname_bytes(n).unwrap_err().raw_os_error(),
                Some(libc::ENODEV)
            );
        }
        assert_eq!(&ifname_bytes("eth0").unwrap()[..5], b"eth0\0");
    }

    #[test]
    fn c_strings() {
        assert_eq!(c_string(b"veth\0\0\0"), "veth");
        assert_eq!(c_string(b"abc"), "abc");
    }
}
