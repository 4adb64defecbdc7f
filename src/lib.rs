//! hlctl: inspect, change, measure and tune the network of a home-lab box.
//!
//! The library holds all logic; `src/bin/hlctl.rs` and `src/bin/hlctld.rs`
//! only set up logging and hand over to [`cli`].
//!
//! Layers, each importing only those below it (ARCHITECTURE.md has the data
//! flow and the reasons):
//! - [`cli`]: words → typed request → text/JSON output, through hlctld or in
//!   this process;
//! - [`dbus`]: hlctld's D-Bus objects and jobs, and the client proxies;
//! - [`ops`]: one function per operation, which both front ends call and
//!   which writes the history row where the work ran;
//! - [`tune`], [`doctor`], [`history`], [`report`], [`check`] (scheduled
//!   checks against a baseline): the workflows; [`measure`]: the measurements
//!   report, doctor and check take; [`metrics`] (the Prometheus textfile) and
//!   [`html`] (the one-page report): what the workflows' results are shown as;
//! - [`nic`], [`sysctl`], [`path`], [`bench`], [`cpu`] (where a transfer's
//!   CPU time goes, per core): the engines;
//! - [`nic::netlink`], [`nic::ioctl`], [`sysctl::procfs`]: the kernel;
//! - [`units`], [`problem`], [`class`] (an error's class: its exit code and
//!   job class), [`paths`], [`fsutil`], [`sockopt`], [`host`]: shared by all.

pub mod bench;
pub(crate) mod caps;
pub(crate) mod check;
pub mod class;
pub mod cli;
pub(crate) mod config;
pub(crate) mod cpu;
pub(crate) mod crashpoint;
pub mod dbus;
pub(crate) mod doctor;
pub(crate) mod fsutil;
/// Entry points for the fuzz targets (`fuzz/`) and their regression test,
/// behind the `fuzzing` feature (the fuzz crate and the suite's
/// dev-dependency turn it on).
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
pub mod history;
pub mod host;
pub(crate) mod html;
pub(crate) mod matrix;
pub(crate) mod measure;
pub(crate) mod metrics;
pub(crate) mod mounted;
pub mod nic;
pub(crate) mod ops;
pub(crate) mod path;
pub(crate) mod paths;
pub(crate) mod problem;
pub(crate) mod protocol;
pub(crate) mod pve;
pub(crate) mod report;
pub(crate) mod resolve;
pub(crate) mod sockopt;
pub(crate) mod spelling;
pub(crate) mod sysctl;
pub(crate) mod tune;
pub(crate) mod units;
pub(crate) mod usage;
pub(crate) mod workload;
