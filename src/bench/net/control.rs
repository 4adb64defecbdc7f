//! The control connection: state bytes, the 37-byte cookie, and
//! length-prefixed JSON blocks with size limits.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::error::NetError;

/// Bytes in a cookie on the wire: 36 base32 characters and a NUL.
pub(crate) const COOKIE_SIZE: usize = 37;

/// Largest parameter block a server accepts (iperf3's `MAX_PARAMS_JSON_STRING`).
pub(crate) const MAX_PARAMS_JSON: u32 = 8 * 1024;

/// Largest results block accepted from a peer.
pub(crate) const MAX_RESULTS_JSON: u32 = 4 * 1024 * 1024;

/// One state byte of the control protocol (a signed byte on the wire).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum State {
    TestStart,
    TestRunning,
    TestEnd,
    ParamExchange,
    CreateStreams,
    ServerTerminate,
    ClientTerminate,
    ExchangeResults,
    DisplayResults,
    IperfDone,
    AccessDenied,
    ServerError,
}

impl State {
    pub(crate) fn byte(self) -> u8 {
        match self {
            State::TestStart => 1,
            State::TestRunning => 2,
            State::TestEnd => 4,
            State::ParamExchange => 9,
            State::CreateStreams => 10,
            State::ServerTerminate => 11,
            State::ClientTerminate => 12,
            State::ExchangeResults => 13,
            State::DisplayResults => 14,
            State::IperfDone => 16,
            State::AccessDenied => 0xFF,
            State::ServerError => 0xFE,
        }
    }

    pub(crate) fn from_byte(b: u8) -> Option<State> {
        Some(match b {
            1 => State::TestStart,
            2 => State::TestRunning,
            4 => State::TestEnd,
            9 => State::ParamExchange,
            10 => State::CreateStreams,
            11 => State::ServerTerminate,
            12 => State::ClientTerminate,
            13 => State::ExchangeResults,
            14 => State::DisplayResults,
            16 => State::IperfDone,
            0xFF => State::AccessDenied,
            0xFE => State::ServerError,
            _ => return None,
        })
    }

    /// iperf3's name for this state, with its number, for error messages.
    pub(crate) fn describe(self) -> String {
        let name = match self {
            State::TestStart => "TEST_START",
            State::TestRunning => "TEST_RUNNING",
            State::TestEnd => "TEST_END",
            State::ParamExchange => "PARAM_EXCHANGE",
            State::CreateStreams => "CREATE_STREAMS",
            State::ServerTerminate => "SERVER_TERMINATE",
            State::ClientTerminate => "CLIENT_TERMINATE",
            State::ExchangeResults => "EXCHANGE_RESULTS",
            State::DisplayResults => "DISPLAY_RESULTS",
            State::IperfDone => "IPERF_DONE",
            State::AccessDenied => "ACCESS_DENIED",
            State::ServerError => "SERVER_ERROR",
        };
        format!("{name} ({})", self.byte() as i8)
    }
}

/// Describe a raw state byte for an error message.
pub(crate) fn describe_byte(b: u8) -> String {
    match State::from_byte(b) {
        Some(s) => s.describe(),
        None => format!("unknown state byte 0x{b:02x}"),
    }
}

/// The test cookie: 36 random lower-case base32 characters plus a NUL.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct Cookie([u8; COOKIE_SIZE]);

impl std::fmt::Debug for Cookie {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Cookie({})", String::from_utf8_lossy(self.c_str()))
    }
}

impl Cookie {
    /// A fresh random cookie (from /dev/urandom).
    pub(crate) fn generate() -> io::Result<Cookie> {
        const ALPHABET: &[u8; 32] = b"abcdefghijklmnopqrstuvwxyz234567";
        let mut raw = [0u8; COOKIE_SIZE - 1];
        std::fs::File::open("/dev/urandom")?.read_exact(&mut raw)?;
        let mut bytes = [0u8; COOKIE_SIZE];
        for (dst, r) in bytes.iter_mut().zip(raw) {
            *dst = ALPHABET[(r % 32) as usize];
        }
        Ok(Cookie(bytes))
    }

