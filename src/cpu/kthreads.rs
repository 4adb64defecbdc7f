//! The kernel's own threads and the CPU they used over a stretch of time:
//! what a transfer through a network mount costs beyond the process that
//! reads or writes the file. Linux's SMB client receives (and decrypts) in
//! `cifsd`, one per connection, and hands work to `cifsiod`'s kworkers; the
//! NFS client's RPCs run in `rpciod`'s and `nfsiod`'s kworkers. A kworker's
//! name carries the workqueue it last ran (`kworker/u4:2-cifsiod`).
//!
//! Counted: every kernel thread alive at both snapshots, and one started
//! between them with all its time. A thread that ended between them is
//! not counted; time spent in interrupts and softirqs is not any thread's.
//! Any other work the kernel did meanwhile (another mount, the disk's
//! writeback) is counted too: the figure is the kernel's threads' during
//! the transfer, not the transfer's alone.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::tasks::{self, TaskStat};

/// A kernel thread's share of one CPU over the stretch.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KernelThreadUse {
    /// Its name when the stretch ended (`cifsd`, `kworker/u4:2-cifsiod`).
    pub name: String,
    /// 1.0: one core, the whole time.
    pub cores: f64,
}

/// Below this share of a core a thread is not listed.
const FLOOR: f64 = 0.01;
/// At most this many threads are listed, the busiest first.
const LISTED: usize = 5;

/// Every kernel thread's CPU time at one moment, by pid.
#[derive(Clone, Debug, Default)]
pub(crate) struct KernelThreads(HashMap<u32, TaskStat>);

impl KernelThreads {
    /// Every kernel thread of `/proc` now (one that cannot be read is left
    /// out).
    pub(crate) fn take() -> KernelThreads {
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return KernelThreads::default();
        };
        let stats = dir
            .filter_map(|e| {
                let e = e.ok()?;
                e.file_name().to_str()?.parse::<u32>().ok()?;
                std::fs::read_to_string(e.path().join("stat")).ok()
            })
            .filter_map(|t| tasks::parse(&t).ok());
        KernelThreads::of(stats)
    }

    fn of(stats: impl Iterator<Item = TaskStat>) -> KernelThreads {
        KernelThreads(stats.filter(|t| t.kernel).map(|t| (t.id, t)).collect())
    }

    /// The threads busy between `before` and this snapshot, `seconds`
    /// apart: the busiest first, each at least 1 % of a core, at most 5.
    pub(crate) fn busy_since(&self, before: &KernelThreads, seconds: f64) -> Vec<KernelThreadUse> {
        if seconds <= 0.0 {
            return Vec::new();
        }
        let per_tick = 1.0 / tasks::ticks_per_second() / seconds;
        let mut used: Vec<KernelThreadUse> = self
            .0
            .values()
            .map(|now| {
                let then = before.0.get(&now.id).map_or(0, |t| t.utime + t.stime);
                let ticks = (now.utime + now.stime).saturating_sub(then);
                KernelThreadUse {
                    name: now.name.clone(),
                    cores: ticks as f64 * per_tick,
                }
            })
            .filter(|u| u.cores >= FLOOR)
            .collect();
        used.sort_by(|a, b| b.cores.total_cmp(&a.cores).then(a.name.cmp(&b.name)));
        used.truncate(LISTED);
        used
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(id: u32, name: &str, ticks: u64, kernel: bool) -> TaskStat {
        TaskStat {
            id,
            name: name.into(),
            utime: 0,
            stime: ticks,
            processor: None,
            kernel,
        }
    }

    #[test]
    fn the_busy_kernel_threads_are_listed_busiest_first_by_their_last_name() {
        let hz = tasks::ticks_per_second();
        let before = KernelThreads::of(
            [
                t(10, "cifsd", 100, true),
                t(11, "kworker/u4:1-events", 0, true),
                t(12, "idle-ish", 5, true),
                t(99, "hlctl", 0, false),
            ]
            .into_iter(),
        );
        // Over 2 s: cifsd 1.5 s, the kworker (now on cifsiod) 0.5 s, a new
        // thread 0.2 s, one that barely moved; the process is not a kernel
        // thread.
        let after = KernelThreads::of(
            [
                t(10, "cifsd", 100 + (1.5 * hz) as u64, true),
                t(11, "kworker/u4:1-cifsiod", (0.5 * hz) as u64, true),
                t(12, "idle-ish", 5, true),
                t(13, "kworker/0:2-rpciod", (0.2 * hz) as u64, true),
                t(99, "hlctl", (2.0 * hz) as u64, false),
            ]
            .into_iter(),
        );
        let used = after.busy_since(&before, 2.0);
        let got: Vec<(&str, f64)> = used
            .iter()
            .map(|u| (u.name.as_str(), (u.cores * 1e6).round() / 1e6))
            .collect();
        assert_eq!(
            got,
            [
                ("cifsd", 0.75),
                ("kworker/u4:1-cifsiod", 0.25),
                ("kworker/0:2-rpciod", 0.1)
            ]
        );
        assert!(after.busy_since(&before, 0.0).is_empty());
    }

    #[test]
    fn this_machines_kernel_threads_are_found_and_no_process_among_them() {
        let now = KernelThreads::take();
        // kthreadd (pid 2) is the parent of every kernel thread.
        let kthreadd = now.0.get(&2).expect("kthreadd is a kernel thread");
        assert_eq!(kthreadd.name, "kthreadd");
        assert!(!now.0.contains_key(&std::process::id()));
    }
}
