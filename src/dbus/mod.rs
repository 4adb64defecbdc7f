//! hlctld's D-Bus API (`org.hlctl.Daemon1` on the system bus) and hlctl's
//! client side of it, split by side:
//!
//! - [`daemon`]: the objects hlctld serves, its jobs and state, polkit,
//!   monitoring, start and shutdown.
//! - [`wire`]: what both sides share — names and paths, the typed errors, the
//!   `a{sv}` wire form of a change set and of method options, the benchmark
//!   parameter types.
//! - [`client`]: the proxies hlctl calls through.
//!
//! `daemon` and `client` depend on `wire`, never on each other.
//! The full interface description is `dbus/org.hlctl.Daemon1.xml`.

pub(crate) mod client;
pub mod daemon;
pub mod wire;
