//! What the server's accept loop ([`super::server`]) and a test's session
//! share: the configuration, the phase of the current test, the hand-over of
//! TCP data streams, and progress messages.

use std::net::{IpAddr, TcpStream};
use std::sync::atomic::{AtomicU8, AtomicU64};
use std::sync::{Mutex, mpsc};
use std::time::Duration;

use crate::bench::progress::{Progress, ProgressEvent};

/// Where and how to serve.
#[derive(Clone, Debug, PartialEq)]
pub struct ServerConfig {
    /// Address to bind; `None` = all addresses (IPv6 and IPv4).
    pub bind: Option<IpAddr>,
    /// TCP port (and UDP port for UDP tests); 0 = pick a free one.
    pub(crate) port: u16,
    /// Serve one test, then return.
    pub one_off: bool,
    /// Return after this long without a test.
    pub idle_timeout: Option<Duration>,
    /// Limit for each step of a client's setup (cookie, parameters, streams, results).
    pub setup_timeout: Duration,
    /// Drop a running test whose streams move no data either way for this
    /// long (iperf3's `--rcv-timeout`, for a sending server too).
    pub stall_timeout: Duration,
    /// The host's measurement lock ([`crate::bench::exclusive`]): a test is
    /// served only while it can be taken (else the client is told busy).
    pub(crate) exclusive: Option<std::path::PathBuf>,
    /// Refuse tests longer than this (time + omit; unlimited ones too) and
    /// end one that runs past it (iperf3 3.20's `--server-max-duration`).
    pub max_duration: Option<Duration>,
    /// Refuse tests of more streams (-P) than this.
    pub max_streams: Option<u32>,
    /// Refuse a test that asks for more bit/s in all, and end one that runs
    /// faster (iperf3's `--server-bitrate-limit`).
    pub max_bitrate_bps: Option<u64>,
    /// iperf3's user authentication (`--rsa-private-key-path`,
    /// `--authorized-users-path`): a test only with accepted credentials.
    pub auth: Option<std::sync::Arc<super::auth::ServerAuth>>,
}

impl ServerConfig {
    pub fn new(port: u16) -> ServerConfig {
        ServerConfig {
            bind: None,
            port,
            one_off: false,
            idle_timeout: None,
            setup_timeout: Duration::from_secs(10),
            stall_timeout: Duration::from_secs(120),
            exclusive: None,
            max_duration: None,
            max_streams: None,
            max_bitrate_bps: None,
            auth: None,
        }
    }
}

/// No test: a client may start one.
pub(super) const IDLE: u8 = 0;
/// A test runs: other clients get iperf3's busy answer.
pub(super) const BUSY: u8 = 1;
/// The session waits for its TCP data streams from the accept loop.
pub(super) const TAKING_TCP_STREAMS: u8 = 2;
/// The session is done with its client and only returning.
pub(super) const DONE: u8 = 3;

/// What the accept loop and the running session share.
pub(super) struct Shared {
    pub(super) phase: AtomicU8,
    pub(super) streams: Mutex<Option<mpsc::Sender<TcpStream>>>,
    pub(super) completed: AtomicU64,
    pub(super) failed: AtomicU64,
    /// Clients the session told busy: queued behind its last data stream.
    pub(super) refused_queued: AtomicU64,
}

/// A progress message (no fraction: a server runs until stopped).
pub(super) fn say(progress: &dyn Progress, message: String) {
    progress.report(ProgressEvent {
        fraction: 0.0,
        message,
    });
}
