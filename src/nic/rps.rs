//! Receive Packet Steering through sysfs: `queues/rx-N/rps_cpus` (a hex CPU
//! mask) and `rps_flow_cnt` of every receive queue of a device, in the
//! network namespace this process sees (`ip netns exec` mounts that
//! namespace's sysfs; hlctld sees the host's). No network manager has a
//! field for it: hlctl's own state file persists it and `ops::reapply`
//! writes it again.

use std::path::{Path, PathBuf};

use crate::cpu::cpulist;
use crate::nic::model::{Rps, RpsSet};
use crate::nic::netlink::NetlinkError;

fn queues(name: &str) -> PathBuf {
    Path::new("/sys/class/net").join(name).join("queues")
}

/// The device's receive queue directories (`rx-0`, `rx-1` ...), by index.
fn rx_queues(name: &str) -> Vec<PathBuf> {
    queue_dirs(name, "rx-")
}

/// The device's queue directories starting with `prefix` (`rx-`, `tx-`), by index.
pub(super) fn queue_dirs(name: &str, prefix: &str) -> Vec<PathBuf> {
    let Ok(d) = std::fs::read_dir(queues(name)) else {
        return Vec::new();
    };
    let mut v: Vec<(u32, PathBuf)> = d
        .filter_map(|e| {
            let e = e.ok()?;
            let n = e.file_name().to_str()?.strip_prefix(prefix)?.parse().ok()?;
            Some((n, e.path()))
        })
        .collect();
    v.sort();
    v.into_iter().map(|(_, p)| p).collect()
}

/// How many transmit queues the device runs now (`tx-N` in sysfs): for a
/// tap, the queues its VM opened (0 when nothing holds it); `None` when
/// the device has no queue directory here.
pub(crate) fn tx_queue_count(name: &str) -> Option<u32> {
    let n = queue_dirs(name, "tx-").len();
    (queues(name).is_dir()).then_some(n as u32)
}

pub(super) fn text(p: &Path) -> Option<String> {
    Some(std::fs::read_to_string(p).ok()?.trim().to_string())
}

/// RPS as rx-0 holds it; `None` when the device or kernel has none.
pub(crate) fn read(name: &str) -> Option<Rps> {
    let q = rx_queues(name).into_iter().next()?;
    let cpus = cpulist::parse_mask(&text(&q.join("rps_cpus"))?)?;
    Some(Rps {
        cpus: cpulist::list(&cpus),
        flow_cnt: text(&q.join("rps_flow_cnt")).and_then(|t| t.parse().ok()),
    })
}

pub(super) fn write_one(
    name: &str,
    file: &Path,
    value: &str,
    op: &'static str,
) -> Result<(), NetlinkError> {
    std::fs::write(file, value).map_err(|e| NetlinkError {
        op,
        ifname: Some(name.to_string()),
        errno: e.raw_os_error().unwrap_or(libc::EIO),
        extack: Some(format!("writing {value} to {}", file.display())),
    })
}

/// Write the values `set` asks for to every receive queue of `name`.
pub(crate) fn write(name: &str, set: &RpsSet) -> Result<(), NetlinkError> {
    let mask = match &set.cpus {
        Some(l) => Some(cpulist::mask(&cpulist::parse_list(l).ok_or_else(|| {
            NetlinkError {
                op: "rps_cpus",
                ifname: Some(name.to_string()),
                errno: libc::EINVAL,
                extack: Some(format!("not a CPU list: {l}")),
            }
        })?)),
        None => None,
    };
    for q in rx_queues(name) {
        if let Some(m) = &mask {
            write_one(name, &q.join("rps_cpus"), m, "rps_cpus")?;
        }
        if let Some(n) = set.flow_cnt {
            write_one(
                name,
                &q.join("rps_flow_cnt"),
                &n.to_string(),
                "rps_flow_cnt",
            )?;
        }
    }
    Ok(())
}
