//! hlctld's D-Bus API (`org.hlctl.Daemon1` on the system bus) and hlctl's
//! client side of it.
//!
//! Daemon side: [`manager`] (`org.hlctl.Daemon1.Manager` at
//! `/org/hlctl/Daemon1`), [`link`] (`org.hlctl.Daemon1.Link`, one object per
//! link), [`job`] (`org.hlctl.Daemon1.Job`), [`state`] (the link cache, change
//! claims, the job table and each job's state), [`auth`] (polkit on the
//! caller), [`error`] (typed `org.hlctl.Daemon1.Error.*`), [`monitor`]
//! (netlink notifications → `PropertiesChanged`), [`reapply`] (persisted
//! settings), [`bench`] and [`tune`] (benchmark and tune jobs), [`service`]
//! (start, readiness, shutdown), [`notify`] (`sd_notify`), [`logging`]
//! (journald or stderr), [`memory`] (one malloc arena, trimmed), [`args`]
//! (hlctld's command line).
//! Shared by both sides: [`settings`] (the `a{sv}` wire form of a change set
//! and of method options). Client side: [`proxy`].
//! The full interface description is `dbus/org.hlctl.Daemon1.xml`.

pub mod args;
pub mod auth;
pub mod bench;
pub mod error;
pub mod headline;
pub mod job;
pub mod link;
pub mod logging;
pub mod manager;
pub(crate) mod memory;
pub mod monitor;
pub mod notify;
pub mod params;
pub mod proxy;
pub mod reapply;
pub mod service;
pub mod set_rows;
pub mod settings;
pub mod state;
pub mod tune;
pub mod typed;

/// The well-known bus name; the version is in the name.
pub const BUS_NAME: &str = "org.hlctl.Daemon1";
/// The root object path (the Manager).
pub const PATH: &str = "/org/hlctl/Daemon1";
pub const MANAGER_IFACE: &str = "org.hlctl.Daemon1.Manager";
pub const LINK_IFACE: &str = "org.hlctl.Daemon1.Link";
pub const JOB_IFACE: &str = "org.hlctl.Daemon1.Job";

/// Poll a stream for its next item (no extra stream-combinator crate needed).
pub async fn next<S: futures_core::Stream + Unpin>(s: &mut S) -> Option<S::Item> {
    std::future::poll_fn(|cx| std::pin::Pin::new(&mut *s).poll_next(cx)).await
}
