//! Typed errors of the network benchmark (client and server).

use std::io;
use std::net::SocketAddr;
use std::time::Duration;

/// Everything that can go wrong in a network test.
#[derive(Debug, thiserror::Error)]
pub enum NetError {
    /// The configuration given to the client or server is not valid.
    #[error("invalid setting: {0}")]
    InvalidConfig(String),

    /// The peer's host name could not be resolved.
    #[error("cannot resolve {host}: {source}")]
    Resolve { host: String, source: io::Error },

    /// Nothing listens on the peer's port.
    #[error("connection refused by {peer} — is `iperf3 -s` or `hlctl serve` running there?")]
    ConnectionRefused { peer: String },

    /// The peer accepted the connection but did not answer as iperf3 does in time.
    #[error("{peer} accepted the connection but sent no iperf3 answer within {:.1} s: \
             is `iperf3 -s` or `hlctl serve` listening there, and not another service?",
            after.as_secs_f64())]
    NoAnswer { peer: String, after: Duration },

    /// The peer answered, but not as an iperf3 server does.
    #[error(
        "{peer} is not an iperf3 server ({detail}): run `hlctl serve` or `iperf3 -s` there, \
             or give the port it listens on (HOST:PORT)"
    )]
    NotIperf3 { peer: String, detail: String },

    /// Connecting to the peer failed for another reason.
    #[error("cannot connect to {peer}: {source}")]
    Connect { peer: String, source: io::Error },

    /// A wait ran out of time.
    #[error("timed out after {:.1} s waiting for {what}", after.as_secs_f64())]
    Timeout { what: String, after: Duration },

    /// The server answered ACCESS_DENIED (0xFF) on the control connection.
    #[error("the server is busy running a test; try again later")]
    ServerBusy,

    /// The server stayed busy (ACCESS_DENIED to every try) for the whole
    /// back-off window.
    #[error("{peer}: busy for the whole {window_s} s window ({tries} tries); nothing measured")]
    BusyTooLong {
        peer: String,
        window_s: u64,
        tries: u32,
    },

    /// The server answered ACCESS_DENIED (0xFF) on a data stream (wrong cookie).
    #[error("the server refused data stream {stream} (access denied: wrong cookie)")]
    AccessDenied { stream: u32 },

    /// The server sent SERVER_ERROR with iperf3's error number and errno.
    #[error("the server reported an error: {} (iperf3 error {i_errno}, errno {errno})",
        crate::bench::net::error::ierrno_message(*i_errno))]
    ServerError { i_errno: i32, errno: i32 },

    /// The server stopped the test (SERVER_TERMINATE).
    #[error("the server terminated the test")]
    ServerTerminated,

    /// The client stopped the test (CLIENT_TERMINATE).
    #[error("the client terminated the test")]
    ClientTerminated,

    /// The peer sent something the protocol does not allow at this point.
    #[error("protocol error: expected {expected}, received {received}")]
    Protocol { expected: String, received: String },

    /// The peer closed the control connection unexpectedly.
    #[error("the peer closed the control connection during {during}")]
    ControlClosed { during: String },

    /// A length-prefixed JSON block was larger than allowed (or empty).
    #[error("{what} of {len} bytes is outside the allowed 1 to {limit} bytes")]
    BadLength { what: String, len: u32, limit: u32 },

    /// A JSON block could not be parsed or lacked a required key.
    #[error("invalid {what}: {detail}")]
    BadJson { what: String, detail: String },

    /// The client asked for parameters this server refuses.
    #[error("refused test parameters: {reason}")]
    BadParams { i_errno: i32, reason: String },

    /// A data stream failed while the test was running.
    #[error("data stream {stream} failed: {source}")]
    Stream { stream: u32, source: io::Error },

    /// The server could not bind its listening socket.
    #[error("cannot listen on {addr}: {source}")]
    Bind { addr: SocketAddr, source: io::Error },

    /// A limit of `hlctl serve` refused or ended the test (iperf3's number).
    #[error("{}: {reason}", ierrno_message(*i_errno))]
    ServerLimit { i_errno: i32, reason: String },

    /// This server refused the client's credentials (sent to the client as
    /// iperf3's error 142, "test authorization failed").
    #[error("test authorization failed: {0}")]
    AuthRefused(#[from] super::auth::Refusal),

    /// The server refused the test with iperf3's error 142.
    #[error("the server refused the test: test authorization failed (iperf3 error 142): {hint}")]
    AuthRejected { hint: String },

    /// Credentials or keys that cannot be used.
    #[error(transparent)]
    Auth(#[from] super::auth::AuthError),

    /// Another I/O error.
    #[error("I/O error while {during}: {source}")]
    Io { during: String, source: io::Error },

    /// The caller cancelled the test.
    #[error("cancelled")]
    Cancelled,
}

impl NetError {
    pub(crate) fn io(during: impl Into<String>, source: io::Error) -> Self {
        NetError::Io {
            during: during.into(),
            source,
        }
    }

    /// The iperf3 error number a server sends back for this error, if any.
    pub(crate) fn i_errno(&self) -> i32 {
        match self {
            NetError::BadParams { i_errno, .. } | NetError::ServerLimit { i_errno, .. } => *i_errno,
            NetError::BadLength { .. } | NetError::BadJson { .. } => IERECVPARAMS,
            NetError::Timeout { .. } => IENOMSG,
            NetError::AuthRefused(_) => super::auth::IEAUTHTEST,
            _ => IEINITTEST,
        }
    }
}

// iperf3 error numbers (src/iperf_api.h) that this implementation sends or explains.
pub(crate) const IEDURATION: i32 = 5;
pub(crate) const IENUMSTREAMS: i32 = 6;
pub(crate) const IEBLOCKSIZE: i32 = 7;
pub(crate) const IEBUFSIZE: i32 = 8;
pub(crate) const IEMSS: i32 = 10;
pub(crate) const IEOMIT: i32 = 12;
pub(crate) const IEUDPBLOCKSIZE: i32 = 20;
pub(crate) const IEREVERSEBIDIR: i32 = 25;
pub(crate) const IEINITTEST: i32 = 101;
pub(crate) const IERECVPARAMS: i32 = 114;
pub(crate) const IEPROTOCOL: i32 = 131;
pub(crate) const IENOMSG: i32 = 144;
pub(crate) const IESTREAMLISTEN: i32 = 202;

/// A short description of an iperf3 error number, as iperf3 words it.
pub(crate) fn ierrno_message(i_errno: i32) -> &'static str {
    match i_errno {
        5 => "test duration too long",
        6 => "number of parallel streams too large",
        7 => "block size too large",
        8 => "socket buffer size too large",
        10 => "MSS too large",
        12 => "bogus value for --omit",
        13 => "not implemented",
        20 => "block size invalid",
        25 => "cannot be both reverse and bidirectional",
        27 => "total required bandwidth is larger than the server limit",
        37 => "client's requested duration exceeds the server's maximum permitted limit",
        100 => "unable to create a new test",
        101 => "test initialization failed",
        102 => "unable to start listener for connections",
        109 => "control socket has closed unexpectedly",
        110 => "received an unknown control message",
        114 => "unable to receive parameters from client",
        117 => "unable to receive results",
        119 => "the client has terminated",
        120 => "the server has terminated",
        121 => "the server is busy running a test",
        124 => "unable to set socket buffer size",
        131 => "protocol does not exist",
        134 => "unable to set TCP_CONGESTION",
        141 => "socket buffer size not set correctly",
        142 => "test authorization failed",
        144 => "no message was received for the timeout period",
        160 => "server test duration expired",
        200 => "unable to create a new stream",
        202 => "unable to start stream listener",
        203 => "unable to connect stream",
        204 => "unable to accept stream connection",
        205 => "unable to write to stream socket",
        206 => "unable to read from stream",
        208 => "stream has invalid ID",
        _ => "unknown error",
    }
}
