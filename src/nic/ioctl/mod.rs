//! The SIOCETHTOOL ioctl: what netlink does not carry (`ethtool -i`,
//! `ethtool -S`), and on kernels without the ethtool generic-netlink family
//! (before 5.6) everything the netlink path reads and sets: link settings,
//! rings, pause, features, channels and coalescing. Each area is one file and
//! yields the same model types ([`crate::nic::model`]) as its netlink twin.
//!
//! Requests go through an AF_INET datagram socket (AF_NETLINK when IPv4 is
//! unavailable) created in the calling thread's network namespace.
//!
//! - `drvinfo`, `stats`: ETHTOOL_GDRVINFO, ETHTOOL_GSTATS;
//! - `strings`: GSSET_INFO + GSTRINGS for any string set;
//! - `rings`, `pause`, `channels`, `coalesce`: fixed-size GET/SET pairs;
//! - `features`: GFEATURES/SFEATURES by ETH_SS_FEATURES name;
//! - `link`, `link_modes`: GLINKSETTINGS/SLINKSETTINGS (GSET on kernels before 4.6), GLINK.

pub(crate) mod channels;
pub(crate) mod coalesce;
mod drvinfo;
pub(crate) mod error;
pub(crate) mod features;
pub(crate) mod link;
pub(crate) mod link_modes;
pub(crate) mod pause;
pub(crate) mod rings;
pub(crate) mod rss;
mod stats;
pub(crate) mod strings;

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

pub use drvinfo::{DriverInfo, driver_info};
pub(crate) use error::IoctlError;
pub use stats::driver_stats;

const IFNAMSIZ: usize = 16;

/// `struct ifreq` with the `ifr_data` member of its union.
#[repr(C)]
struct IfReq {
    name: [u8; IFNAMSIZ],
    data: *mut libc::c_void,
    _rest: [u8; 16],
}

/// A `#[repr(C)]` ethtool command struct that is the whole ioctl argument:
/// plain integers only, all-zero valid, nothing written past its end.
///
/// # Safety
/// Implement only for structs laid out as the kernel's, whose size the
/// kernel neither reads nor writes beyond for their command.
pub(crate) unsafe trait Command: Sized {
    /// A zeroed struct with `cmd` set.
    fn with_cmd(cmd: u32) -> Self {
        // SAFETY: the implementor vouches all-zero is a valid value.
        let mut v: Self = unsafe { std::mem::zeroed() };
        // SAFETY: every ethtool command struct starts with its u32 `cmd`.
        unsafe { (&mut v as *mut Self).cast::<u32>().write(cmd) };
        v
    }
}

pub(crate) fn ctl_socket() -> io::Result<OwnedFd> {
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

/// Run a fixed-size command: the kernel reads and writes `v` only.
pub(crate) fn call<T: Command>(fd: &OwnedFd, ifname: &str, v: &mut T) -> io::Result<()> {
    // SAFETY: `T: Command` is a whole kernel struct for its command.
    unsafe { ethtool_ioctl(fd, ifname, (v as *mut T).cast()) }
}

/// A GET of a fixed-size struct on a fresh socket. `Ok(None)` when the
/// driver does not support it (EOPNOTSUPP), as the netlink path answers.
pub(crate) fn get<T: Command>(
    ifname: &str,
    op: &'static str,
    cmd: u32,
) -> Result<Option<T>, IoctlError> {
    let err = |e| IoctlError::new(ifname, op, e);
    let fd = ctl_socket().map_err(err)?;
    let mut v = T::with_cmd(cmd);
    match call(&fd, ifname, &mut v) {
        Ok(()) => Ok(Some(v)),
        Err(e) if not_supported(&e) => Ok(None),
        Err(e) => Err(err(e)),
    }
}

/// Read `T` with `get_cmd`, let `change` edit it, write it with `set_cmd`:
/// the ioctl SETs replace the whole struct, so fields not asked for keep
/// their current value.
pub(crate) fn read_modify_write<T: Command>(
    ifname: &str,
    ops: (&'static str, &'static str),
    cmds: (u32, u32),
    change: impl FnOnce(&mut T),
) -> Result<(), IoctlError> {
    let fd = ctl_socket().map_err(|e| IoctlError::new(ifname, ops.0, e))?;
    let mut v = T::with_cmd(cmds.0);
    call(&fd, ifname, &mut v).map_err(|e| IoctlError::new(ifname, ops.0, e))?;
    change(&mut v);
    // SAFETY: every ethtool command struct starts with its u32 `cmd`.
    unsafe { (&mut v as *mut T).cast::<u32>().write(cmds.1) };
    call(&fd, ifname, &mut v).map_err(|e| IoctlError::new(ifname, ops.1, e))
}

fn c_string(b: &[u8]) -> String {
    let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    String::from_utf8_lossy(&b[..end]).into_owned()
}

fn not_supported(e: &io::Error) -> bool {
    e.raw_os_error() == Some(libc::EOPNOTSUPP)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn struct_layouts_match_the_kernel() {
        assert_eq!(size_of::<IfReq>(), 40);
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

    #[test]
    fn a_missing_device_is_enodev_with_its_name() {
        let e =
            get::<rings::RingParam>("hlctl-none0", "ETHTOOL_GRINGPARAM", rings::GET).unwrap_err();
        assert_eq!(e.errno(), libc::ENODEV);
        assert!(e.to_string().contains("hlctl-none0"), "{e}");
    }
}
