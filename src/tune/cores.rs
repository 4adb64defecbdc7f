//! The candidates for a host where a core, not the wire, is the limit
//! (`docs/cpu-bound.md`), drawn from the doctor's per-core report of its
//! own transfers ([`crate::doctor::cores`]): when one core did the receive
//! work of the device, more channels where it has spare ones, else RPS;
//! then interrupt coalescing.

use super::change::{Candidate, Change};
use super::runs::Pair;
use crate::cpu::report::CoreReport;
use crate::doctor::cores::{
    MoreChannels, channel_cores, more_channels, queue_count, receive_hot_core, rps_cpus,
};
use crate::doctor::inputs::Throughput;
use crate::doctor::{Finding, Inputs};
use crate::nic::model::{ChannelsSet, CoalesceSet, Interface, RpsSet};

/// rx-usecs below this is raised to it: at most 20,000 interrupts a second
/// per queue, the default of Intel's 10/40/100 GbE drivers (ixgbe, i40e,
/// ice), and at most 50 µs more latency per packet.
const RX_USECS: u32 = 50;

/// Drivers whose rx-usecs 1 to 4 name an interrupt throttling mode of their
/// own (e1000e: 1 dynamic, 3 dynamic conservative, 4 simplified balancing;
/// igb and igc 1 and 3; ixgbe 1 adaptive), not microseconds.
const ITR_MODE_DRIVERS: &[&str] = &["e1000", "e1000e", "igb", "igbvf", "igc", "ixgbe", "ixgbevf"];

/// The doctor's inputs with the tune's baseline as their transfers: the
/// tuner measures throughput itself, so the per-core reports of its
/// baseline runs are what the doctor's cores checks and the plan read.
pub(crate) fn with_baseline(inputs: &Inputs, baseline: &Pair, method: String) -> Inputs {
    let mut inp = inputs.clone();
    if let Some(p) = &mut inp.peer {
        p.throughput = Ok(Throughput {
            upload: baseline.0.clone(),
            download: baseline.1.clone(),
            method,
        });
    }
    inp
}

/// The doctor's findings on the cores during the baseline.
pub(crate) fn findings(inp: &Inputs) -> Vec<Finding> {
    let mut out = crate::doctor::finding::Outcome::default();
    crate::doctor::cores::check(inp, &mut out);
    out.findings
}

/// The core that did the download's receive work of the device alone
/// (`core-one-does-the-work`), with the report it was seen in and the
/// physical cores more queues can use.
struct HotCore<'a> {
    cpu: u32,
    report: &'a CoreReport,
    channel_cores: u32,
}

impl HotCore<'_> {
    /// The CPUs the report sampled (RPS may use every one).
    fn cores(&self) -> u32 {
        self.report.cpus.len() as u32
    }
}

/// The candidates where one core did the download's receive work of `i`,
/// in the order they are tried: more channels when the device has spare
/// ones, else RPS; then interrupt coalescing. The plan is drawn once, from
/// the baseline: RPS is for fewer queues than cores, so it is not judged on
/// queues that a kept `channels` changes (the next tune judges it then).
pub(crate) fn candidates(inp: &Inputs, i: &Interface, notes: &mut Vec<String>) -> Vec<Candidate> {
    let Some((cpu, report)) = receive_hot_core(inp) else {
        return Vec::new();
    };
    let hot = HotCore {
        cpu,
        report,
        channel_cores: channel_cores(inp, report),
    };
    let name = i.name.as_str();
    if i.stack.is_some() {
        notes.push(format!(
            "channels, RPS and coalescing: not tried, {name} is part of a bridge or bond; set them on the port that receives (hlctl set PORT channels combined N, rps cpus LIST, coalesce adaptive-rx on)"
        ));
        return Vec::new();
    }
    let spread = match channels(&hot, i) {
        Some(c) => {
            if rps(&hot, i, &mut Vec::new()).is_some() {
                notes.push(format!(
                    "RPS: not tried in this tune, {name}'s channels are tried first (RPS is for fewer queues than cores, and this plan was drawn before the channels change); if they are reverted, the next tune tries RPS"
                ));
            }
            Some(c)
        }
        None => rps(&hot, i, notes),
    };
    spread
        .into_iter()
        .chain(coalescing(&hot, i, notes))
        .collect()
}