    pub(crate) fn from_bytes(bytes: [u8; COOKIE_SIZE]) -> Cookie {
        Cookie(bytes)
    }

    pub(crate) fn bytes(&self) -> &[u8; COOKIE_SIZE] {
        &self.0
    }

    /// The cookie as text, as iperf3's JSON shows it (without the NUL).
    pub(crate) fn text(&self) -> String {
        String::from_utf8_lossy(self.c_str()).into_owned()
    }

    /// The bytes up to the first NUL, as C's `strcmp` sees them.
    fn c_str(&self) -> &[u8] {
        let end = self.0.iter().position(|&b| b == 0).unwrap_or(COOKIE_SIZE);
        &self.0[..end]
    }

    /// Compare as iperf3 does (C strings).
    pub(crate) fn matches(&self, other: &Cookie) -> bool {
        self.c_str() == other.c_str()
    }
}

/// Read exactly `buf.len()` bytes before `deadline`.
pub(crate) fn read_exact_by(
    s: &TcpStream,
    buf: &mut [u8],
    deadline: Instant,
    what: &str,
) -> Result<(), NetError> {
    let started = Instant::now();
    let mut got = 0;
    while got < buf.len() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(NetError::Timeout {
                what: what.to_string(),
                after: started.elapsed(),
            });
        }
        s.set_read_timeout(Some(left.max(Duration::from_millis(1))))
            .map_err(|e| NetError::io(format!("waiting for {what}"), e))?;
        match (&*s).read(&mut buf[got..]) {
            Ok(0) => {
                return Err(NetError::ControlClosed {
                    during: format!("waiting for {what}"),
                });
            }
            Ok(n) => got += n,
            Err(e) if is_timeout(&e) || e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if is_reset(&e) => {
                return Err(NetError::ControlClosed {
                    during: format!("waiting for {what}"),
                });
            }
            Err(e) => return Err(NetError::io(format!("reading {what}"), e)),
        }
    }
    Ok(())
}

/// Wait up to `d` (nanosecond precision, unlike SO_RCVTIMEO's jiffies) for
/// `fd` to become readable; true if it is.
pub(crate) fn wait_readable(fd: &impl std::os::fd::AsRawFd, d: Duration) -> bool {
    let mut pfd = libc::pollfd {
        fd: fd.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    let ts = libc::timespec {
        tv_sec: d.as_secs() as libc::time_t,
        tv_nsec: d.subsec_nanos() as libc::c_long,
    };
    // SAFETY: one valid pollfd and a valid timespec for the duration of the call.
    let rc = unsafe { libc::ppoll(&mut pfd, 1, &ts, std::ptr::null()) };
    rc > 0
}

/// True for the errors a socket timeout produces.
pub(crate) fn is_timeout(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    )
}

/// True for the errors of a connection the peer tore down.
pub(crate) fn is_reset(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::BrokenPipe
            | io::ErrorKind::UnexpectedEof
    )
}

/// Write all bytes, failing after `timeout`.
pub(crate) fn write_all(
    s: &TcpStream,
    bytes: &[u8],
    timeout: Duration,
    what: &str,
) -> Result<(), NetError> {
    s.set_write_timeout(Some(timeout))
        .map_err(|e| NetError::io(format!("sending {what}"), e))?;
    (&*s).write_all(bytes).map_err(|e| {
        if is_timeout(&e) {
            NetError::Timeout {
                what: format!("the peer to accept {what}"),
                after: timeout,
            }
        } else if is_reset(&e) {
            NetError::ControlClosed {
                during: format!("sending {what}"),
            }
        } else {
            NetError::io(format!("sending {what}"), e)
        }
    })
}

/// Send one state byte.
pub(crate) fn write_state(s: &TcpStream, state: State, timeout: Duration) -> Result<(), NetError> {
    write_all(s, &[state.byte()], timeout, &state.describe())
}

