//! UDP data streams: the connect handshake (3.12's and the legacy one), socket
//! sizing, and the paced send / accounting receive loops.

use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, UdpSocket};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use socket2::{Domain, SockRef, Socket, Type};

use super::control::is_timeout;
use super::error::NetError;
use super::gsro;
use super::params::TestParams;
use super::stream::{Pacer, RecvStop, WorkerCtx, WorkerEnd, send_buffer};
use super::tcp::WORKER_POLL;
use super::udp_stats::{HEADER_32, HEADER_64, Header, RecvAccounting, monotonic_now};

/// Client → server, iperf3 ≥ 3.12 (0x36373839 written little-endian: "9876").
pub(crate) const CONNECT_MSG: [u8; 4] = *b"9876";
/// Server → client, iperf3 ≥ 3.12 ("6789").
pub(crate) const CONNECT_REPLY: [u8; 4] = *b"6789";
/// Server → client, iperf3 ≤ 3.11: 987654321.
pub(crate) const LEGACY_CONNECT_REPLY: [u8; 4] = 987_654_321u32.to_le_bytes();

/// Socket buffer a UDP receiver asks for, so that a scheduling hiccup of a few
/// milliseconds does not overflow it at gigabit rates (iperf3 leaves the
/// default of ~200 KiB, i.e. six 32 KiB datagrams).
pub(crate) const UDP_RCVBUF: usize = 4 * 1024 * 1024;

/// Size a UDP socket's buffers: `-w` if given, else make sure a few blocks fit.
fn size_buffers(sock: &SockRef<'_>, params: &TestParams) -> io::Result<()> {
    if let Some(w) = params.window {
        sock.set_send_buffer_size(w as usize)?;
        sock.set_recv_buffer_size(w as usize)?;
        return Ok(());
    }
    let send = if params.gsro.gso {
        params.gsro.gso_bf_size.max(params.len)
    } else {
        params.len
    };
    let want_snd = send as usize * 4;
    if sock.send_buffer_size()? < want_snd {
        sock.set_send_buffer_size(want_snd)?;
    }
    if sock.recv_buffer_size()? < UDP_RCVBUF {
        // Capped by net.core.rmem_max; that is fine.
        let _ = sock.set_recv_buffer_size(UDP_RCVBUF);
    }
    Ok(())
}

/// Client side: open a UDP stream to `server` and complete the handshake.
pub(crate) fn connect(
    server: SocketAddr,
    params: &TestParams,
    timeout: Duration,
    stream: u32,
) -> Result<UdpSocket, NetError> {
    let fail = |e| NetError::Stream { stream, source: e };
    let local: SocketAddr = match server.ip() {
        IpAddr::V4(_) => (Ipv4Addr::UNSPECIFIED, 0).into(),
        IpAddr::V6(_) => (Ipv6Addr::UNSPECIFIED, 0).into(),
    };
    let sock = UdpSocket::bind(local).map_err(fail)?;
    size_buffers(&SockRef::from(&sock), params).map_err(fail)?;
    gsro::enable(&sock, &params.gsro);
    sock.connect(server).map_err(fail)?;
    let started = Instant::now();
    let deadline = started + timeout;
    let mut buf = vec![0u8; 65536];
    let mut skipped = 0;
    'resend: loop {
        sock.send(&CONNECT_MSG).map_err(fail)?;
        let resend_at = Instant::now() + Duration::from_secs(1);
        loop {
            let now = Instant::now();
            if now >= deadline {
                return Err(NetError::Timeout {
                    what: format!("the server's reply to the UDP connect of stream {stream}"),
                    after: started.elapsed(),
                });
            }
            if now >= resend_at {
                continue 'resend;
            }
            sock.set_read_timeout(Some(resend_at.min(deadline) - now))
                .map_err(fail)?;
            match sock.recv(&mut buf) {
                Ok(4) if buf[..4] == CONNECT_REPLY || buf[..4] == LEGACY_CONNECT_REPLY => {
                    return Ok(sock);
                }
                Ok(n) => {
                    // In reverse mode a data packet may overtake the reply.
                    skipped += 1;
                    if skipped > 8 {
                        return Err(NetError::Protocol {
                            expected: format!("the UDP connect reply \"6789\" on stream {stream}"),
                            received: format!(
                                "{n}-byte datagram {}",
                                super::control::preview(&buf[..n.min(16)])
                            ),
                        });
                    }
                }
                Err(e) if is_timeout(&e) || e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => {
                    return Err(NetError::ConnectionRefused {
                        peer: format!("{server} (UDP)"),
                    });
                }
                Err(e) => return Err(fail(e)),
            }
        }
    }
}

