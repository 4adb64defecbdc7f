//! hlctl: inspect, change, measure and tune the network of a home-lab box.
//!
//! The library holds all logic; `src/bin/hlctl.rs` and `src/bin/hlctld.rs`
//! only set up logging and hand over to [`cli`].
//!
//! Layers, each knowing only the one below it:
//! - [`cli`]: words → typed request → text/JSON output;
//! - [`nic`], [`sysctl`], [`bench`]: the engine;
//! - [`nic::netlink`] and [`nic::ioctl`]: the kernel.

pub mod bench;
pub mod check;
pub mod cli;
pub mod config;
pub mod dbus;
pub mod doctor;
pub mod fsutil;
pub mod history;
pub mod host;
pub mod html;
pub mod metrics;
pub mod nic;
pub mod path;
pub mod paths;
pub mod problem;
pub mod report;
pub mod sysctl;
pub mod tune;
pub mod units;
