//! Other load on the machine while a CPU benchmark runs: the CPU time every
//! process used (`/proc/stat`) less this process's own (`getrusage`), and
//! the time a hypervisor took (steal). A figure measured beside a busy
//! neighbour or on an oversubscribed host is low for a reason that is not
//! the machine's speed; the report says so instead of leaving a puzzle
//! ("2 threads slower than 1").

use std::time::{Duration, Instant};

/// Others' CPU above this (in CPUs, over the run) is worth a warning.
const OTHERS_CPUS: f64 = 0.25;
/// Steal above this share of all CPU time is worth a warning.
const STEAL_SHARE: f64 = 0.05;

/// The machine's CPU counters at one moment.
#[derive(Clone, Copy, Debug)]
struct Sample {
    at: Instant,
    /// user + nice + system + irq + softirq, in clock ticks, all CPUs.
    busy: u64,
    steal: u64,
    /// Every field, in clock ticks.
    total: u64,
    /// This process's user + system CPU time.
    own: Duration,
}

/// Started before a run, finished after it.
#[derive(Debug)]
pub(crate) struct LoadWatch {
    start: Option<Sample>,
}

/// What happened beside the run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Seen {
    /// CPUs kept busy by other processes and the kernel, on average.
    pub(crate) others_cpus: f64,
    /// Share of all CPU time the hypervisor took (0 to 1).
    pub(crate) steal_share: f64,
}

impl LoadWatch {
    pub(crate) fn start() -> Self {
        LoadWatch { start: sample() }
    }

    /// What the machine did besides this process since [`LoadWatch::start`];
    /// `None` where `/proc/stat` cannot be read.
    pub(crate) fn finish(&self) -> Option<Seen> {
        let (a, b) = (self.start?, sample()?);
        let wall = b.at.duration_since(a.at).as_secs_f64();
        if wall <= 0.0 {
            return None;
        }
        let hz = crate::cpu::tasks::ticks_per_second();
        let busy = b.busy.saturating_sub(a.busy) as f64 / hz;
        let own = b.own.saturating_sub(a.own).as_secs_f64();
        let total = b.total.saturating_sub(a.total) as f64;
        Some(Seen {
            others_cpus: ((busy - own) / wall).max(0.0),
            steal_share: if total > 0.0 {
                b.steal.saturating_sub(a.steal) as f64 / total
            } else {
                0.0
            },
        })
    }
}

impl Seen {
    /// The warnings this calls for, on a machine of `cpus` CPUs.
    pub(crate) fn warnings(&self, cpus: usize) -> Vec<String> {
        let mut w = Vec::new();
        if self.others_cpus > OTHERS_CPUS {
            w.push(format!(
                "other processes kept {:.1} of this machine's {cpus} CPUs busy during the run: the figures are low by up to that much; run it again when the machine is idle",
                self.others_cpus
            ));
        }
        if self.steal_share > STEAL_SHARE {
            w.push(format!(
                "the hypervisor took {:.0}% of this VM's CPU time (steal) during the run: the figures are low by that much and vary with the host's load",
                self.steal_share * 100.0
            ));
        }
        w
    }
}

/// A run shorter than this gives a figure dominated by starting and
/// stopping; the report warns.
pub(crate) const MEANINGFUL_RUN: Duration = Duration::from_secs(1);

/// "the run took 0.03 s: …" when `took` is shorter than [`MEANINGFUL_RUN`].
pub(crate) fn short_run_warning(took: Duration, longer: &str) -> Option<String> {
    (took < MEANINGFUL_RUN).then(|| {
        format!(
            "the run took {:.2} s, too short for a steady figure (start-up and the last I/Os dominate it): {longer}",
            took.as_secs_f64()
        )
    })
}

fn sample() -> Option<Sample> {
    let text = std::fs::read_to_string("/proc/stat").ok()?;
    let (busy, steal, total) = parse_cpu_line(&text)?;
    Some(Sample {
        at: Instant::now(),
        busy,
        steal,
        total,
        own: own_cpu(),
    })
}

/// busy, steal and total ticks from the aggregate `cpu ` line of /proc/stat
/// (user nice system idle iowait irq softirq steal guest guest_nice; guest
/// time is already inside user).
fn parse_cpu_line(stat: &str) -> Option<(u64, u64, u64)> {
    let line = stat.lines().find(|l| l.starts_with("cpu "))?;
    let f: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .map(|x| x.parse().ok())
        .collect::<Option<Vec<u64>>>()?;
    let at = |i: usize| f.get(i).copied().unwrap_or(0);
    let busy = at(0) + at(1) + at(2) + at(5) + at(6);
    let total = (0..8).map(at).sum();
    Some((busy, at(7), total))
}

fn own_cpu() -> Duration {
    let (user, system) = rusage_now();
    user + system
}

/// User and system CPU time of this process so far.
pub(crate) fn rusage_now() -> (Duration, Duration) {
    use nix::sys::resource::{UsageWho, getrusage};
    let tv =
        |t: nix::sys::time::TimeVal| Duration::new(t.tv_sec() as u64, t.tv_usec() as u32 * 1000);
    match getrusage(UsageWho::RUSAGE_SELF) {
        Ok(u) => (tv(u.user_time()), tv(u.system_time())),
        Err(_) => (Duration::ZERO, Duration::ZERO),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_aggregate_line_is_read_and_guest_not_counted_twice() {
        let stat = "cpu  100 5 50 1000 20 3 2 7 40 0\ncpu0 50 2 25 500 10 1 1 3 20 0\n";
        assert_eq!(parse_cpu_line(stat), Some((160, 7, 1187)));
        assert_eq!(parse_cpu_line("intr 1 2\n"), None);
    }

    #[test]
    fn warnings_only_past_the_thresholds() {
        let quiet = Seen {
            others_cpus: 0.1,
            steal_share: 0.01,
        };
        assert!(quiet.warnings(2).is_empty());
        let busy = Seen {
            others_cpus: 1.2,
            steal_share: 0.2,
        };
        let w = busy.warnings(2);
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(w[0].contains("1.2 of this machine's 2 CPUs"), "{w:?}");
        assert!(w[1].contains("20% of this VM's CPU time"), "{w:?}");
    }

    #[test]
    fn another_process_spinning_is_seen() {
        // A thread of this process is own time, not others': a child
        // process spins instead.
        let watch = LoadWatch::start();
        let mut child = std::process::Command::new("sh")
            .args([
                "-c",
                "end=$(($(date +%s)+2)); while [ $(date +%s) -lt $end ]; do :; done",
            ])
            .spawn()
            .unwrap();
        child.wait().unwrap();
        let seen = watch.finish().unwrap();
        assert!(seen.others_cpus > 0.5, "{seen:?}");
    }

    #[test]
    fn short_runs_are_named() {
        let w = short_run_warning(Duration::from_millis(30), "give it --time 5").unwrap();
        assert!(w.starts_with("the run took 0.03 s"), "{w}");
        assert!(short_run_warning(Duration::from_secs(2), "x").is_none());
    }
}
