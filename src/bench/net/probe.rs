//! Is an iperf3 server there? The check every command that talks to a peer
//! makes before any long work: a TCP connection within [`PEER_CHECK`], and
//! iperf3's first answer (PARAM_EXCHANGE to our cookie) within as long again.
//! `bench net -c` makes the same two checks on its own control connection.

use super::client::{ClientConfig, PEER_CHECK, connect_control, first_answer};
use super::control::{self, Cookie};
use super::error::NetError;
use std::time::{Duration, Instant};

/// Check that an iperf3 server (`iperf3 -s`, `hlctl serve`) answers at
/// `host:port`, within [`PEER_CHECK`] for the connection and as long for
/// its answer. A busy server counts as there. The check is one control
/// connection that ends before the parameters: the server logs it as a
/// client that went away (and `iperf3 -s -1` ends; the commands that check
/// first need a server for several tests anyway).
pub fn check_peer(host: &str, port: u16) -> Result<(), NetError> {
    check_peer_settling(host, port, Duration::ZERO)
}

/// [`check_peer`], where "network unreachable" (no route, no carrier) is
/// retried for up to `settle`: a link the user just reset (offloads or
/// rings changed on an e1000e drop the carrier for seconds, and networkd
/// drops its addresses meanwhile) comes back within it. Refused and silent
/// peers still fail within [`PEER_CHECK`].
pub fn check_peer_settling(host: &str, port: u16, settle: Duration) -> Result<(), NetError> {
    let until = Instant::now() + settle;
    loop {
        match check_once(host, port) {
            Err(NetError::Connect { source, .. })
                if unreachable(&source) && Instant::now() < until =>
            {
                std::thread::sleep(Duration::from_millis(250));
            }
            other => return other,
        }
    }
}

fn unreachable(e: &std::io::Error) -> bool {
    use std::io::ErrorKind::{HostUnreachable, NetworkDown, NetworkUnreachable};
    matches!(e.kind(), NetworkUnreachable | HostUnreachable | NetworkDown)
}

fn check_once(host: &str, port: u16) -> Result<(), NetError> {
    let mut cfg = ClientConfig::new(host, port);
    cfg.connect_timeout = PEER_CHECK;
    let ctrl = connect_control(&cfg)?;
    let peer = cfg.peer_label();
    ctrl.set_nodelay(true)
        .map_err(|e| NetError::io("setting TCP_NODELAY", e))?;
    let cookie = Cookie::generate().map_err(|e| NetError::io("reading /dev/urandom", e))?;
    control::write_all(&ctrl, cookie.bytes(), PEER_CHECK, "the cookie")?;
    match first_answer(&ctrl, &peer) {
        Err(NetError::ServerBusy) => Ok(()),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    #[test]
    fn a_silent_listener_is_no_iperf3_server() {
        // Accepted by the kernel, never answered.
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let t = Instant::now();
        let e = check_peer("127.0.0.1", port).unwrap_err();
        assert!(matches!(e, NetError::NoAnswer { .. }), "{e}");
        assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
        assert!(e.to_string().contains("2.0 s"), "{e}");
    }

    #[test]
    fn only_a_missing_route_or_carrier_is_waited_for() {
        let os = std::io::Error::from_raw_os_error;
        assert!(unreachable(&os(libc::ENETUNREACH)));
        assert!(unreachable(&os(libc::EHOSTUNREACH)));
        assert!(unreachable(&os(libc::ENETDOWN)));
        assert!(!unreachable(&os(libc::ECONNREFUSED)));
        assert!(!unreachable(&os(libc::ETIMEDOUT)));
    }

    #[test]
    fn a_refused_peer_is_not_waited_for() {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let t = Instant::now();
        let e = check_peer_settling("127.0.0.1", port, Duration::from_secs(10)).unwrap_err();
        assert!(matches!(e, NetError::ConnectionRefused { .. }), "{e}");
        assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
    }

    #[test]
    fn a_closed_port_is_refused() {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let e = check_peer("127.0.0.1", port).unwrap_err();
        assert!(matches!(e, NetError::ConnectionRefused { .. }), "{e}");
    }

    #[test]
    fn another_service_is_not_iperf3() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let t = std::thread::spawn(move || {
            use std::io::Write;
            let (mut s, _) = l.accept().unwrap();
            let _ = s.write_all(b"SSH-2.0-OpenSSH_9.2\r\n");
            std::thread::sleep(Duration::from_millis(200));
        });
        let e = check_peer("127.0.0.1", port).unwrap_err();
        assert!(matches!(e, NetError::NotIperf3 { .. }), "{e}");
        t.join().unwrap();
    }
}
