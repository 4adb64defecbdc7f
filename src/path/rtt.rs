//! Round-trip time to the peer's port, from the TCP handshake: `connect()`
//! returns when the SYN-ACK arrives, one round trip after the SYN left.

use std::io;
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

/// One handshake's duration.
pub(crate) fn connect_rtt(addr: SocketAddr, timeout: Duration) -> io::Result<Duration> {
    let t = Instant::now();
    let s = TcpStream::connect_timeout(&addr, timeout)?;
    let rtt = t.elapsed();
    drop(s);
    Ok(rtt)
}

/// The smallest of `samples` handshakes (queueing only adds time), or the
/// error of the last attempt when none succeeded.
pub(crate) fn min_connect_rtt(
    addr: SocketAddr,
    samples: u32,
    timeout: Duration,
) -> io::Result<Duration> {
    let mut best: Option<Duration> = None;
    let mut last_err = None;
    for _ in 0..samples.max(1) {
        match connect_rtt(addr, timeout) {
            Ok(d) => best = Some(best.map_or(d, |b| b.min(d))),
            Err(e) => last_err = Some(e),
        }
        // Let the server close the previous connection before the next one.
        std::thread::sleep(Duration::from_millis(20));
    }
    best.ok_or_else(|| last_err.unwrap_or_else(|| io::Error::other("no sample")))
}

/// True when the port accepts a connection within `timeout` (tried twice).
pub(crate) fn port_answers(addr: SocketAddr, timeout: Duration) -> bool {
    (0..2).any(|_| connect_rtt(addr, timeout).is_ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_listener_answers_and_closed_port_does_not() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        let rtt = min_connect_rtt(addr, 3, Duration::from_secs(1)).unwrap();
        assert!(rtt < Duration::from_secs(1));
        assert!(port_answers(addr, Duration::from_secs(1)));
        drop(l);
        assert!(!port_answers(addr, Duration::from_millis(200)));
    }
}
