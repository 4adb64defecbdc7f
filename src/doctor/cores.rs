//! Where the doctor's own transfers put their work on this host's cores
//! (`crate::cpu::report`, sampled around each run): one core doing the
//! receive (or send) work while the others idle, with the fix that fits the
//! device (more channels when it has them, RPS when it has one queue); every
//! interrupt of a multi-queue device on one CPU; backlog drops and budget
//! squeezes; steal time in a VM, where no setting here helps.

use super::finding::{Finding, Outcome, Severity};
use super::inputs::Inputs;
use crate::cpu::report::{CoreReport, CoreUse};
use crate::nic::model::Channels;
use crate::path::throughput::Direction;

/// A core this busy (percent) does all it can.
pub(crate) const SATURATED: f64 = 85.0;
/// ... while no other core spent more than this in interrupts, softirqs
/// and steal: the time the network work would compete with there. Ordinary
/// processes do not count: softirqs (RPS's backlog work among them)
/// preempt them, so a core busy with processes still has room for it.
const IDLE_OTHERS: f64 = 60.0;
/// ... and it took this share of the direction's network softirqs.
const MOST_OF_THE_WORK: f64 = 0.8;
/// ... of at least this many of the direction's network softirqs (or, for a
/// download, packets processed) a second:
/// a transfer's receive raises thousands (a veth download on this 2-core
/// machine ~58,000), while NET_TX runs only when a qdisc is rescheduled
/// (drivers free sent packets in their NET_RX poll; a veth upload raised
/// none in 3 s), so a share of three NET_TX is no evidence of where the
/// send work went. Low, for slow links and emulated NICs.
const MIN_SOFTIRQS_PER_SECOND: f64 = 100.0;
/// Budget squeezes per second worth a finding (with a saturated core).
const SQUEEZES_PER_SECOND: f64 = 10.0;
/// Steal time (percent of a CPU) that says the hypervisor is overcommitted.
const STEAL: f64 = 10.0;

/// The one core that did a direction's network work while the others had room.
struct HotCore<'a> {
    core: &'a CoreUse,
    /// Its share of the direction's NET_RX (download) or NET_TX (upload).
    share: f64,
    others_max: f64,
    /// The most another core spent in interrupts, softirqs and steal.
    others_taken: f64,
    /// What the share counts.
    counted: Measure,
}

/// What a core spent where the network work would compete: interrupts,
/// softirqs and steal.
fn taken(c: &CoreUse) -> f64 {
    c.irq_percent + c.softirq_percent + c.steal_percent
}

/// A direction's network work on one core, counted as `measure` counts it.
#[derive(Clone, Copy)]
enum Measure {
    /// Packets the core took through the receive path
    /// (`softnet_stat`'s processed): where the receive work was done,
    /// whether a NIC's interrupt or RPS brought it there.
    Processed,
    /// NET_RX or NET_TX softirqs raised. A softirq counts alike whether it
    /// received a thousand packets or only sent RPS's IPIs to another
    /// core, so it is the measure only where `processed` is not sampled.
    Softirqs,
}

impl Measure {
    fn words(self, dir: Direction) -> &'static str {
        match (self, dir) {
            (Measure::Processed, _) => "packets each core processed (softnet_stat)",
            (Measure::Softirqs, Direction::Download) => "NET_RX softirqs",
            (Measure::Softirqs, Direction::Upload) => "NET_TX softirqs",
        }
    }
}

fn work_done(c: &CoreUse, dir: Direction, m: Measure) -> u64 {
    match (dir, m) {
        (Direction::Download, Measure::Processed) => c.processed,
        (Direction::Download, Measure::Softirqs) => c.net_rx,
        (Direction::Upload, _) => c.net_tx,
    }
}

/// How a direction's work is counted in `r`: a download by the packets
/// each core processed when the report has them.
fn measure(r: &CoreReport, dir: Direction) -> Measure {
    let processed: u64 = r.cpus.iter().map(|c| c.processed).sum();
    if dir == Direction::Download && processed > 0 {
        Measure::Processed
    } else {
        Measure::Softirqs
    }
}

fn hot_core(r: &CoreReport, dir: Direction) -> Option<HotCore<'_>> {
    if r.cpus.len() < 2 {
        return None;
    }
    // The core that did the most of the work (not the busiest: another
    // core may be busy with something else).
    let m = measure(r, dir);
    let core = r.cpus.iter().max_by_key(|c| work_done(c, dir, m))?;
    let total: u64 = r.cpus.iter().map(|c| work_done(c, dir, m)).sum();
    if (total as f64) < MIN_SOFTIRQS_PER_SECOND * r.seconds {
        return None;
    }
    let share = if total == 0 {
        0.0
    } else {
        work_done(core, dir, m) as f64 / total as f64
    };
    let others = || r.cpus.iter().filter(|c| c.cpu != core.cpu);
    let others_max = others().map(|c| c.busy_percent).fold(0.0, f64::max);
    let others_taken = others().map(taken).fold(0.0, f64::max);
    (core.busy_percent >= SATURATED && others_taken < IDLE_OTHERS && share >= MOST_OF_THE_WORK)
        .then_some(HotCore {
            core,
            share,
            others_max,
            others_taken,
            counted: m,
        })
}

