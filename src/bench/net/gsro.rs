//! iperf3 3.21's `--gsro` on a UDP socket: UDP_SEGMENT (GSO: one send of
//! several datagrams, cut by the kernel) and UDP_GRO (one receive of several
//! datagrams, with their size in a control message). Where the kernel lacks
//! one, the socket goes without it, as iperf3's does.

use std::io;
use std::net::UdpSocket;
use std::os::fd::{AsFd, AsRawFd};

use super::params::Gsro;
use crate::sockopt;

/// `<linux/udp.h>`: the socket options (level SOL_UDP) and the most
/// segments one GSO send may hold (UDP_MAX_SEGMENTS, 64 before Linux 6.9).
const UDP_SEGMENT: i32 = 103;
const UDP_GRO: i32 = 104;
const MAX_SEGMENTS: u32 = 64;

/// Ask for what `g` asks on `s`; a kernel without it leaves it off.
pub(crate) fn enable(s: &UdpSocket, g: &Gsro) {
    if g.gso && g.gso_dg_size > 0 {
        let _ = sockopt::set_int(s.as_fd(), libc::SOL_UDP, UDP_SEGMENT, g.gso_dg_size as i32);
    }
    if g.gro {
        let _ = sockopt::set_int(s.as_fd(), libc::SOL_UDP, UDP_GRO, 1);
    }
}

fn get(s: &UdpSocket, name: i32) -> Option<u32> {
    let mut v: libc::c_int = 0;
    let mut len = size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: a live c_int and its exact size as the out-buffer.
    let r = unsafe {
        libc::getsockopt(
            s.as_raw_fd(),
            libc::SOL_UDP,
            name,
            (&mut v as *mut i32).cast(),
            &mut len,
        )
    };
    (r == 0 && v > 0).then_some(v as u32)
}

/// The datagram size the kernel cuts this socket's sends into (GSO on).
pub(crate) fn segment_size(s: &UdpSocket) -> Option<u32> {
    get(s, UDP_SEGMENT)
}

/// Whether this socket receives coalesced datagrams (GRO on).
pub(crate) fn gro_on(s: &UdpSocket) -> bool {
    get(s, UDP_GRO).is_some()
}

/// The bytes one GSO send carries: `bf` (3.21's `gso_bf_size`), whole
/// datagrams of `dg`, at most the kernel's segment count; `None` when a
/// datagram cannot hold the header or no whole datagram fits (iperf3 then
/// sends without GSO).
pub(crate) fn send_size(dg: u32, bf: u32, header: usize) -> Option<usize> {
    if (dg as usize) < header || dg > bf {
        return None;
    }
    Some(((bf / dg).min(MAX_SEGMENTS) * dg) as usize)
}

/// Receive into `buf`: the bytes and the size of the datagrams they hold
/// (the GRO control message; `None`: one datagram).
pub(crate) fn recv(s: &UdpSocket, buf: &mut [u8]) -> io::Result<(usize, Option<usize>)> {
    let mut iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    // Room for one cmsg holding an int, aligned for cmsghdr.
    let mut control = [0u64; 8];
    // SAFETY: an all-zero msghdr is valid; the pointers set below outlive the call.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = size_of_val(&control) as _;
    // SAFETY: `msg` points at live buffers of the sizes given.
    let n = unsafe { libc::recvmsg(s.as_raw_fd(), &mut msg, 0) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((n as usize, gro_size(&msg)))
}

/// The UDP_GRO control message's datagram size, if the kernel sent one.
fn gro_size(msg: &libc::msghdr) -> Option<usize> {
    // SAFETY: `msg` was filled by recvmsg; CMSG_* walk its control buffer.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(msg);
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_UDP && (*c).cmsg_type == UDP_GRO {
                let v = std::ptr::read_unaligned(libc::CMSG_DATA(c).cast::<libc::c_int>());
                return (v > 0).then_some(v as usize);
            }
            c = libc::CMSG_NXTHDR(msg, c);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_send_holds_whole_datagrams_within_the_kernels_count() {
        assert_eq!(send_size(32768, 32768, 12), Some(32768));
        assert_eq!(send_size(1448, 65160, 12), Some(65160));
        assert_eq!(send_size(100, 65500, 12), Some(6400));
        assert_eq!(send_size(8, 65507, 12), None);
        assert_eq!(send_size(2000, 1000, 12), None);
    }

    #[test]
    fn gso_sends_arrive_coalesced_on_a_gro_socket_and_cut_on_a_plain_one() {
        let rx_gro = UdpSocket::bind("127.0.0.1:0").unwrap();
        let rx_plain = UdpSocket::bind("127.0.0.1:0").unwrap();
        let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
        let g = Gsro::on(1000);
        enable(&tx, &Gsro { gro: false, ..g });
        enable(&rx_gro, &Gsro { gso: false, ..g });
        assert_eq!(segment_size(&tx), Some(1000));
        assert!(gro_on(&rx_gro) && !gro_on(&rx_plain));
        let block = vec![7u8; 4000];
        for rx in [&rx_gro, &rx_plain] {
            tx.send_to(&block, rx.local_addr().unwrap()).unwrap();
        }
        let mut buf = vec![0u8; 65536];
        rx_gro
            .set_read_timeout(Some(std::time::Duration::from_secs(2)))
            .unwrap();
        assert_eq!(recv(&rx_gro, &mut buf).unwrap(), (4000, Some(1000)));
        rx_plain
            .set_read_timeout(Some(std::time::Duration::from_secs(2)))
            .unwrap();
        for _ in 0..4 {
            assert_eq!(recv(&rx_plain, &mut buf).unwrap(), (1000, None));
        }
    }
}
