//! A network device's queue and interrupt layout, from sysfs and procfs:
//! RPS (`rps_cpus`, `rps_flow_cnt`) per receive queue and XPS (`xps_cpus`)
//! per transmit queue, `net.core.rps_sock_flow_entries`, the device's NUMA
//! node and `local_cpulist`, each queue vector's IRQ and its affinity
//! (`smp_affinity_list`, `effective_affinity_list`), the physical cores,
//! and whether irqbalance runs (an owner of IRQ affinity: named, never fought).
//! `show` carries it (`queues` in the JSON, `Link.Describe()` on the bus)
//! and prints it as a block of its own (`cli::show`).

use std::collections::BTreeSet;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::interrupts::{self, queue_vectors};

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct RxQueue {
    pub(crate) index: u32,
    pub(crate) rps_cpus: Option<String>,
    pub(crate) rps_flow_cnt: Option<u64>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct TxQueue {
    pub(crate) index: u32,
    /// None where the kernel or the device has no XPS (single-queue devices).
    pub(crate) xps_cpus: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct VectorAffinity {
    pub(crate) irq: u32,
    pub(crate) name: String,
    pub(crate) smp_affinity_list: Option<String>,
    pub(crate) effective_affinity_list: Option<String>,
}

/// Receive Side Scaling as the driver holds it (ethtool netlink RSS_GET).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rss {
    /// The hash functions on (`toeplitz`, `xor`, `crc32`).
    pub(crate) hash_function: Option<String>,
    /// Per hash bucket, the receive queue it goes to (empty: the driver
    /// gives no table).
    pub(crate) indirection: Vec<u32>,
    /// The hash key, bytes as ethtool prints them (`6d:5a:…`).
    pub(crate) hash_key: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct QueueLayout {
    pub(crate) ifname: String,
    pub(crate) rx: Vec<RxQueue>,
    pub(crate) tx: Vec<TxQueue>,
    pub(crate) rps_sock_flow_entries: Option<u64>,
    pub(crate) numa_node: Option<i64>,
    pub(crate) local_cpulist: Option<String>,
    pub(crate) vectors: Vec<VectorAffinity>,
    /// Distinct (package, core) pairs of the CPUs (hyperthreads count once).
    pub(crate) physical_cores: Option<u32>,
    /// The pid of a running irqbalance.
    pub(crate) irqbalance_pid: Option<u32>,
    /// RSS (`None`: the driver has none, or it was not read).
    #[serde(default)]
    pub(crate) rss: Option<Rss>,
}

fn text(p: &Path) -> Option<String> {
    Some(std::fs::read_to_string(p).ok()?.trim().to_string())
}

/// `rx-0`, `rx-1` ... under `queues/`, by index.
fn queue_dirs(dev: &Path, prefix: &str) -> Vec<(u32, std::path::PathBuf)> {
    let Ok(d) = std::fs::read_dir(dev.join("queues")) else {
        return Vec::new();
    };
    let mut v: Vec<(u32, std::path::PathBuf)> = d
        .filter_map(|e| {
            let e = e.ok()?;
            let n = e.file_name().to_str()?.strip_prefix(prefix)?.parse().ok()?;
            Some((n, e.path()))
        })
        .collect();
    v.sort();
    v
}

/// What names the physical core of the CPU whose sysfs directory is `cpu`:
/// the CPUs sharing it (`core_cpus_list`, Linux 5.4+; `thread_siblings_list`
/// before), else its package and core id. `None` for an offline CPU.
fn core_of(cpu: &Path) -> Option<String> {
    if text(&cpu.join("online")).is_some_and(|o| o == "0") {
        return None;
    }
    let t = cpu.join("topology");
    text(&t.join("core_cpus_list"))
        .or_else(|| text(&t.join("thread_siblings_list")))
        .and_then(|l| crate::cpu::cpulist::canonical(&l))
        .or_else(|| {
            Some(format!(
                "package {} core {}",
                text(&t.join("physical_package_id"))?,
                text(&t.join("core_id"))?
            ))
        })
}

/// The physical cores of the online CPUs under `sys`: hyperthreads of one
/// core count once (the references advise no more queues than these).
pub(crate) fn physical_cores(sys: &Path) -> Option<u32> {
    let d = std::fs::read_dir(sys.join("devices/system/cpu")).ok()?;
    let cores: BTreeSet<String> = d
        .filter_map(|e| {
            let e = e.ok()?;
            let name = e.file_name().to_string_lossy().into_owned();
            name.strip_prefix("cpu")?.parse::<u32>().ok()?;
            core_of(&e.path())
        })
        .collect();
    (!cores.is_empty()).then_some(cores.len() as u32)
}

fn irqbalance(proc_: &Path) -> Option<u32> {
    std::fs::read_dir(proc_).ok()?.find_map(|e| {
        let e = e.ok()?;
        let pid: u32 = e.file_name().to_str()?.parse().ok()?;
        (text(&e.path().join("comm"))? == "irqbalance").then_some(pid)
    })
}

fn vectors(host: &Host, sys: &Path, proc_: &Path, ifname: &str) -> Vec<VectorAffinity> {
    let ids = super::device::ids_under(sys, ifname);
    queue_vectors(&host.interrupts, &ids)
        .into_iter()
        .filter_map(|(r, name)| {
            let irq = r.number()?;
            let dir = proc_.join("irq").join(irq.to_string());
            Some(VectorAffinity {
                irq,
                name: name.to_string(),
                smp_affinity_list: text(&dir.join("smp_affinity_list")),
                effective_affinity_list: text(&dir.join("effective_affinity_list")),
            })
        })
        .collect()
}

/// What every device's layout shares, read once for a whole `show`:
/// `/proc/interrupts`, `net.core.rps_sock_flow_entries`, the physical
/// cores and irqbalance (a scan of every process).
#[derive(Clone, Debug, Default)]
pub(crate) struct Host {
    interrupts: Vec<interrupts::IrqRow>,
    rps_sock_flow_entries: Option<u64>,
    physical_cores: Option<u32>,
    irqbalance_pid: Option<u32>,
}

/// [`Host`] under `sys` and `proc_` (`/sys`, `/proc`; a test's tree).
pub(crate) fn host_under(sys: &Path, proc_: &Path) -> Host {
    Host {
        interrupts: interrupts::parse(
            &std::fs::read_to_string(proc_.join("interrupts")).unwrap_or_default(),
        )
        .unwrap_or_default(),
        rps_sock_flow_entries: text(&proc_.join("sys/net/core/rps_sock_flow_entries"))
            .and_then(|t| t.parse().ok()),
        physical_cores: physical_cores(sys),
        irqbalance_pid: irqbalance(proc_),
    }
}

/// The physical cores of this host ([`physical_cores`]).
pub(crate) fn physical_cores_here() -> Option<u32> {
    physical_cores(Path::new("/sys"))
}

/// The pid of a running irqbalance on this host.
pub(crate) fn irqbalance_pid() -> Option<u32> {
    irqbalance(Path::new("/proc"))
}

pub(crate) fn host() -> Host {
    host_under(Path::new("/sys"), Path::new("/proc"))
}

/// The layout of `ifname` under `sys` and `proc_` (`/sys`, `/proc`; a
/// test's tree).
#[cfg(test)]
pub(crate) fn read_under(sys: &Path, proc_: &Path, ifname: &str) -> QueueLayout {
    device_under(&host_under(sys, proc_), sys, proc_, ifname)
}

/// The layout of `ifname` with the host's shared part `host`.
pub(crate) fn device_under(host: &Host, sys: &Path, proc_: &Path, ifname: &str) -> QueueLayout {
    let dev = sys.join("class/net").join(ifname);
    let rx = queue_dirs(&dev, "rx-")
        .into_iter()
        .map(|(index, p)| RxQueue {
            index,
            rps_cpus: text(&p.join("rps_cpus")),
            rps_flow_cnt: text(&p.join("rps_flow_cnt")).and_then(|t| t.parse().ok()),
        })
        .collect();
    let tx = queue_dirs(&dev, "tx-")
        .into_iter()
        .map(|(index, p)| TxQueue {
            index,
            xps_cpus: text(&p.join("xps_cpus")),
        })
        .collect();
    // A virtio NIC's NUMA node is its PCI parent's.
    let pci = |f: &str| {
        text(&dev.join("device").join(f)).or_else(|| text(&dev.join("device/..").join(f)))
    };
    QueueLayout {
        ifname: ifname.to_string(),
        rx,
        tx,
        rps_sock_flow_entries: host.rps_sock_flow_entries,
        numa_node: pci("numa_node").and_then(|t| t.parse().ok()),
        local_cpulist: pci("local_cpulist"),
        vectors: vectors(host, sys, proc_, ifname),
        physical_cores: host.physical_cores,
        irqbalance_pid: host.irqbalance_pid,
        rss: None,
    }
}

#[cfg(test)]
pub(crate) fn read(ifname: &str) -> QueueLayout {
    read_under(Path::new("/sys"), Path::new("/proc"), ifname)
}

/// The layout of `ifname` on this host, `host` read once for all devices.
pub(crate) fn read_with(host: &Host, ifname: &str) -> QueueLayout {
    device_under(host, Path::new("/sys"), Path::new("/proc"), ifname)
}

#[cfg(test)]
#[path = "layout_tests.rs"]
mod tests;