/// The channel kind a driver counts its queues in, its current count and
/// its maximum: combined when it has those, else rx.
fn queues(ch: &Channels) -> Option<(&'static str, u32, u32)> {
    match (ch.combined, ch.combined_max, ch.rx, ch.rx_max) {
        (Some(n), Some(max), _, _) if max > 0 => Some(("combined", n, max)),
        (_, _, Some(n), Some(max)) if max > 0 => Some(("rx", n, max)),
        _ => None,
    }
}

/// More queues for a device whose receive (or send) work one core did: the
/// channel kind it counts its queues in, the count now, its maximum and
/// the count wanted, the smaller of its maximum and the cores, when the
/// count now is below that. One rule for the doctor's fix and the tune's
/// `channels` candidate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct MoreChannels {
    pub(crate) kind: &'static str,
    pub(crate) now: u32,
    pub(crate) max: u32,
    pub(crate) want: u32,
}

pub(crate) fn more_channels(ch: Option<&Channels>, cores: u32) -> Option<MoreChannels> {
    let (kind, now, max) = ch.and_then(queues)?;
    let want = max.min(cores);
    (now < want).then_some(MoreChannels {
        kind,
        now,
        max,
        want,
    })
}

/// The cores more queues can use: the CPUs the report sampled, but no more
/// than the physical cores (hyperthreads of one core share its execution
/// units; the references advise no more queues than physical cores).
pub(crate) fn channel_cores(inp: &Inputs, r: &CoreReport) -> u32 {
    let cpus = r.cpus.len() as u32;
    inp.physical_cores.map_or(cpus, |p| cpus.min(p.max(1)))
}

/// The CPUs RPS should hand a device's receive work to when `hot` did it
/// all: every other core of the report (the hot one keeps the interrupts
/// and the driver's poll; a single flow hashes to one CPU of the set, so the
/// hot one is left out of it), as a CPU list.
pub(crate) fn rps_cpus(hot: u32, r: &CoreReport) -> String {
    let others = r.cpus.iter().map(|c| c.cpu).filter(|c| *c != hot).collect();
    crate::cpu::cpulist::list(&others)
}

/// The core that did the download's receive work of the peer's interface
/// while the others had room for it (the `core-one-does-the-work` rule), with the
/// report it was seen in.
pub(crate) fn receive_hot_core(inp: &Inputs) -> Option<(u32, &CoreReport)> {
    let r = inp
        .peer
        .as_ref()?
        .throughput
        .as_ref()
        .ok()?
        .download
        .last_cores()?;
    hot_core(r, Direction::Download).map(|h| (h.core.cpu, r))
}

/// The queue count of a device's channels ([`queues`]), 1 when it reports none.
pub(crate) fn queue_count(ch: Option<&Channels>) -> u32 {
    ch.and_then(queues).map_or(1, |(_, now, _)| now.max(1))
}

fn work(dir: Direction) -> &'static str {
    match dir {
        Direction::Download => "receive",
        Direction::Upload => "send",
    }
}

fn one_core_finding(
    inp: &Inputs,
    iface: &str,
    dir: Direction,
    hot: &HotCore<'_>,
    r: &CoreReport,
    ch: Option<&Channels>,
) -> Finding {
    let cpus = r.cpus.len() as u32;
    let cores = channel_cores(inp, r);
    let title = format!(
        "CPU{} did {:.0} % of {iface}'s {} work at {:.0} % busy while the other cores had room for it",
        hot.core.cpu,
        hot.share * 100.0,
        work(dir),
        hot.core.busy_percent
    );
    let f = Finding::new(
        "core-one-does-the-work",
        Severity::Warning,
        Some(iface),
        title,
    )
    .evidence("direction", dir)
    .evidence("work counted as", hot.counted.words(dir))
    .evidence(
        &format!("CPU{} busy", hot.core.cpu),
        format!("{:.0} %", hot.core.busy_percent),
    )
    .evidence(
        &format!("CPU{} softirq", hot.core.cpu),
        format!("{:.0} %", hot.core.softirq_percent),
    )
    .evidence("busiest other core", format!("{:.0} %", hot.others_max))
    .evidence(
        "most another core spent in irq, softirq and steal",
        format!("{:.0} %", hot.others_taken),
    )
    .evidence("cores", cpus);
    if let Some(m) = more_channels(ch, cores) {
        return f
            .evidence("channels", format!("{} {} of max {}", m.kind, m.now, m.max))
            .evidence("physical cores", cores)
            .why("one queue means one interrupt means one core: more queues let the other cores share the work")
            .fix(format!("hlctl set {iface} channels {} {}", m.kind, m.want));
    }
    match ch.and_then(queues) {
        Some((kind, now, max)) if now > 1 => f
            .evidence("channels", format!("{kind} {now} of max {max}"))
            .why("the device has several queues, but this transfer's flow hashed to one of them; spread the queues' interrupts, or run several streams (--parallel)")
            .fix(format!("# spread {iface}'s queue interrupts over the cores (irqbalance, or /proc/irq/N/smp_affinity_list)")),
        other => {
            let ev = match other {
                Some((kind, now, max)) => format!("{kind} {now} of max {max}"),
                None => "none reported (one queue)".into(),
            };
            f.evidence("channels", ev)
                .why("the device has a single queue: Receive Packet Steering hands the protocol work of its packets to the other cores")
                .fix(format!(
                    "hlctl set {iface} rps cpus {}",
                    rps_cpus(hot.core.cpu, r)
                ))
        }
    }
}