/// Server side: a UDP socket on the server's port that takes the next
/// stream's connect datagram (SO_REUSEADDR so a new one can follow).
pub(crate) fn listen(addr: SocketAddr) -> io::Result<UdpSocket> {
    let sock = Socket::new(Domain::for_address(addr), Type::DGRAM, None)?;
    sock.set_reuse_address(true)?;
    if addr.is_ipv6() && addr.ip().is_unspecified() {
        sock.set_only_v6(false)?;
    }
    sock.bind(&addr.into())?;
    Ok(sock.into())
}

/// Server side: wait for one stream's connect datagram on `listener`, connect
/// that socket to the client, put a fresh listener in its place and reply.
pub(crate) fn accept(
    listener: &mut UdpSocket,
    addr: SocketAddr,
    params: &TestParams,
    deadline: Instant,
    stream: u32,
) -> Result<UdpSocket, NetError> {
    let fail = |e| NetError::Stream { stream, source: e };
    let started = Instant::now();
    let mut buf = [0u8; 64];
    let peer = loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(NetError::Timeout {
                what: format!("the client's UDP connect datagram for stream {stream}"),
                after: started.elapsed(),
            });
        }
        listener
            .set_read_timeout(Some(left.min(WORKER_POLL)))
            .map_err(fail)?;
        match listener.recv_from(&mut buf) {
            // iperf3 does not look at the content; neither do we.
            Ok((_, peer)) => break peer,
            Err(e) if is_timeout(&e) || e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(fail(e)),
        }
    };
    listener.connect(peer).map_err(fail)?;
    size_buffers(&SockRef::from(&*listener), params).map_err(fail)?;
    gsro::enable(listener, &params.gsro);
    let fresh = listen(addr).map_err(fail)?;
    let sock = std::mem::replace(listener, fresh);
    sock.send(&CONNECT_REPLY).map_err(fail)?;
    Ok(sock)
}