/// More queues, up to the smaller of the device's maximum and the cores.
fn channels(hot: &HotCore<'_>, i: &Interface) -> Option<Candidate> {
    let m = more_channels(i.channels.as_ref(), hot.channel_cores)?;
    let MoreChannels {
        kind,
        now,
        max,
        want,
    } = m;
    let set = if kind == "combined" {
        ChannelsSet {
            combined: Some(want),
            ..Default::default()
        }
    } else {
        ChannelsSet {
            rx: Some(want),
            ..Default::default()
        }
    };
    let mut change = Change::default();
    change.nic.channels = Some(set);
    Some(Candidate {
        id: "channels".into(),
        title: format!("{kind} channels to {want}"),
        reason: format!(
            "CPU{} did the receive work of {} alone on {kind} {now} of max {max} channels for {} cores: each queue has its interrupt, so more queues let the other cores share the work (one flow still hashes to one queue)",
            hot.cpu, i.name, hot.channel_cores
        ),
        change,
        probe_mtu: None,
    })
}

/// RPS over the other cores, on a device with fewer receive queues than cores.
fn rps(hot: &HotCore<'_>, i: &Interface, notes: &mut Vec<String>) -> Option<Candidate> {
    let name = i.name.as_str();
    let Some(now) = &i.rps else {
        notes.push(format!("RPS: not tried, {name} has no rps_cpus in sysfs"));
        return None;
    };
    let cores = hot.cores();
    let queues = queue_count(i.channels.as_ref());
    if queues >= cores {
        return None;
    }
    let want = rps_cpus(hot.cpu, hot.report);
    if want == now.cpus || want == crate::cpu::cpulist::NONE {
        return None;
    }
    let mut change = Change::default();
    change.nic.rps = Some(RpsSet {
        cpus: Some(want.clone()),
        flow_cnt: None,
    });
    Some(Candidate {
        id: "rps".into(),
        title: format!("receive packet steering to CPUs {want}"),
        reason: format!(
            "CPU{} did the receive work of {name} alone ({queues} queue{} for {cores} cores, RPS {}): the other cores take its packets' protocol work",
            hot.cpu,
            if queues == 1 { "" } else { "s" },
            now.cpus
        ),
        change,
        probe_mtu: None,
    })
}

/// Interrupt coalescing, when the saturated core took an interrupt too
/// often: adaptive-rx on where the driver has it and it is off, else
/// rx-usecs below [`RX_USECS`] raised to it.
fn coalescing(hot: &HotCore<'_>, i: &Interface, notes: &mut Vec<String>) -> Option<Candidate> {
    let name = i.name.as_str();
    let Some(co) = &i.coalesce else {
        notes.push(format!(
            "coalescing: not tried, {name}'s driver reports no interrupt coalescing"
        ));
        return None;
    };
    let saturated = format!("CPU{} was saturated doing {name}'s receive work", hot.cpu);
    let (set, title, reason) = match (co.adaptive_rx, co.rx_usecs) {
        (Some(true), _) => return None,
        (Some(false), _) => (
            CoalesceSet {
                adaptive_rx: Some(true),
                ..Default::default()
            },
            "adaptive receive interrupt coalescing on".to_string(),
            format!(
                "{saturated} with adaptive-rx off: the driver then lengthens the interrupt interval under load, so each interrupt takes more packets"
            ),
        ),
        (None, Some(u)) if (1..=4).contains(&u) && own_itr_modes(i) => {
            notes.push(format!(
                "coalescing: not tried, {name}'s rx-usecs {u} is its driver's own adaptive interrupt throttling mode, not a fixed interval to raise"
            ));
            return None;
        }
        (None, Some(u)) if u < RX_USECS => (
            CoalesceSet {
                rx_usecs: Some(RX_USECS),
                ..Default::default()
            },
            format!("receive interrupt coalescing to {RX_USECS} µs"),
            format!(
                "{saturated} at rx-usecs {u}: {RX_USECS} µs lets each interrupt take the packets of up to {RX_USECS} µs (at most 20,000 interrupts a second per queue)"
            ),
        ),
        (None, Some(_)) => return None,
        (None, None) => {
            notes.push(format!(
                "coalescing: not tried, {name} reports neither adaptive-rx nor rx-usecs (its driver has neither, or they read as 0 through the ioctl of kernels before 5.6)"
            ));
            return None;
        }
    };
    let mut change = Change::default();
    change.nic.coalesce = Some(set);
    Some(Candidate {
        id: "coalescing".into(),
        title,
        reason,
        change,
        probe_mtu: None,
    })
}

/// Whether `i`'s driver reads rx-usecs 1 to 4 as modes ([`ITR_MODE_DRIVERS`]).
fn own_itr_modes(i: &Interface) -> bool {
    i.driver
        .as_deref()
        .is_some_and(|d| ITR_MODE_DRIVERS.contains(&d))
}

#[cfg(test)]
#[path = "cores_tests.rs"]
mod tests;