/// The one CPU every interrupt of a device with several queue vectors
/// landed on, if they all did.
pub(crate) fn interrupts_on_one_cpu(r: &CoreReport) -> Option<u32> {
    if r.queue_vectors.len() < 2 {
        return None;
    }
    let took: Vec<&CoreUse> = r.cpus.iter().filter(|c| c.device_interrupts > 0).collect();
    let [one] = took.as_slice() else { return None };
    Some(one.cpu)
}

/// Every interrupt of a device with several queue vectors landed on one CPU.
fn irqs_on_one_cpu(iface: &str, r: &CoreReport, irqbalance: Option<u32>) -> Option<Finding> {
    let cpu = interrupts_on_one_cpu(r)?;
    let one = r.cpus.iter().find(|c| c.cpu == cpu)?;
    let irqs: Vec<String> = r.queue_vectors.iter().map(|v| v.irq.to_string()).collect();
    let f = Finding::new(
        "irqs-on-one-cpu",
        Severity::Warning,
        Some(iface),
        format!(
            "all {} of {iface}'s queue vectors interrupted CPU{} only",
            r.queue_vectors.len(),
            one.cpu
        ),
    )
    .evidence("queue vector IRQs", irqs.join(" "))
    .evidence(&format!("CPU{} interrupts", one.cpu), one.device_interrupts);
    Some(match irqbalance {
        Some(pid) => f
            .evidence("irqbalance", format!("running (pid {pid})"))
            .why("the queues exist to share the work among the cores; irqbalance owns these IRQs' affinity and put them on one CPU, and hlctl does not fight it")
            .fix("# tell irqbalance (its --policyscript, or IRQBALANCE_BANNED_CPULIST in /etc/default/irqbalance), or stop it and spread them with hlctl set IFACE irq-affinity cpus MAP"),
        None => f
            .why("the queues exist to share the work among the cores; with every interrupt on one CPU they do not")
            .fix(format!(
                "hlctl set {iface} irq-affinity cpus {}",
                affinity_spread(r)
            )),
    })
}

/// The queue index a vector's name ends with (`virtio0-input.1`,
/// `eth2-TxRx-3`, `mlx5_comp3`: 1, 3, 3); `None` when it ends otherwise.
fn queue_index(name: &str) -> Option<usize> {
    let digits: String = name
        .chars()
        .rev()
        .take_while(char::is_ascii_digit)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    digits.parse().ok()
}

/// Each queue vector of `r` to one CPU of the report, by the queue index
/// in its name modulo the CPUs (a queue's receive and send vectors
/// together; vectors without an index by their position): a per-vector
/// map in IRQ order, one rule for the doctor's fix and the tune's
/// `irq-affinity` candidate.
pub(crate) fn affinity_spread(r: &CoreReport) -> String {
    let cpus: Vec<u32> = r.cpus.iter().map(|c| c.cpu).collect();
    if cpus.is_empty() {
        return crate::cpu::cpulist::NONE.into();
    }
    let sets: Vec<std::collections::BTreeSet<u32>> = r
        .queue_vectors
        .iter()
        .enumerate()
        .map(|(k, v)| {
            let q = queue_index(&v.name).unwrap_or(k);
            std::iter::once(cpus[q % cpus.len()]).collect()
        })
        .collect();
    crate::cpu::cpulist::map_text(&sets)
}

/// The backlog sysctl a drop from a full per-CPU backlog asks to raise,
/// and the least it is raised to.
pub(crate) const BACKLOG: (&str, u64) = ("net.core.netdev_max_backlog", 2000);
/// The budget sysctl frequent squeezes ask to raise, and the least it is raised to.
pub(crate) const BUDGET: (&str, u64) = ("net.core.netdev_budget", 600);