/// Send paced datagrams with the iperf3 header until told to stop; with
/// GSO on the socket, each send carries several datagrams, each with its
/// own header (3.21's `--gsro`).
pub(crate) fn send_loop(s: &UdpSocket, ctx: &WorkerCtx) -> WorkerEnd {
    let min = if ctx.udp_counters_64bit {
        HEADER_64
    } else {
        HEADER_32
    };
    let dg = ctx.len.max(min);
    let (dg, send) = match gsro::segment_size(s).and_then(|seg| {
        gsro::send_size(seg, ctx.gso_bf_size as u32, min).map(|n| (seg as usize, n))
    }) {
        Some(gso) => gso,
        None => (dg, dg),
    };
    let mut buf = match send_buffer(send) {
        Ok(b) => b,
        Err(e) => return WorkerEnd::Failed(e),
    };
    let flags = &*ctx.flags;
    let limited = flags.byte_limit > 0 || flags.block_limit > 0;
    let mut pacer = Pacer::new(ctx.rate_bps);
    let (mut seq, mut bytes, mut packets) = (0u64, 0u64, 0u64);
    loop {
        if flags.stop_send.load(Ordering::Relaxed) || (limited && flags.limit_reached()) {
            return WorkerEnd::Stopped;
        }
        if ctx.rate_bps > 0 && !pacer.wait(&flags.stop_send) {
            return WorkerEnd::Stopped;
        }
        let (sec, usec) = monotonic_now();
        for (i, d) in buf.as_mut_slice().chunks_exact_mut(dg).enumerate() {
            let seq = seq + 1 + i as u64;
            Header { sec, usec, seq }.write(d, ctx.udp_counters_64bit);
        }
        let counting = flags.counting_send.load(Ordering::Relaxed);
        match s.send(buf.as_slice()) {
            Ok(n) => {
                let k = (n / dg).max(1) as u64;
                seq += k;
                pacer.sent(n);
                if limited {
                    flags.total_sent.fetch_add(n as u64, Ordering::Relaxed);
                    flags.blocks_sent.fetch_add(k, Ordering::Relaxed);
                }
                if counting {
                    bytes += n as u64;
                    packets += k;
                    ctx.counters.bytes.store(bytes, Ordering::Relaxed);
                    ctx.counters.packets_sent.store(packets, Ordering::Relaxed);
                    ctx.watch_end(packets);
                }
            }
            Err(e) if e.raw_os_error() == Some(libc::ENOBUFS) || is_timeout(&e) => {
                std::thread::yield_now()
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            // An ICMP "port unreachable" from the peer: it is gone.
            Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => return WorkerEnd::PeerClosed,
            Err(e) => return WorkerEnd::Failed(e),
        }
    }
}

/// Receive datagrams and account them until told to stop.
pub(crate) fn recv_loop(s: &UdpSocket, ctx: &WorkerCtx) -> WorkerEnd {
    if let Err(e) = s.set_read_timeout(Some(WORKER_POLL)) {
        return WorkerEnd::Failed(e);
    }
    let mut buf = vec![0u8; 65536];
    let flags = &*ctx.flags;
    let c = &*ctx.counters;
    let mut acct = RecvAccounting::default();
    let mut bytes = 0u64;
    let mut stop = RecvStop::new();
    let gro = gsro::gro_on(s);
    loop {
        if let Some(end) = stop.check(flags, || s.set_nonblocking(true)) {
            return end;
        }
        let got = if gro {
            gsro::recv(s, &mut buf)
        } else {
            s.recv(&mut buf).map(|n| (n, None))
        };
        match got {
            Ok((n, seg)) => {
                if !flags.counting_recv.load(Ordering::Relaxed) {
                    continue;
                }
                let (sec, usec) = monotonic_now();
                let arrival = sec as f64 + usec as f64 / 1e6;
                // One datagram, or (GRO) several of `seg` bytes, the last maybe shorter.
                for d in buf[..n].chunks(seg.unwrap_or(n).max(1)) {
                    // Too short for a header: a late handshake datagram, not data.
                    let Some(h) = Header::read(d, ctx.udp_counters_64bit) else {
                        continue;
                    };
                    acct.on_datagram(h.seq, arrival - h.sent_s());
                    bytes += d.len() as u64;
                }
                c.bytes.store(bytes, Ordering::Relaxed);
                c.rx_highest.store(acct.highest, Ordering::Relaxed);
                c.rx_lost.store(acct.lost, Ordering::Relaxed);
                c.rx_out_of_order
                    .store(acct.out_of_order, Ordering::Relaxed);
                c.rx_jitter_bits
                    .store(acct.jitter_s.to_bits(), Ordering::Relaxed);
            }
            Err(e) if stop.draining() && e.kind() == io::ErrorKind::WouldBlock => {
                return WorkerEnd::Stopped;
            }
            Err(e) if is_timeout(&e) || e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => {}
            Err(e) => return WorkerEnd::Failed(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Client → server, iperf3 ≤ 3.11 (the server accepts any content).
    const LEGACY_CONNECT_MSG: [u8; 4] = 123_456_789u32.to_le_bytes();

    #[test]
    fn handshake_bytes_match_the_wire() {
        assert_eq!(CONNECT_MSG, [0x39, 0x38, 0x37, 0x36]);
        assert_eq!(CONNECT_REPLY, [0x36, 0x37, 0x38, 0x39]);
        assert_eq!(LEGACY_CONNECT_MSG, [0x15, 0xcd, 0x5b, 0x07]);
        assert_eq!(LEGACY_CONNECT_REPLY, [0xb1, 0x68, 0xde, 0x3a]);
    }

    #[test]
    fn client_accepts_legacy_reply() {
        let server = UdpSocket::bind("127.0.0.1:0").unwrap();
        let addr = server.local_addr().unwrap();
        let t = std::thread::spawn(move || {
            let mut b = [0u8; 16];
            server
                .set_read_timeout(Some(Duration::from_secs(5)))
                .unwrap();
            let (n, peer) = server.recv_from(&mut b).unwrap();
            server.send_to(&LEGACY_CONNECT_REPLY, peer).unwrap();
            b[..n].to_vec()
        });
        let params = TestParams::from_json(&serde_json::json!({"udp": true})).unwrap();
        let s = connect(addr, &params, Duration::from_secs(5), 1).unwrap();
        assert_eq!(t.join().unwrap(), CONNECT_MSG.to_vec());
        assert_eq!(s.peer_addr().unwrap(), addr);
    }
}
