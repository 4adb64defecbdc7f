//! Transmit Packet Steering through sysfs: `queues/tx-N/xps_cpus` (a hex
//! CPU mask per transmit queue: the CPUs whose sends use that queue), in
//! the network namespace this process sees. Kernel
//! `Documentation/networking/scaling.rst`: with several transmit queues,
//! map each CPU to one queue (a queue to the CPUs that take its completion
//! interrupts), so that a send and its completion stay on one core and no
//! two cores contend for one queue's lock; on a device with one transmit
//! queue XPS has no effect. Values are per-queue maps
//! ([`crate::cpu::cpulist::parse_map`]). Like RPS, no network manager has
//! a field for it: hlctl's own state file persists it and `ops::reapply`
//! writes it again.

use crate::cpu::cpulist;
use crate::nic::model::{Xps, XpsSet};
use crate::nic::netlink::NetlinkError;
use crate::nic::rps::{queue_dirs, text, write_one};

/// XPS of every transmit queue; `None` on a device with fewer than two or
/// without `xps_cpus`.
pub(crate) fn read(name: &str) -> Option<Xps> {
    let qs = queue_dirs(name, "tx-");
    if qs.len() < 2 {
        return None;
    }
    let sets = qs
        .iter()
        .map(|q| cpulist::parse_mask(&text(&q.join("xps_cpus"))?))
        .collect::<Option<Vec<_>>>()?;
    Some(Xps {
        cpus: cpulist::map_text(&sets),
        queues: qs.len() as u32,
    })
}

fn invalid(name: &str, why: String) -> NetlinkError {
    NetlinkError {
        op: "xps_cpus",
        ifname: Some(name.to_string()),
        errno: libc::EINVAL,
        extack: Some(why),
    }
}

/// Write the map `set` asks for: queue `i`'s CPUs to `tx-i/xps_cpus`
/// (`none`: every queue's to none).
pub(crate) fn write(name: &str, set: &XpsSet) -> Result<(), NetlinkError> {
    let Some(map) = &set.cpus else { return Ok(()) };
    let qs = queue_dirs(name, "tx-");
    let mut sets = cpulist::parse_map(map)
        .ok_or_else(|| invalid(name, format!("not a per-queue CPU map: {map}")))?;
    if sets.is_empty() {
        sets = vec![Default::default(); qs.len()];
    }
    if sets.len() != qs.len() {
        return Err(invalid(
            name,
            format!(
                "{map} names {} queues, the device has {} transmit queues",
                sets.len(),
                qs.len()
            ),
        ));
    }
    for (q, cpus) in qs.iter().zip(&sets) {
        write_one(name, &q.join("xps_cpus"), &cpulist::mask(cpus), "xps_cpus")?;
    }
    Ok(())
}