/// Send SERVER_ERROR followed by iperf3's error number and errno (big-endian).
pub(crate) fn write_server_error(
    s: &TcpStream,
    i_errno: i32,
    errno: i32,
    timeout: Duration,
) -> Result<(), NetError> {
    let mut msg = [0u8; 9];
    msg[0] = State::ServerError.byte();
    msg[1..5].copy_from_slice(&i_errno.to_be_bytes());
    msg[5..9].copy_from_slice(&errno.to_be_bytes());
    write_all(s, &msg, timeout, "SERVER_ERROR")
}

/// Read one state byte (client side): ACCESS_DENIED and SERVER_ERROR become errors.
pub(crate) fn read_state(s: &TcpStream, deadline: Instant, what: &str) -> Result<u8, NetError> {
    let mut b = [0u8; 1];
    read_exact_by(s, &mut b, deadline, what)?;
    check_peer_failure(s, b[0], deadline)?;
    Ok(b[0])
}

/// Turn ACCESS_DENIED, SERVER_ERROR and SERVER_TERMINATE into their errors.
pub(crate) fn check_peer_failure(s: &TcpStream, b: u8, deadline: Instant) -> Result<(), NetError> {
    peer_failure(b, || {
        let mut nums = [0u8; 8];
        read_exact_by(
            s,
            &mut nums[..4],
            deadline,
            "the error number after SERVER_ERROR",
        )?;
        // iperf3 refusing credentials (error 142) sends no errno before it
        // closes: a close here leaves errno 0.
        match read_exact_by(s, &mut nums[4..], deadline, "the errno after SERVER_ERROR") {
            Ok(()) | Err(NetError::ControlClosed { .. }) => Ok(nums),
            Err(e) => Err(e),
        }
    })
}

/// [`check_peer_failure`] on state byte `b`; `error_numbers` reads the 8
/// bytes that follow SERVER_ERROR.
pub(crate) fn peer_failure(
    b: u8,
    error_numbers: impl FnOnce() -> Result<[u8; 8], NetError>,
) -> Result<(), NetError> {
    match State::from_byte(b) {
        Some(State::AccessDenied) => Err(NetError::ServerBusy),
        Some(State::ServerTerminate) => Err(NetError::ServerTerminated),
        Some(State::ServerError) => {
            let nums = error_numbers()?;
            let i_errno = i32::from_be_bytes([nums[0], nums[1], nums[2], nums[3]]);
            let errno = i32::from_be_bytes([nums[4], nums[5], nums[6], nums[7]]);
            Err(NetError::ServerError { i_errno, errno })
        }
        _ => Ok(()),
    }
}

/// Read a state byte and require it to be `want`.
pub(crate) fn expect_state(s: &TcpStream, want: State, deadline: Instant) -> Result<(), NetError> {
    let what = want.describe();
    let b = read_state(s, deadline, &what)?;
    if b == want.byte() {
        Ok(())
    } else {
        Err(NetError::Protocol {
            expected: what,
            received: describe_byte(b),
        })
    }
}

/// Send a JSON object with its 4-byte big-endian length, in one write.
pub(crate) fn write_json(
    s: &TcpStream,
    v: &Value,
    timeout: Duration,
    what: &str,
) -> Result<(), NetError> {
    let body = serde_json::to_vec(v).map_err(|e| NetError::BadJson {
        what: what.to_string(),
        detail: e.to_string(),
    })?;
    let len = u32::try_from(body.len()).map_err(|_| NetError::BadLength {
        what: what.to_string(),
        len: u32::MAX,
        limit: u32::MAX,
    })?;
    let mut msg = Vec::with_capacity(4 + body.len());
    msg.extend_from_slice(&len.to_be_bytes());
    msg.extend_from_slice(&body);
    write_all(s, &msg, timeout, what)
}

