//! Benchmarks: network (iperf3 protocol), disk (fio-like), CPU (sysbench-like), stress,
//! a file over SSH or a mount (`file`) and this CPU's AEAD speed per core (`crypto`).
//!
//! Every benchmark is a library call taking a [`progress::Progress`] sink and a
//! [`progress::Cancel`] token, so the CLI, the daemon and the tuner share them.

pub(crate) mod buffer;
pub mod cpu;
pub(crate) mod crypto;
pub mod disk;
pub(crate) mod exclusive;
pub(crate) mod file;
pub(crate) mod load;
pub mod net;
pub mod progress;
pub(crate) mod size;
pub mod stress;
