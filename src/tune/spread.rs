//! The spreading candidates of a multi-queue device: its queue vectors'
//! interrupts spread over the cores when the baseline found them all on
//! one CPU (the doctor's `irqs-on-one-cpu`; never where irqbalance runs:
//! it owns their affinity, and the finding says so), and XPS (each core
//! sends on a queue of its own, kernel `scaling.rst`) when a core was
//! saturated during the baseline's upload on a device with several
//! transmit queues and no XPS.

use super::change::{Candidate, Change};
use crate::cpu::report::CoreReport;
use crate::doctor::Inputs;
use crate::doctor::cores::{SATURATED, affinity_spread, interrupts_on_one_cpu};
use crate::nic::model::{Interface, IrqAffinitySet, XpsSet};

/// The last per-core report of the baseline's upload and download.
fn reports(inp: &Inputs) -> [Option<&CoreReport>; 2] {
    let t = inp.peer.as_ref().and_then(|p| p.throughput.as_ref().ok());
    [
        t.and_then(|t| t.upload.last_cores()),
        t.and_then(|t| t.download.last_cores()),
    ]
}

/// The candidates for `i`, interrupts first.
pub(crate) fn candidates(inp: &Inputs, i: &Interface, notes: &mut Vec<String>) -> Vec<Candidate> {
    if i.stack.is_some() {
        return Vec::new();
    }
    let [up, down] = reports(inp);
    // The first direction whose interrupts all landed on one CPU.
    let affinity = [down, up]
        .into_iter()
        .flatten()
        .find(|r| interrupts_on_one_cpu(r).is_some())
        .and_then(|r| irq_affinity(inp, i, r, notes));
    affinity
        .into_iter()
        .chain(up.and_then(|r| xps(i, r)))
        .collect()
}

/// Every interrupt on one CPU: each queue's vectors to a core of their own.
fn irq_affinity(
    inp: &Inputs,
    i: &Interface,
    r: &CoreReport,
    notes: &mut Vec<String>,
) -> Option<Candidate> {
    let cpu = interrupts_on_one_cpu(r)?;
    let name = i.name.as_str();
    if let Some(pid) = inp.irqbalance_pid {
        notes.push(format!(
            "interrupt affinity: not tried, irqbalance (pid {pid}) owns {name}'s IRQs (all on CPU{cpu}); hlctl does not fight it"
        ));
        return None;
    }
    let Some(now) = &i.irq_affinity else {
        notes.push(format!(
            "interrupt affinity: not tried, {name}'s queue vectors' smp_affinity_list is not readable here"
        ));
        return None;
    };
    if now.vectors as usize != r.queue_vectors.len() {
        notes.push(format!(
            "interrupt affinity: not tried, {name} has {} queue vectors now, {} during the baseline",
            now.vectors,
            r.queue_vectors.len()
        ));
        return None;
    }
    let want = affinity_spread(r);
    if want == now.cpus {
        return None;
    }
    let mut change = Change::default();
    change.nic.irq_affinity = Some(IrqAffinitySet {
        cpus: Some(want.clone()),
    });
    Some(Candidate {
        id: "irq-affinity".into(),
        title: format!("queue interrupts spread over the cores ({want})"),
        reason: format!(
            "all {} of {name}'s queue vectors interrupted CPU{cpu} only (affinity {}): each queue's interrupts to a core of their own let the cores share the work",
            r.queue_vectors.len(),
            now.cpus
        ),
        change,
        probe_mtu: None,
    })
}

/// A saturated core during the upload, several transmit queues, no XPS:
/// each core to a transmit queue of its own.
fn xps(i: &Interface, r: &CoreReport) -> Option<Candidate> {
    let now = i.xps.as_ref()?;
    if now.cpus != crate::cpu::cpulist::NONE {
        return None;
    }
    let hot = r
        .cpus
        .iter()
        .filter(|c| c.busy_percent >= SATURATED)
        .max_by(|a, b| a.busy_percent.total_cmp(&b.busy_percent))?;
    let cpus: Vec<u32> = r.cpus.iter().map(|c| c.cpu).collect();
    let want =
        crate::cpu::cpulist::map_text(&crate::cpu::cpulist::spread(&cpus, now.queues as usize));
    let mut change = Change::default();
    change.nic.xps = Some(XpsSet {
        cpus: Some(want.clone()),
    });
    Some(Candidate {
        id: "xps".into(),
        title: format!("transmit packet steering ({want})"),
        reason: format!(
            "CPU{} was {:.0} % busy during the upload, and {} picks among its {} transmit queues by hash (no XPS): with each core on a queue of its own, a send and its completion stay on one core and no two cores contend for one queue",
            hot.cpu, hot.busy_percent, i.name, now.queues
        ),
        change,
        probe_mtu: None,
    })
}

#[cfg(test)]
#[path = "spread_tests.rs"]
mod tests;
