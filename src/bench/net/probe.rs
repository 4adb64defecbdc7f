//! Is an iperf3 server there? The check every command that talks to a peer
//! makes before any long work: a TCP connection within [`PEER_CHECK`], and
//! iperf3's first answer (PARAM_EXCHANGE to our cookie) within as long again.
//! `bench net -c` makes the same two checks on its own control connection.

use std::net::TcpStream;
use std::time::{Duration, Instant};

use super::client::{ClientConfig, connect_control};
use super::control::{self, Cookie, State};
use super::error::NetError;

/// How long a peer has to accept the connection, and then to answer.
pub const PEER_CHECK: Duration = Duration::from_secs(2);

/// The server's first answer on a control connection where our cookie has
/// been sent: PARAM_EXCHANGE within [`PEER_CHECK`], else why not.
pub(crate) fn first_answer(ctrl: &TcpStream, peer: &str) -> Result<(), NetError> {
    let not_iperf3 = |detail: String| NetError::NotIperf3 {
        peer: peer.to_string(),
        detail,
    };
    match control::expect_state(ctrl, State::ParamExchange, Instant::now() + PEER_CHECK) {
        Err(NetError::Timeout { .. }) => Err(NetError::NoAnswer {
            peer: peer.to_string(),
            after: PEER_CHECK,
        }),
        Err(NetError::Protocol { received, .. }) => Err(not_iperf3(format!(
            "it answered {received} where iperf3 answers PARAM_EXCHANGE"
        ))),
        Err(NetError::ControlClosed { .. }) => Err(not_iperf3(
            "it closed the connection without an iperf3 answer".into(),
        )),
        other => other,
    }
}

/// Check that an iperf3 server (`iperf3 -s`, `hlctl serve`) answers at
/// `host:port`, within [`PEER_CHECK`] for the connection and as long for
/// its answer. A busy server counts as there. The check is one control
/// connection that ends before the parameters: the server logs it as a
/// client that went away (and `iperf3 -s -1` ends; the commands that check
/// first need a server for several tests anyway).
pub fn check_peer(host: &str, port: u16) -> Result<(), NetError> {
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
