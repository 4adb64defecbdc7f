//! The per-CPU counters at one moment: `/proc/stat`, `/proc/softirqs`,
//! `/proc/net/softnet_stat`, `/proc/interrupts` and this process's `stat`
//! and its threads'. A file that cannot be read or parsed leaves its part
//! empty.

use std::time::Instant;

use super::interrupts::{self, IrqRow};
use super::softirqs::{self, NetSoftirqs};
use super::softnet::{self, SoftnetRow};
use super::stat::{self, CpuTimes};
use super::tasks::{self, TaskStat};

/// The counters at one moment.
#[derive(Clone, Debug)]
pub(crate) struct Snapshot {
    pub(super) at: Instant,
    pub(super) stat: Vec<(u32, CpuTimes)>,
    pub(super) softirqs: Vec<NetSoftirqs>,
    pub(super) softnet: Vec<SoftnetRow>,
    pub(super) irqs: Vec<IrqRow>,
    /// This process (exited threads included) and its live threads.
    pub(super) own: Option<TaskStat>,
    pub(super) threads: Vec<TaskStat>,
}

pub(super) fn read(path: &str) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// Each live thread of this process (one that ends meanwhile is left out).
fn threads() -> Vec<TaskStat> {
    let Ok(dir) = std::fs::read_dir("/proc/self/task") else {
        return Vec::new();
    };
    let mut v: Vec<TaskStat> = dir
        .filter_map(|e| std::fs::read_to_string(e.ok()?.path().join("stat")).ok())
        .filter_map(|t| tasks::parse(&t).ok())
        .collect();
    v.sort_by_key(|t| t.id);
    v
}

impl Snapshot {
    pub(crate) fn take() -> Snapshot {
        Snapshot {
            at: Instant::now(),
            stat: stat::parse(&read("/proc/stat")).unwrap_or_default(),
            softirqs: softirqs::parse(&read("/proc/softirqs")).unwrap_or_default(),
            softnet: softnet::parse(&read("/proc/net/softnet_stat")).unwrap_or_default(),
            irqs: interrupts::parse(&read("/proc/interrupts")).unwrap_or_default(),
            own: tasks::parse(&read("/proc/self/stat")).ok(),
            threads: threads(),
        }
    }
}
