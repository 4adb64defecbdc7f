//! Where a transfer's CPU time went: per core the busy share and its split
//! (user, system, irq, softirq, steal), NET_RX/NET_TX softirqs, the backlog's
//! processed/dropped/squeezed counts, the device's queue-vector interrupts;
//! and this process's own share, apart.

use serde::{Deserialize, Serialize};

use super::interrupts::{DeviceIds, queue_vectors};
use super::snapshot::Snapshot;
use super::stat::CpuTimes;

/// One CPU over the transfer. Shares are percent of that CPU's time.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct CoreUse {
    pub(crate) cpu: u32,
    /// Everything but idle and iowait.
    pub(crate) busy_percent: f64,
    /// User and nice (guests' time included).
    pub(crate) user_percent: f64,
    pub(crate) system_percent: f64,
    pub(crate) irq_percent: f64,
    pub(crate) softirq_percent: f64,
    pub(crate) steal_percent: f64,
    pub(crate) net_rx: u64,
    pub(crate) net_tx: u64,
    /// `/proc/net/softnet_stat`: packets taken off the backlog, dropped
    /// because it was full, and times the budget ran out with work left.
    pub(crate) processed: u64,
    pub(crate) dropped: u64,
    pub(crate) time_squeeze: u64,
    /// Interrupts of the device's queue vectors this CPU took.
    pub(crate) device_interrupts: u64,
}

/// A queue vector of the device and its interrupts per CPU.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct VectorUse {
    pub(crate) irq: u32,
    pub(crate) name: String,
    /// (CPU, interrupts) for every CPU that took some.
    pub(crate) per_cpu: Vec<(u32, u64)>,
}

/// One thread of this process, in percent of one CPU.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct ThreadUse {
    pub(crate) tid: u32,
    pub(crate) name: String,
    pub(crate) percent: f64,
    pub(crate) last_cpu: Option<u32>,
}

/// This process (the benchmark): all its threads, and the busy ones.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct OwnUse {
    /// Percent of one CPU (200 = two CPUs' worth).
    pub(crate) percent: f64,
    /// Threads over 1 % of a CPU, the busiest first.
    pub(crate) threads: Vec<ThreadUse>,
}

/// The per-core picture of one transfer.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct CoreReport {
    pub(crate) seconds: f64,
    pub(crate) cpus: Vec<CoreUse>,
    /// The device the transfer went through (none: loopback or unknown).
    #[serde(default)]
    pub(crate) device: Option<String>,
    #[serde(default)]
    pub(crate) queue_vectors: Vec<VectorUse>,
    pub(crate) backlog_dropped: u64,
    pub(crate) time_squeeze: u64,
    #[serde(default)]
    pub(crate) own: Option<OwnUse>,
}

fn pct(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        (part as f64 * 1000.0 / whole as f64).round() / 10.0
    }
}

fn core(cpu: u32, d: &CpuTimes) -> CoreUse {
    let t = d.total();
    CoreUse {
        cpu,
        busy_percent: pct(t.saturating_sub(d.idle + d.iowait), t),
        user_percent: pct(d.user + d.nice, t),
        system_percent: pct(d.system, t),
        irq_percent: pct(d.irq, t),
        softirq_percent: pct(d.softirq, t),
        steal_percent: pct(d.steal, t),
        ..Default::default()
    }
}

fn cores(a: &Snapshot, b: &Snapshot) -> Vec<CoreUse> {
    let mut out = Vec::new();
    for (id, after) in &b.stat {
        let Some((_, before)) = a.stat.iter().find(|(i, _)| i == id) else {
            continue;
        };
        let mut c = core(*id, &after.since(before));
        if let (Some(x), Some(y)) = (
            a.softirqs.iter().find(|s| s.cpu == *id),
            b.softirqs.iter().find(|s| s.cpu == *id),
        ) {
            c.net_rx = y.net_rx.saturating_sub(x.net_rx);
            c.net_tx = y.net_tx.saturating_sub(x.net_tx);
        }
        out.push(c);
    }
    out
}

