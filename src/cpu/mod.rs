//! Where the CPU time of a transfer goes: the per-CPU counters of `/proc`
//! (`stat`, `softirqs`, `net/softnet_stat`, `interrupts`) and this process's
//! threads, parsed ([`stat`], [`softirqs`], [`softnet`], [`interrupts`],
//! [`tasks`]), snapshotted around a transfer ([`sample`]) and turned into a
//! per-core report ([`report`]) and its compact line ([`text`]).

pub(crate) mod cpulist;
pub(crate) mod device;
pub(crate) mod error;
pub(crate) mod interrupts;
pub(crate) mod kthreads;
pub(crate) mod layout;
pub(crate) mod report;
pub(crate) mod sample;
pub(crate) mod snapshot;
pub(crate) mod softirqs;
pub(crate) mod softnet;
pub(crate) mod stat;
pub(crate) mod tasks;
pub(crate) mod text;

pub(crate) use error::ProcError;