/// Twice the current value of a sysctl, at least `floor`.
pub(crate) fn doubled(inp: &Inputs, key: &str, floor: u64) -> u64 {
    inp.sysctl(key)
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map_or(floor, |v| (v * 2).max(floor))
}

/// Any packet dropped from a full per-CPU backlog during the run.
pub(crate) fn backlog_overflowed(r: &CoreReport) -> bool {
    r.backlog_dropped > 0
}

/// The budget ran out with work left often enough to matter: a few
/// squeezes are every busy receive's lot; they matter when they are
/// frequent and a core is the limit.
pub(crate) fn budget_squeezed(r: &CoreReport) -> bool {
    let per_second = r.time_squeeze as f64 / r.seconds.max(0.001);
    let saturated = r.cpus.iter().any(|c| c.busy_percent >= SATURATED);
    per_second >= SQUEEZES_PER_SECOND && saturated
}

fn backlog(inp: &Inputs, r: &CoreReport, dir: Direction, out: &mut Outcome) {
    if backlog_overflowed(r) {
        let (key, floor) = BACKLOG;
        out.find(
            Finding::new(
                "softnet-backlog-drops",
                Severity::Warning,
                None,
                format!("{} packets dropped from full per-CPU backlogs during the {dir}", r.backlog_dropped),
            )
            .evidence(key, inp.sysctl(key).unwrap_or("?"))
            .evidence("direction", dir)
            .why("packets arrived faster than the core could take them off its backlog, and were lost")
            .fix(format!("hlctl sysctl {key}={}", doubled(inp, key, floor))),
        );
    }
    if budget_squeezed(r) {
        let (key, floor) = BUDGET;
        out.find(
            Finding::new(
                "softnet-time-squeeze",
                Severity::Info,
                None,
                format!("the receive budget ran out {} times with work left during the {dir}", r.time_squeeze),
            )
            .evidence(key, inp.sysctl(key).unwrap_or("?"))
            .evidence("direction", dir)
            .why("each poll cycle stopped with packets still waiting; a larger budget lets one cycle take more")
            .fix(format!("hlctl sysctl {key}={}", doubled(inp, key, floor))),
        );
    }
}

fn steal(r: &CoreReport, dir: Direction, out: &mut Outcome) -> bool {
    let Some(c) = r
        .cpus
        .iter()
        .filter(|c| c.steal_percent >= STEAL)
        .max_by(|a, b| a.steal_percent.total_cmp(&b.steal_percent))
    else {
        return false;
    };
    out.find(
        Finding::new(
            "cpu-steal",
            Severity::Warning,
            None,
            format!("the hypervisor took {:.0} % of CPU{} during the {dir}", c.steal_percent, c.cpu),
        )
        .evidence(&format!("CPU{} steal", c.cpu), format!("{:.0} %", c.steal_percent))
        .evidence("direction", dir)
        .why("this VM's virtual CPUs waited for the host's real ones: the host is overcommitted, and no setting inside this VM helps")
        .fix("# give this VM dedicated cores, or move load off its host"),
    );
    true
}

/// The checks on one direction's per-core report.
fn check_direction(inp: &Inputs, iface: &str, dir: Direction, r: &CoreReport, out: &mut Outcome) {
    let ch = inp.iface(iface).and_then(|s| s.now().channels.as_ref());
    let before = out.findings.len();
    if let Some(hot) = hot_core(r, dir) {
        out.find(one_core_finding(inp, iface, dir, &hot, r, ch));
    }
    out.findings
        .extend(irqs_on_one_cpu(iface, r, inp.irqbalance_pid));
    backlog(inp, r, dir, out);
    steal(r, dir, out);
    if out.findings.len() == before {
        out.pass(
            "cores",
            Some(iface),
            crate::cpu::text::line(&dir.to_string(), r),
        );
    }
}

pub(crate) fn check(inp: &Inputs, out: &mut Outcome) {
    let Some(p) = &inp.peer else {
        out.skip("cores", None, "no --peer to measure");
        return;
    };
    let Ok(t) = &p.throughput else {
        out.skip("cores", p.interface.as_deref(), "no transfer measured");
        return;
    };
    let iface = p.interface.as_deref().unwrap_or("?");
    let mut seen = false;
    for (dir, series) in [
        (Direction::Upload, &t.upload),
        (Direction::Download, &t.download),
    ] {
        if let Some(r) = series.last_cores() {
            seen = true;
            check_direction(inp, iface, dir, r, out);
        }
    }
    if !seen {
        out.skip(
            "cores",
            p.interface.as_deref(),
            "the cores were not sampled (HLCTL_NO_CPU_SAMPLING, or /proc unreadable)",
        );
    }
}

#[cfg(test)]
#[path = "cores_tests.rs"]
mod tests;
