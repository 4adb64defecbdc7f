//! The CPUs each of a device's queue vectors may interrupt
//! (`/proc/irq/N/smp_affinity_list`), as a per-queue map in the order
//! `/proc/interrupts` lists the vectors ([`crate::cpu::interrupts::queue_vectors`]):
//! `0/1/0/1` for a virtio NIC's input.0, output.0, input.1, output.1.
//! IRQ affinity is the machine's, not a network namespace's; irqbalance
//! owns it where it runs (the tune then tries nothing). No network manager
//! has a field for it: hlctl's own state file persists it and
//! `ops::reapply` writes it again (by vector position, so a driver reload
//! that renumbers the IRQs keeps the map).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::cpu::cpulist;
use crate::nic::model::{IrqAffinity, IrqAffinitySet};
use crate::nic::netlink::NetlinkError;
use crate::nic::rps::{text, write_one};

/// The device's queue vectors: (IRQ, the driver's name for it), in IRQ order.
pub(crate) fn vectors(name: &str) -> Vec<(u32, String)> {
    let rows = std::fs::read_to_string("/proc/interrupts")
        .ok()
        .and_then(|t| crate::cpu::interrupts::parse(&t).ok())
        .unwrap_or_default();
    let ids = crate::cpu::device::ids(name);
    crate::cpu::interrupts::queue_vectors(&rows, &ids)
        .into_iter()
        .filter_map(|(r, a)| Some((r.number()?, a.to_string())))
        .collect()
}

fn list_file(irq: u32) -> PathBuf {
    Path::new("/proc/irq")
        .join(irq.to_string())
        .join("smp_affinity_list")
}

/// The affinity of every queue vector; `None` for a device with fewer than
/// two (nothing to spread).
pub(crate) fn read(name: &str) -> Option<IrqAffinity> {
    // A virtual device (veth, bridge) has no interrupts: no need to read
    // /proc/interrupts for it on every read of the link.
    if !Path::new("/sys/class/net")
        .join(name)
        .join("device")
        .exists()
    {
        return None;
    }
    let v = vectors(name);
    if v.len() < 2 {
        return None;
    }
    let sets = v
        .iter()
        .map(|(irq, _)| cpulist::parse_list(&text(&list_file(*irq))?))
        .collect::<Option<Vec<BTreeSet<u32>>>>()?;
    Some(IrqAffinity {
        cpus: cpulist::map_text(&sets),
        vectors: v.len() as u32,
    })
}

fn invalid(name: &str, why: String) -> NetlinkError {
    NetlinkError {
        op: "smp_affinity_list",
        ifname: Some(name.to_string()),
        errno: libc::EINVAL,
        extack: Some(why),
    }
}

/// Write the map `set` asks for, vector by vector; every vector needs a CPU
/// (an interrupt must go somewhere), checked before anything is written.
pub(crate) fn write(name: &str, set: &IrqAffinitySet) -> Result<(), NetlinkError> {
    let Some(map) = &set.cpus else { return Ok(()) };
    let v = vectors(name);
    let sets = cpulist::parse_map(map)
        .ok_or_else(|| invalid(name, format!("not a per-vector CPU map: {map}")))?;
    if sets.len() != v.len() || sets.iter().any(BTreeSet::is_empty) {
        return Err(invalid(
            name,
            format!(
                "{map}: give one CPU list (not none) for each of the device's {} queue vectors",
                v.len()
            ),
        ));
    }
    for ((irq, _), cpus) in v.iter().zip(&sets) {
        write_one(
            name,
            &list_file(*irq),
            &cpulist::list(cpus),
            "smp_affinity_list",
        )?;
    }
    Ok(())
}
