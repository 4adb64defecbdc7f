//! ICMP echo ("ping") from our own socket: an unprivileged ICMP datagram
//! socket when `net.ipv4.ping_group_range` allows it, else a raw socket (root).
//! With [`Pinger::set_dont_fragment`] every echo leaves with DF set and the
//! cached path MTU ignored (`IP_PMTUDISC_PROBE`), so a probe of N bytes either
//! reaches the peer whole or not at all.

use std::io;
use std::mem::MaybeUninit;
use std::net::{IpAddr, SocketAddr};
use std::os::fd::AsFd;
use std::time::{Duration, Instant};

use socket2::{Domain, Protocol, SockAddr, Socket, Type};

use crate::sockopt;

/// IPv4 header (no options) + ICMP header.
pub(crate) const V4_OVERHEAD: usize = 28;
/// IPv6 header + ICMPv6 header.
pub(crate) const V6_OVERHEAD: usize = 48;

pub(crate) struct Pinger {
    sock: Socket,
    raw: bool,
    v6: bool,
    dest: SockAddr,
    dest_ip: IpAddr,
    ident: u16,
    seq: u16,
}

fn checksum(data: &[u8]) -> u16 {
    let mut sum: u32 = 0;
    for c in data.chunks(2) {
        let w = if c.len() == 2 {
            u16::from_be_bytes([c[0], c[1]])
        } else {
            u16::from_be_bytes([c[0], 0])
        };
        sum = sum.wrapping_add(w as u32);
    }
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

impl Pinger {
    /// A pinger towards `dest`.
    pub(crate) fn new(dest: IpAddr) -> io::Result<Pinger> {
        let (domain, proto) = match dest {
            IpAddr::V4(_) => (Domain::IPV4, Protocol::ICMPV4),
            IpAddr::V6(_) => (Domain::IPV6, Protocol::ICMPV6),
        };
        let (sock, raw) = match Socket::new(domain, Type::DGRAM, Some(proto)) {
            Ok(s) => (s, false),
            Err(dgram_err) => match Socket::new(domain, Type::RAW, Some(proto)) {
                Ok(s) => (s, true),
                Err(_) => return Err(dgram_err),
            },
        };
        let ident = (std::process::id() as u16) ^ (Instant::now().elapsed().subsec_nanos() as u16);
        Ok(Pinger {
            sock,
            raw,
            v6: dest.is_ipv6(),
            dest: SockAddr::from(SocketAddr::new(dest, 0)),
            dest_ip: dest,
            ident,
            seq: 0,
        })
    }

    /// Set DF on every echo and ignore the cached path MTU (probe mode).
    pub(crate) fn set_dont_fragment(&self) -> io::Result<()> {
        let fd = self.sock.as_fd();
        if self.v6 {
            sockopt::set_int(
                fd,
                libc::IPPROTO_IPV6,
                libc::IPV6_MTU_DISCOVER,
                libc::IPV6_PMTUDISC_PROBE,
            )
        } else {
            sockopt::set_int(
                fd,
                libc::IPPROTO_IP,
                libc::IP_MTU_DISCOVER,
                libc::IP_PMTUDISC_PROBE,
            )
        }
    }

    /// Bytes of IP and ICMP header around the payload.
    pub(crate) fn overhead(&self) -> usize {
        if self.v6 { V6_OVERHEAD } else { V4_OVERHEAD }
    }

    /// Send one echo whose IP packet is `packet_size` bytes and wait up to
    /// `timeout` for its reply: `Ok(Some(rtt))`, `Ok(None)` when none came,
    /// `Err` with EMSGSIZE when the local interface's MTU is smaller.
    pub(crate) fn echo(
        &mut self,
        packet_size: usize,
        timeout: Duration,
    ) -> io::Result<Option<Duration>> {
        let payload = packet_size.saturating_sub(self.overhead()).max(8);
        self.seq = self.seq.wrapping_add(1);
        let mut pkt = vec![0u8; 8 + payload];
        pkt[0] = if self.v6 { 128 } else { 8 };
        pkt[4..6].copy_from_slice(&self.ident.to_be_bytes());
        pkt[6..8].copy_from_slice(&self.seq.to_be_bytes());
        for (i, b) in pkt[8..].iter_mut().enumerate() {
            *b = (i % 251) as u8;
        }
        if !self.v6 {
            let c = checksum(&pkt);
            pkt[2..4].copy_from_slice(&c.to_be_bytes());
        }
        let sent = Instant::now();
        self.sock.send_to(&pkt, &self.dest)?;
        let deadline = sent + timeout;
        let mut buf = vec![MaybeUninit::<u8>::uninit(); 70_000];
        loop {
            let now = Instant::now();
            if now >= deadline {
                return Ok(None);
            }
            self.sock.set_read_timeout(Some(deadline - now))?;
            let (n, from) = match self.sock.recv_from(&mut buf) {
                Ok(r) => r,
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) =>
                {
                    return Ok(None);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                // An ICMP error queued on the socket (e.g. unreachable): not delivered.
                Err(_) => continue,
            };
            // SAFETY: recv_from initialised the first n bytes.
            let data: Vec<u8> = buf[..n]
                .iter()
                .map(|b| unsafe { b.assume_init() })
                .collect();
            if from.as_socket().map(|a| a.ip()) != Some(self.dest_ip) {
                continue;
            }
            if self.is_our_reply(&data) {
                return Ok(Some(sent.elapsed()));
            }
        }
    }

    fn is_our_reply(&self, data: &[u8]) -> bool {
        let icmp = if self.raw && !self.v6 {
            let ihl = data.first().map_or(0, |b| ((b & 0x0f) as usize) * 4);
            match data.get(ihl..) {
                Some(d) => d,
                None => return false,
            }
        } else {
            data
        };
        if icmp.len() < 8 {
            return false;
        }
        let reply_type = if self.v6 { 129 } else { 0 };
        let seq = u16::from_be_bytes([icmp[6], icmp[7]]);
        let id = u16::from_be_bytes([icmp[4], icmp[5]]);
        // Datagram sockets: the kernel sets the identifier and only delivers our replies.
        icmp[0] == reply_type && seq == self.seq && (!self.raw || id == self.ident)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checksum_of_a_known_echo() {
        // type 8, code 0, id 0x1234, seq 1, no payload.
        let pkt = [8, 0, 0, 0, 0x12, 0x34, 0, 1];
        let c = checksum(&pkt);
        let mut full = pkt;
        full[2..4].copy_from_slice(&c.to_be_bytes());
        assert_eq!(checksum(&full), 0);
    }

    #[test]
    fn loopback_answers_when_we_may_ping() {
        let Ok(mut p) = Pinger::new("127.0.0.1".parse().unwrap()) else {
            return; // neither ping sockets nor raw sockets allowed for this user
        };
        p.set_dont_fragment().unwrap();
        let r = p.echo(1000, Duration::from_secs(2)).unwrap();
        assert!(r.is_some(), "no echo reply from 127.0.0.1");
        // Larger than lo's MTU (65536) cannot leave with DF.
        let err = p.echo(70_000, Duration::from_secs(1));
        assert!(err.is_err());
    }
}
