//! TCP data streams: connecting with the cookie, and the send/receive loops.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::atomic::Ordering;
use std::time::Duration;

use socket2::{Domain, SockRef, Socket, Type};

use super::control::{Cookie, is_reset, is_timeout};
use super::error::NetError;
use super::params::TestParams;
use super::stream::{Pacer, RecvStop, WorkerCtx, WorkerEnd, send_buffer};
use super::wake::Waker;
use super::zerocopy::FileBlock;
use crate::bench::buffer::AlignedBuf;

/// How long a blocked data-socket call waits before looking at the stop flags.
pub(crate) const WORKER_POLL: Duration = Duration::from_millis(200);

/// Open one TCP data stream to the server and send the cookie.
pub(crate) fn connect(
    addr: SocketAddr,
    params: &TestParams,
    cookie: &Cookie,
    timeout: Duration,
    stream: u32,
) -> Result<TcpStream, NetError> {
    let fail = |e| NetError::Stream { stream, source: e };
    let sock = Socket::new(Domain::for_address(addr), Type::STREAM, None).map_err(fail)?;
    if let Some(w) = params.window {
        sock.set_send_buffer_size(w as usize).map_err(fail)?;
        sock.set_recv_buffer_size(w as usize).map_err(fail)?;
    }
    if let Some(mss) = params.mss {
        sock.set_tcp_mss(mss).map_err(fail)?;
    }
    if params.nodelay {
        sock.set_tcp_nodelay(true).map_err(fail)?;
    }
    set_pacing(&sock, params.fq_rate_bps).map_err(fail)?;
    sock.connect_timeout(&addr.into(), timeout).map_err(fail)?;
    let s: TcpStream = sock.into();
    s.set_write_timeout(Some(timeout)).map_err(fail)?;
    (&s).write_all(cookie.bytes()).map_err(fail)?;
    Ok(s)
}

/// Apply the client's socket options to a stream the server accepted.
pub(crate) fn configure_accepted(s: &TcpStream, params: &TestParams) -> std::io::Result<()> {
    let sock = SockRef::from(s);
    if let Some(w) = params.window {
        sock.set_send_buffer_size(w as usize)?;
        sock.set_recv_buffer_size(w as usize)?;
    }
    if params.nodelay {
        sock.set_tcp_nodelay(true)?;
    }
    set_pacing(&sock, params.fq_rate_bps)
}