/// Read a length-prefixed JSON object; lengths of 0 or above `limit` are refused
/// before anything is allocated.
pub(crate) fn read_json(
    s: &TcpStream,
    limit: u32,
    deadline: Instant,
    what: &str,
) -> Result<Value, NetError> {
    let mut len = [0u8; 4];
    read_exact_by(s, &mut len, deadline, &format!("the length of the {what}"))?;
    let mut body = vec![0u8; json_len(len, limit, what)?];
    read_exact_by(s, &mut body, deadline, what)?;
    json_body(&body, what)
}

/// The length of a JSON block from its 4-byte big-endian prefix; 0 or above
/// `limit` is refused (before anything is allocated).
pub(crate) fn json_len(len: [u8; 4], limit: u32, what: &str) -> Result<usize, NetError> {
    let len = u32::from_be_bytes(len);
    if len == 0 || len > limit {
        return Err(NetError::BadLength {
            what: what.to_string(),
            len,
            limit,
        });
    }
    Ok(len as usize)
}

/// Decode a JSON block's body, which must be an object.
pub(crate) fn json_body(body: &[u8], what: &str) -> Result<Value, NetError> {
    let v: Value = serde_json::from_slice(body).map_err(|e| NetError::BadJson {
        what: what.to_string(),
        detail: format!("{e} (received {})", preview(body)),
    })?;
    if !v.is_object() {
        return Err(NetError::BadJson {
            what: what.to_string(),
            detail: format!("expected a JSON object, received {}", preview(body)),
        });
    }
    Ok(v)
}

/// The first bytes of a block, printable, for error messages.
pub(crate) fn preview(bytes: &[u8]) -> String {
    let head: String = String::from_utf8_lossy(&bytes[..bytes.len().min(40)])
        .chars()
        .map(|c| if c.is_control() { '.' } else { c })
        .collect();
    if bytes.len() > 40 {
        format!("{head:?}…")
    } else {
        format!("{head:?}")
    }
}

/// An integer from iperf3's JSON. iperf3 3.12/3.13 print negative numbers as
/// unsigned 64-bit values, so anything at or above 2^63 means −1.
pub(crate) fn json_i64(v: &Value) -> Option<i64> {
    if let Some(i) = v.as_i64() {
        return Some(i);
    }
    if v.as_u64().is_some() {
        return Some(-1);
    }
    let f = v.as_f64()?;
    if !f.is_finite() {
        return None;
    }
    if f >= 9.223_372_036_854_775e18 {
        return Some(-1);
    }
    Some(f as i64)
}

/// A floating-point number from JSON (integers accepted).
pub(crate) fn json_f64(v: &Value) -> Option<f64> {
    v.as_f64().filter(|f| f.is_finite())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsigned_minus_one_is_minus_one() {
        let v: Value = serde_json::from_str("18446744073709551615").unwrap();
        assert_eq!(json_i64(&v), Some(-1));
        let v: Value = serde_json::from_str("-1").unwrap();
        assert_eq!(json_i64(&v), Some(-1));
        let v: Value = serde_json::from_str("4485283840").unwrap();
        assert_eq!(json_i64(&v), Some(4485283840));
        let v: Value = serde_json::from_str("2.5").unwrap();
        assert_eq!(json_i64(&v), Some(2));
        let v: Value = serde_json::from_str("\"x\"").unwrap();
        assert_eq!(json_i64(&v), None);
    }

    #[test]
    fn cookie_alphabet_and_nul() {
        let c = Cookie::generate().unwrap();
        let b = c.bytes();
        assert_eq!(b[36], 0);
        assert!(
            b[..36]
                .iter()
                .all(|x| b"abcdefghijklmnopqrstuvwxyz234567".contains(x))
        );
        let d = Cookie::generate().unwrap();
        assert!(!c.matches(&d));
        assert!(c.matches(&c));
    }

    #[test]
    fn state_bytes_round_trip() {
        for b in 0..=255u8 {
            if let Some(s) = State::from_byte(b) {
                assert_eq!(s.byte(), b);
            }
        }
        assert_eq!(describe_byte(0x41), "unknown state byte 0x41");
        assert_eq!(State::ServerError.describe(), "SERVER_ERROR (-2)");
    }
}
