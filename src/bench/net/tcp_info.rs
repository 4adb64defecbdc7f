//! TCP_INFO: retransmits, RTT and congestion window of a TCP socket.

use std::io;
use std::os::fd::AsRawFd;

/// The leading part of the kernel's `struct tcp_info` (linux/tcp.h), up to
/// `tcpi_snd_wnd` (5.19 and later; an older kernel copies less and leaves it 0).
#[repr(C)]
#[derive(Default)]
struct RawTcpInfo {
    state: u8,
    ca_state: u8,
    retransmits: u8,
    probes: u8,
    backoff: u8,
    options: u8,
    wscale: u8,
    flags: u8,
    rto: u32,
    ato: u32,
    snd_mss: u32,
    rcv_mss: u32,
    unacked: u32,
    sacked: u32,
    lost: u32,
    retrans: u32,
    fackets: u32,
    last_data_sent: u32,
    last_ack_sent: u32,
    last_data_recv: u32,
    last_ack_recv: u32,
    pmtu: u32,
    rcv_ssthresh: u32,
    rtt: u32,
    rttvar: u32,
    snd_ssthresh: u32,
    snd_cwnd: u32,
    advmss: u32,
    reordering: u32,
    rcv_rtt: u32,
    rcv_space: u32,
    total_retrans: u32,
    pacing_rate: u64,
    max_pacing_rate: u64,
    bytes_acked: u64,
    bytes_received: u64,
    segs_out: u32,
    segs_in: u32,
    notsent_bytes: u32,
    min_rtt: u32,
    data_segs_in: u32,
    data_segs_out: u32,
    delivery_rate: u64,
    busy_time: u64,
    rwnd_limited: u64,
    sndbuf_limited: u64,
    delivered: u32,
    delivered_ce: u32,
    bytes_sent: u64,
    bytes_retrans: u64,
    dsack_dups: u32,
    reord_seen: u32,
    rcv_ooopack: u32,
    snd_wnd: u32,
}

/// What iperf3 records from TCP_INFO at each interval.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct TcpInfo {
    /// Retransmitted segments since the connection started.
    pub(crate) total_retrans: u32,
    /// Smoothed RTT in microseconds.
    pub(crate) rtt_us: u32,
    pub(crate) rttvar_us: u32,
    /// Congestion window in bytes (`snd_cwnd × snd_mss`).
    pub(crate) snd_cwnd_bytes: u64,
    pub(crate) snd_mss: u32,
    pub(crate) pmtu: u32,
    /// The peer's advertised window in bytes (0 on kernels before 5.19).
    pub(crate) snd_wnd: u32,
    /// Reordering events seen (0 on kernels before 4.19).
    pub(crate) reord_seen: u32,
}

/// Read TCP_INFO from a connected TCP socket.
pub(crate) fn read(sock: &impl AsRawFd) -> io::Result<TcpInfo> {
    let mut raw = RawTcpInfo::default();
    let mut len = size_of::<RawTcpInfo>() as libc::socklen_t;
    // SAFETY: `raw` is a plain-old-data buffer of `len` bytes that outlives the
    // call; the kernel writes at most `len` bytes and updates `len`.
    let rc = unsafe {
        libc::getsockopt(
            sock.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            (&mut raw as *mut RawTcpInfo).cast(),
            &mut len,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(TcpInfo {
        total_retrans: raw.total_retrans,
        rtt_us: raw.rtt,
        rttvar_us: raw.rttvar,
        snd_cwnd_bytes: raw.snd_cwnd as u64 * raw.snd_mss as u64,
        snd_mss: raw.snd_mss,
        pmtu: raw.pmtu,
        snd_wnd: raw.snd_wnd,
        reord_seen: raw.reord_seen,
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn reads_a_loopback_connection() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let c = std::net::TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let _s = l.accept().unwrap();
        let info = super::read(&c).unwrap();
        assert!(info.snd_mss > 0);
        assert!(info.snd_cwnd_bytes >= info.snd_mss as u64);
        assert!(info.pmtu > 0);
        assert!(info.snd_wnd > 0, "the kernel reports the peer's window");
    }
}
