//! TCP's memory limit for the whole machine (`net.ipv4.tcp_mem`, in pages):
//! once every TCP socket together holds more than its second value, the
//! kernel enters memory pressure and, until use falls below the first value,
//! clamps every socket's receive window to four segments and stops growing
//! buffers. A single connection whose buffer maximum lies above that level
//! can throttle all TCP on the host: a bulk sender with a 64 MiB send buffer
//! on a 768 MB machine (pressure at 41 MB) fell from ~560 Mbit/s to 2 Mbit/s
//! within its run (`TcpExtTCPMemoryPressures`, tests/vm_tune.rs).
//!
//! The key is global: a network namespace other than the host's has no such
//! file, and then the kernel's own default is taken from the memory size
//! (`tcp_init_mem`: a sixteenth of the memory is the pressure level).

use std::path::Path;

use serde::{Deserialize, Serialize};

/// The level at which TCP enters memory pressure, in bytes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct TcpMemory {
    pub(crate) pressure_bytes: u64,
    /// Where the figure comes from: `net.ipv4.tcp_mem`, or the kernel's
    /// default for this machine's memory when that key is not visible here.
    pub(crate) source: String,
}

pub(crate) const KEY: &str = "net.ipv4.tcp_mem";

/// The pressure level as `proc_sys` shows it, else the kernel's default
/// for `/proc/meminfo`'s `MemTotal`; `None` when neither can be read.
pub(crate) fn read(proc_sys: &Path) -> Option<TcpMemory> {
    let page = page_size();
    if let Ok(Some(v)) = super::procfs::read(proc_sys, KEY) {
        return pressure_of(&v, page).map(|b| TcpMemory {
            pressure_bytes: b,
            source: format!("{KEY} = {v}"),
        });
    }
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    default_pressure(&text).map(|b| TcpMemory {
        pressure_bytes: b,
        source: format!(
            "the kernel's default for this machine's memory ({KEY} is not visible in this network namespace)"
        ),
    })
}

fn page_size() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    u64::try_from(n).ok().filter(|&n| n > 0).unwrap_or(4096)
}

/// The second of `tcp_mem`'s three page counts, in bytes.
fn pressure_of(value: &str, page: u64) -> Option<u64> {
    let pages: u64 = value.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages.saturating_mul(page))
}

/// The kernel's default pressure level: a sixteenth of `MemTotal`.
fn default_pressure(meminfo: &str) -> Option<u64> {
    let kib: u64 = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    Some(kib * 1024 / 16)
}

/// The largest buffer maximum that keeps one connection's buffers clear of
/// the pressure level: half of it (a send and a receive buffer at their
/// maximum together stay below it), as a power of two.
pub(crate) fn buffer_bound(pressure_bytes: u64) -> u64 {
    let half = (pressure_bytes / 2).max(1);
    1 << (63 - half.leading_zeros())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pressure_level_is_the_second_page_count() {
        // A 768 MB qemu guest's values (Debian 12's kernel).
        assert_eq!(pressure_of("7596 10128 15192", 4096), Some(41_484_288));
        assert_eq!(pressure_of("7596", 4096), None);
        assert_eq!(buffer_bound(41_484_288), 16 << 20);
    }

    #[test]
    fn without_the_key_the_kernels_default_for_the_memory() {
        let m = "MemTotal:         725696 kB\nMemFree:          625120 kB\n";
        assert_eq!(default_pressure(m), Some(725_696 * 1024 / 16));
        assert_eq!(buffer_bound(725_696 * 1024 / 16), 16 << 20);
        assert_eq!(default_pressure("MemFree: 1 kB\n"), None);
    }

    #[test]
    fn the_bound_is_a_power_of_two_at_most_half_the_level() {
        assert_eq!(buffer_bound(64 << 20), 32 << 20);
        assert_eq!(buffer_bound((64 << 20) - 1), 16 << 20);
        assert_eq!(buffer_bound(0), 1);
    }

    #[test]
    fn this_machine_has_a_level() {
        let m = read(Path::new("/proc/sys")).expect("tcp_mem or /proc/meminfo");
        assert!(m.pressure_bytes > 0, "{m:?}");
    }
}