/// `--fq-rate` (bit/s; 0 = none): the socket's SO_MAX_PACING_RATE, which
/// takes bytes per second (saturated at the option's u64 range).
fn set_pacing(sock: &Socket, rate_bps: u64) -> std::io::Result<()> {
    if rate_bps == 0 {
        return Ok(());
    }
    let bytes: u64 = rate_bps / 8;
    // SAFETY: a valid socket descriptor and a u64 value of the size given.
    let r = unsafe {
        libc::setsockopt(
            sock.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_MAX_PACING_RATE,
            (&bytes as *const u64).cast(),
            size_of::<u64>() as libc::socklen_t,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// The congestion control algorithm of a socket, e.g. "bbr".
pub(crate) fn congestion(s: &TcpStream) -> Option<String> {
    let name = SockRef::from(s).tcp_congestion().ok()?;
    let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
    Some(String::from_utf8_lossy(&name[..end]).into_owned())
}

/// Write blocks until told to stop; counts bytes while counting is on.
pub(crate) fn send_loop(s: &TcpStream, ctx: &WorkerCtx) -> WorkerEnd {
    if let Err(e) = s.set_write_timeout(Some(WORKER_POLL)) {
        return WorkerEnd::Failed(e);
    }
    let block = match Block::new(ctx) {
        Ok(b) => b,
        Err(e) => return WorkerEnd::Failed(e),
    };
    let flags = &*ctx.flags;
    let limited = flags.byte_limit > 0 || flags.block_limit > 0;
    let mut pacer = Pacer::new(ctx.rate_bps);
    let (mut counted, mut blocks) = (0u64, 0u64);
    let mut w = s;
    loop {
        if flags.stop_send.load(Ordering::Relaxed) || (limited && flags.limit_reached()) {
            return WorkerEnd::Stopped;
        }
        if ctx.rate_bps > 0 && !pacer.wait(&flags.stop_send) {
            return WorkerEnd::Stopped;
        }
        // A write that starts while counting counts, even if the test ends during it.
        let counting = flags.counting_send.load(Ordering::Relaxed);
        match block.send(&mut w) {
            Ok(n) => {
                pacer.sent(n);
                if limited {
                    flags.total_sent.fetch_add(n as u64, Ordering::Relaxed);
                    flags.blocks_sent.fetch_add(1, Ordering::Relaxed);
                }
                if counting {
                    counted += n as u64;
                    ctx.counters.bytes.store(counted, Ordering::Relaxed);
                    blocks += 1;
                    ctx.watch_end(blocks);
                }
            }
            Err(e) if is_timeout(&e) || e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) if is_reset(&e) => return WorkerEnd::PeerClosed,
            Err(e) => return WorkerEnd::Failed(e),
        }
    }
}

/// What a TCP sender sends: its block from memory with write(2), or with
/// `-Z` from a file with sendfile(2).
enum Block {
    Memory(AlignedBuf),
    File(FileBlock),
}

impl Block {
    fn new(ctx: &WorkerCtx) -> std::io::Result<Block> {
        let buf = send_buffer(ctx.len)?;
        Ok(if ctx.zerocopy {
            Block::File(FileBlock::new(buf.as_slice())?)
        } else {
            Block::Memory(buf)
        })
    }

    fn send(&self, w: &mut &TcpStream) -> std::io::Result<usize> {
        match self {
            Block::Memory(b) => w.write(b.as_slice()),
            Block::File(f) => f.send(w),
        }
    }
}

/// Read until told to stop or the peer closes; counts bytes while counting
/// is on. In the final drain (server, after TEST_END) it counts what is
/// already queued, then stops.
pub(crate) fn recv_loop(s: &TcpStream, ctx: &WorkerCtx) -> WorkerEnd {
    if let Err(e) = s.set_read_timeout(Some(WORKER_POLL)) {
        return WorkerEnd::Failed(e);
    }
    let mut waker = match Waker::start(s, ctx.recv_lowat) {
        Ok(w) => w,
        Err(e) => return WorkerEnd::Failed(e),
    };
    // Reads as large as the highest low-water mark (one block, as iperf3's
    // receiver reads, when the mark stays there), into a page-aligned
    // buffer like iperf3's; a large one is its own mapping, returned when
    // the stream ends.
    let mut buf = match AlignedBuf::for_block_io(ctx.recv_lowat.read_size(ctx.len)) {
        Ok(b) => b,
        Err(e) => return WorkerEnd::Failed(e),
    };
    let flags = &*ctx.flags;
    let mut counted = 0u64;
    let mut stop = RecvStop::new();
    let mut r = s;
    loop {
        if let Some(end) = stop.check(flags, || s.set_nonblocking(true)) {
            return end;
        }
        let got = if ctx.skip_rx_copy {
            recv_discard(s, buf.as_mut_slice().len())
        } else {
            r.read(buf.as_mut_slice())
        };
        match got {
            Ok(0) => return WorkerEnd::PeerClosed,
            Ok(n) => {
                if flags.counting_recv.load(Ordering::Relaxed) {
                    counted += n as u64;
                    ctx.counters.bytes.store(counted, Ordering::Relaxed);
                }
                if let Err(e) = waker.read(s, n) {
                    return WorkerEnd::Failed(e);
                }
            }
            Err(e) if stop.draining() && e.kind() == std::io::ErrorKind::WouldBlock => {
                return WorkerEnd::Stopped;
            }
            Err(e) if is_timeout(&e) || e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) if is_reset(&e) => return WorkerEnd::PeerClosed,
            Err(e) => return WorkerEnd::Failed(e),
        }
    }
}

/// Receive up to `len` bytes and drop them in the kernel (TCP's MSG_TRUNC:
/// nothing is copied to user space; iperf3 3.19's `--skip-rx-copy`).
fn recv_discard(s: &TcpStream, len: usize) -> std::io::Result<usize> {
    // SAFETY: with MSG_TRUNC on a TCP socket the kernel writes nothing to
    // the buffer; a null buffer of `len` bytes is what it documents.
    let n = unsafe { libc::recv(s.as_raw_fd(), std::ptr::null_mut(), len, libc::MSG_TRUNC) };
    if n < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

/// Bytes written but not yet acknowledged by the peer (SIOCOUTQ).
pub(crate) fn unacked(s: &TcpStream) -> u64 {
    let mut n: libc::c_int = 0;
    // SAFETY: TIOCOUTQ writes one int to the valid pointer.
    let rc = unsafe { libc::ioctl(s.as_raw_fd(), libc::TIOCOUTQ, &mut n) };
    if rc == 0 { n.max(0) as u64 } else { 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_discarding_receive_takes_the_bytes_without_copying_them() {
        use std::io::Write;
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let mut tx = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (rx, _) = l.accept().unwrap();
        tx.write_all(&[9u8; 5000]).unwrap();
        drop(tx);
        let mut got = 0;
        loop {
            match recv_discard(&rx, 4096).unwrap() {
                0 => break,
                n => got += n,
            }
        }
        assert_eq!(got, 5000);
    }
}