/// softnet deltas onto the cores: by the id column, or by row order on
/// kernels without it.
fn add_softnet(out: &mut [CoreUse], a: &Snapshot, b: &Snapshot) {
    for (n, y) in b.softnet.iter().enumerate() {
        let x = match y.cpu {
            Some(id) => a.softnet.iter().find(|r| r.cpu == Some(id)),
            None => a.softnet.get(n),
        };
        let Some(x) = x else { continue };
        let id = y.cpu.or_else(|| out.get(n).map(|c| c.cpu));
        if let Some(c) = out.iter_mut().find(|c| Some(c.cpu) == id) {
            c.processed = y.processed.saturating_sub(x.processed);
            c.dropped = y.dropped.saturating_sub(x.dropped);
            c.time_squeeze = y.time_squeeze.saturating_sub(x.time_squeeze);
        }
    }
}

fn vectors(a: &Snapshot, b: &Snapshot, dev: &DeviceIds, out: &mut [CoreUse]) -> Vec<VectorUse> {
    let mut v = Vec::new();
    for (row, name) in queue_vectors(&b.irqs, dev) {
        let before = a.irqs.iter().find(|r| r.irq == row.irq);
        let mut per_cpu = Vec::new();
        for &(cpu, n) in &row.counts {
            let was = before
                .and_then(|r| r.counts.iter().find(|c| c.0 == cpu))
                .map_or(n, |c| c.1);
            let d = n.saturating_sub(was);
            if d > 0 {
                per_cpu.push((cpu, d));
                if let Some(c) = out.iter_mut().find(|c| c.cpu == cpu) {
                    c.device_interrupts += d;
                }
            }
        }
        let irq = row.number().unwrap_or_default();
        v.push(VectorUse {
            irq,
            name: name.to_string(),
            per_cpu,
        });
    }
    v
}

fn own(a: &Snapshot, b: &Snapshot, secs: f64) -> Option<OwnUse> {
    if secs <= 0.0 {
        return None;
    }
    let hz = super::tasks::ticks_per_second();
    let p = |ticks: u64| (ticks as f64 / hz / secs * 1000.0).round() / 10.0;
    let (x, y) = (a.own.as_ref()?, b.own.as_ref()?);
    let mut threads: Vec<ThreadUse> = b
        .threads
        .iter()
        .filter_map(|t| {
            let was = a
                .threads
                .iter()
                .find(|w| w.id == t.id)
                .map_or(0, |w| w.utime + w.stime);
            let percent = p((t.utime + t.stime).saturating_sub(was));
            (percent >= 1.0).then(|| ThreadUse {
                tid: t.id,
                name: t.name.clone(),
                percent,
                last_cpu: t.processor,
            })
        })
        .collect();
    threads.sort_by(|l, r| r.percent.total_cmp(&l.percent));
    threads.truncate(8);
    let ticks = (y.utime + y.stime).saturating_sub(x.utime + x.stime);
    Some(OwnUse {
        percent: p(ticks),
        threads,
    })
}

/// The report of the time from `a` to `b`.
pub(crate) fn between(a: &Snapshot, b: &Snapshot, dev: Option<&DeviceIds>) -> CoreReport {
    let seconds = b.at.saturating_duration_since(a.at).as_secs_f64();
    let mut cpus = cores(a, b);
    add_softnet(&mut cpus, a, b);
    let queue_vectors = dev.map(|d| vectors(a, b, d, &mut cpus)).unwrap_or_default();
    CoreReport {
        seconds: (seconds * 1000.0).round() / 1000.0,
        backlog_dropped: cpus.iter().map(|c| c.dropped).sum(),
        time_squeeze: cpus.iter().map(|c| c.time_squeeze).sum(),
        device: dev.map(|d| d.ifname.clone()),
        queue_vectors,
        own: own(a, b, seconds),
        cpus,
    }
}

#[cfg(test)]
#[path = "report_tests.rs"]
mod tests;
