//! Network throughput: an iperf3-compatible client and server.
//!
//! Speaks iperf3's control and data protocol (3.12 and earlier peers): the
//! 37-byte cookie, state bytes, length-prefixed JSON, stream cookies, the UDP
//! handshake and header, and the results exchange. Entry points:
//!
//! - [`run_client`] with a [`ClientConfig`] → [`NetReport`];
//! - [`Server::bind`] with a [`ServerConfig`], then [`Server::run`] (or
//!   [`Server::run_with`] for a callback per test) on any thread, stopped by
//!   its [`Cancel`](crate::bench::progress::Cancel) token.
//!
//! Each stream runs on its own thread with blocking sockets; the calling
//! thread drives the control connection and samples intervals.

pub(crate) mod auth;
pub(crate) mod busy;
pub(crate) mod client;
pub(crate) mod control;
pub(crate) mod cpu;
pub(crate) mod engine;
pub(crate) mod error;
pub(crate) mod figures;
mod gsro;
pub(crate) mod iperf3_json;
mod keepalive;
pub(crate) mod limits;
pub(crate) mod params;
pub(crate) mod probe;
pub(crate) mod results;
pub(crate) mod server;
mod serving;
mod session;
pub(crate) mod stream;
pub(crate) mod summary;
pub(crate) mod tcp;
pub(crate) mod tcp_info;
pub(crate) mod text;
pub(crate) mod udp;
pub(crate) mod udp_stats;
pub(crate) mod wake;
mod zerocopy;

pub use auth::{AuthError, ClientAuth, DEFAULT_TIME_SKEW_S, Padding, ServerAuth};
pub use busy::run_client_waiting;
pub use client::{ClientConfig, run_client, run_client_then};
pub use client::{DEFAULT_BUSY_WINDOW, PEER_CHECK};
pub use error::NetError;
pub use keepalive::KeepAlive;
pub use params::{Protocol, TestDirection};
pub use probe::{check_peer, check_peer_settling};
pub use server::{ServeSummary, Server, ServerConfig, StopReason, TestOutcome};
pub use summary::{CpuReport, DirectionSummary, IntervalReport, NetReport, RttMs, StreamReport};
