//! A blocking AF_NETLINK socket: send one request, collect its replies.
//!
//! - requests carry a per-socket sequence number; replies with another
//!   sequence number (stale replies, notifications) are skipped;
//! - a non-dump request always asks for an ACK (`NLM_F_ACK`), so its end is
//!   certain: the ACK, or an error;
//! - a dump ends at `NLMSG_DONE`, and is retried when the kernel marks it
//!   inconsistent (`NLM_F_DUMP_INTR`);
//! - errors carry the kernel errno and its extended-ACK message
//!   (`NETLINK_EXT_ACK` + `NETLINK_CAP_ACK` are switched on);
//! - each datagram is sized with `MSG_PEEK | MSG_TRUNC` first, so nothing is
//!   ever truncated.
//!
//! [`Socket::add_membership`] and [`Socket::recv_messages`] are what a
//! notification listener (RTNLGRP_LINK, the ethtool "monitor" group) needs;
//! give it a socket of its own, so requests never wait behind notifications.

use std::io;
use std::mem::size_of;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::Duration;

use super::attr::{AttrTable, align};

pub const NETLINK_ROUTE: i32 = 0;
pub const NETLINK_GENERIC: i32 = 16;

const SOL_NETLINK: i32 = 270;
const NETLINK_ADD_MEMBERSHIP: i32 = 1;
const NETLINK_DROP_MEMBERSHIP: i32 = 2;
const NETLINK_CAP_ACK: i32 = 10;
const NETLINK_EXT_ACK: i32 = 11;

pub const NLMSG_HDRLEN: usize = 16;
pub const NLMSG_NOOP: u16 = 1;
pub const NLMSG_ERROR: u16 = 2;
pub const NLMSG_DONE: u16 = 3;
pub const NLMSG_OVERRUN: u16 = 4;

pub const NLM_F_REQUEST: u16 = 0x01;
pub const NLM_F_MULTI: u16 = 0x02;
pub const NLM_F_ACK: u16 = 0x04;
pub const NLM_F_DUMP_INTR: u16 = 0x10;
pub const NLM_F_DUMP: u16 = 0x300;
/// The header flags of every non-dump request we send (what ethtool and ip send).
pub const REQUEST_FLAGS: u16 = NLM_F_REQUEST | NLM_F_ACK;
/// In an error message: the original request's payload was left out.
const NLM_F_CAPPED: u16 = 0x100;
/// In an error message: extended-ACK attributes follow.
const NLM_F_ACK_TLVS: u16 = 0x200;

const NLMSGERR_ATTR_MSG: u16 = 1;
const NLMSGERR_ATTR_OFFS: u16 = 2;

/// How long to wait for the kernel before giving up on a request.
const RECV_TIMEOUT: Duration = Duration::from_secs(10);
/// How often a dump the kernel marked inconsistent is retried.
const DUMP_RETRIES: usize = 5;

/// The kernel refused a request (or the reply could not be understood):
/// errno plus the extended-ACK message when there was one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Nack {
    pub errno: i32,
    pub extack: Option<String>,
}

impl Nack {
    pub fn errno(errno: i32) -> Self {
        Nack {
            errno,
            extack: None,
        }
    }
    /// A reply we could not parse (errno EPROTO, our description as message).
    pub fn malformed(what: impl std::fmt::Display) -> Self {
        Nack {
            errno: libc::EPROTO,
            extack: Some(format!("malformed reply from the kernel: {what}")),
        }
    }
}

impl From<io::Error> for Nack {
    fn from(e: io::Error) -> Self {
        Nack::errno(e.raw_os_error().unwrap_or(libc::EIO))
    }
}

/// One netlink message as received.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    pub kind: u16,
    pub flags: u16,
    pub seq: u32,
    pub pid: u32,
    /// Everything after `struct nlmsghdr`.
    pub payload: Vec<u8>,
}

/// `struct nlmsghdr` followed by `payload`.
pub fn encode_message(kind: u16, flags: u16, seq: u32, payload: &[u8]) -> Result<Vec<u8>, Nack> {
    let len =
        u32::try_from(NLMSG_HDRLEN + payload.len()).map_err(|_| Nack::errno(libc::EMSGSIZE))?;
    let mut m = Vec::with_capacity(align(len as usize));
    m.extend_from_slice(&len.to_ne_bytes());
    m.extend_from_slice(&kind.to_ne_bytes());
    m.extend_from_slice(&flags.to_ne_bytes());
    m.extend_from_slice(&seq.to_ne_bytes());
    m.extend_from_slice(&0u32.to_ne_bytes()); // pid: 0 = to the kernel
    m.extend_from_slice(payload);
    Ok(m)
}

/// Split a datagram into messages.
pub fn parse_messages(mut buf: &[u8]) -> Result<Vec<Message>, Nack> {
    let mut out = Vec::new();
    while buf.len() >= NLMSG_HDRLEN {
        let u32_at = |i: usize| u32::from_ne_bytes([buf[i], buf[i + 1], buf[i + 2], buf[i + 3]]);
        let len = u32_at(0) as usize;
        if len < NLMSG_HDRLEN || len > buf.len() {
            return Err(Nack::malformed(format!(
                "message length {len} with {} byte(s) left",
                buf.len()
            )));
        }
        out.push(Message {
            kind: u16::from_ne_bytes([buf[4], buf[5]]),
            flags: u16::from_ne_bytes([buf[6], buf[7]]),
            seq: u32_at(8),
            pid: u32_at(12),
            payload: buf[NLMSG_HDRLEN..len].to_vec(),
        });
        buf = &buf[align(len).min(buf.len())..];
    }
    if !buf.is_empty() {
        return Err(Nack::malformed(format!("{} trailing byte(s)", buf.len())));
    }
    Ok(out)
}

/// Decode an `NLMSG_ERROR` payload: `Ok(())` for an ACK (error 0).
pub fn parse_error(flags: u16, payload: &[u8]) -> Result<(), Nack> {
    if payload.len() < 4 + NLMSG_HDRLEN {
        return Err(Nack::malformed("short NLMSG_ERROR"));
    }
    let error = i32::from_ne_bytes([payload[0], payload[1], payload[2], payload[3]]);
    if error == 0 {
        return Ok(());
    }
    let mut nack = Nack::errno(error.checked_neg().unwrap_or(libc::EIO));
    if flags & NLM_F_ACK_TLVS != 0 {
        // The original request's header, and unless capped its payload, come first.
        let orig_len =
            u32::from_ne_bytes([payload[4], payload[5], payload[6], payload[7]]) as usize;
        let skip = if flags & NLM_F_CAPPED != 0 {
            4 + NLMSG_HDRLEN
        } else {
            4 + align(orig_len)
        };
        if let Some(Ok(t)) = payload.get(skip..).map(AttrTable::parse) {
            let msg = t.string(NLMSGERR_ATTR_MSG).filter(|m| !m.is_empty());
            let offs = t.u32(NLMSGERR_ATTR_OFFS).ok().flatten();
            nack.extack = match (msg, offs) {
                (Some(m), Some(o)) => Some(format!("{m} (at byte {o} of the request)")),
                (m, _) => m,
            };
        }
    }
    Err(nack)
}

/// One AF_NETLINK socket, bound, with its own sequence numbers.
#[derive(Debug)]
pub struct Socket {
    fd: OwnedFd,
    port: u32,
    seq: u32,
    buf: Vec<u8>,
}

fn setsockopt_int(fd: &OwnedFd, level: i32, name: i32, value: i32) -> io::Result<()> {
    // SAFETY: passes a pointer to a live c_int and its exact size.
    let r = unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            level,
            name,
            (&value as *const i32).cast(),
            size_of::<i32>() as libc::socklen_t,
        )
    };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

fn kernel_addr() -> libc::sockaddr_nl {
    // SAFETY: sockaddr_nl is plain data; all-zero is a valid value (the kernel).
    let mut a: libc::sockaddr_nl = unsafe { std::mem::zeroed() };
    a.nl_family = libc::AF_NETLINK as libc::sa_family_t;
    a
}

impl Socket {
    /// Open and bind a netlink socket of `protocol` ([`NETLINK_ROUTE`], [`NETLINK_GENERIC`])
    /// in the calling thread's network namespace.
    pub fn open(protocol: i32) -> io::Result<Self> {
        // SAFETY: plain syscall; the result is checked before use.
        let raw = unsafe {
            libc::socket(
                libc::AF_NETLINK,
                libc::SOCK_RAW | libc::SOCK_CLOEXEC,
                protocol,
            )
        };
        if raw < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `raw` is a fresh descriptor we own.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        // Extended ACK is best effort (kernels before 4.12 lack it).
        let _ = setsockopt_int(&fd, SOL_NETLINK, NETLINK_EXT_ACK, 1);
        let _ = setsockopt_int(&fd, SOL_NETLINK, NETLINK_CAP_ACK, 1);
        let tv = libc::timeval {
            tv_sec: RECV_TIMEOUT.as_secs() as libc::time_t,
            tv_usec: 0,
        };
        // SAFETY: pointer to a live timeval and its exact size.
        let r = unsafe {
            libc::setsockopt(
                fd.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_RCVTIMEO,
                (&tv as *const libc::timeval).cast(),
                size_of::<libc::timeval>() as libc::socklen_t,
            )
        };
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
        let addr = kernel_addr();
        // SAFETY: pointer to a live sockaddr_nl and its exact size.
        let r = unsafe {
            libc::bind(
                fd.as_raw_fd(),
                (&addr as *const libc::sockaddr_nl).cast(),
                size_of::<libc::sockaddr_nl>() as libc::socklen_t,
            )
        };
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
        let mut bound = kernel_addr();
        let mut len = size_of::<libc::sockaddr_nl>() as libc::socklen_t;
        // SAFETY: pointer to a writable sockaddr_nl and its size.
        let r = unsafe {
            libc::getsockname(
                fd.as_raw_fd(),
                (&mut bound as *mut libc::sockaddr_nl).cast(),
                &mut len,
            )
        };
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Socket {
            fd,
            port: bound.nl_pid,
            seq: 0,
            buf: vec![0; 64 * 1024],
        })
    }

    /// Receive the multicast group `group` (e.g. RTNLGRP_LINK = 1, or a genetlink group id).
    pub fn add_membership(&self, group: u32) -> io::Result<()> {
        setsockopt_int(&self.fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, group as i32)
    }
    /// Stop receiving the multicast group `group`.
    pub fn drop_membership(&self, group: u32) -> io::Result<()> {
        setsockopt_int(&self.fd, SOL_NETLINK, NETLINK_DROP_MEMBERSHIP, group as i32)
    }

    fn next_seq(&mut self) -> u32 {
        self.seq = self.seq.wrapping_add(1).max(1);
        self.seq
    }

    fn send(&self, msg: &[u8]) -> io::Result<()> {
        let addr = kernel_addr();
        loop {
            // SAFETY: pointers to live buffers with their exact sizes.
            let r = unsafe {
                libc::sendto(
                    self.fd.as_raw_fd(),
                    msg.as_ptr().cast(),
                    msg.len(),
                    0,
                    (&addr as *const libc::sockaddr_nl).cast(),
                    size_of::<libc::sockaddr_nl>() as libc::socklen_t,
                )
            };
            if r >= 0 {
                return Ok(());
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }

    fn recv_into_buf(&mut self, flags: i32) -> io::Result<usize> {
        loop {
            // SAFETY: the buffer is live and writable for its length.
            let r = unsafe {
                libc::recv(
                    self.fd.as_raw_fd(),
                    self.buf.as_mut_ptr().cast(),
                    self.buf.len(),
                    flags,
                )
            };
            if r >= 0 {
                return Ok(r as usize);
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }

    /// Receive one datagram (blocking, with a timeout) and split it into messages.
    pub fn recv_messages(&mut self) -> Result<Vec<Message>, Nack> {
        let need = self
            .recv_into_buf(libc::MSG_PEEK | libc::MSG_TRUNC)
            .map_err(recv_err)?;
        if need > self.buf.len() {
            self.buf.resize(need, 0);
        }
        let n = self.recv_into_buf(0).map_err(recv_err)?;
        parse_messages(&self.buf[..n])
    }

    /// Send a request (`NLM_F_REQUEST | NLM_F_ACK | extra_flags`) and return its
    /// reply messages, read up to the ACK. An error reply becomes `Err`.
    pub fn request(
        &mut self,
        kind: u16,
        extra_flags: u16,
        payload: &[u8],
    ) -> Result<Vec<Message>, Nack> {
        let seq = self.next_seq();
        let msg = encode_message(kind, REQUEST_FLAGS | extra_flags, seq, payload)?;
        self.send(&msg)?;
        let mut replies = Vec::new();
        loop {
            for m in self.recv_messages()? {
                if !self.is_reply(&m, seq) {
                    continue;
                }
                match m.kind {
                    NLMSG_NOOP => {}
                    NLMSG_ERROR => {
                        parse_error(m.flags, &m.payload)?;
                        return Ok(replies);
                    }
                    NLMSG_OVERRUN => return Err(Nack::errno(libc::ENOBUFS)),
                    _ => replies.push(m),
                }
            }
        }
    }

    /// Send a dump request (`NLM_F_REQUEST | NLM_F_DUMP`) and return every reply
    /// message up to `NLMSG_DONE`. Retried when the kernel says the dump was
    /// interrupted by a concurrent change.
    pub fn dump(&mut self, kind: u16, payload: &[u8]) -> Result<Vec<Message>, Nack> {
        let mut tries = 0;
        loop {
            let (msgs, interrupted) = self.dump_once(kind, payload)?;
            tries += 1;
            if !interrupted || tries >= DUMP_RETRIES {
                return match interrupted {
                    false => Ok(msgs),
                    true => Err(Nack {
                        errno: libc::EBUSY,
                        extack: Some("dump kept being interrupted by concurrent changes".into()),
                    }),
                };
            }
        }
    }

    fn dump_once(&mut self, kind: u16, payload: &[u8]) -> Result<(Vec<Message>, bool), Nack> {
        let seq = self.next_seq();
        let msg = encode_message(kind, NLM_F_REQUEST | NLM_F_DUMP, seq, payload)?;
        self.send(&msg)?;
        let mut replies = Vec::new();
        let mut interrupted = false;
        loop {
            for m in self.recv_messages()? {
                if !self.is_reply(&m, seq) {
                    continue;
                }
                interrupted |= m.flags & NLM_F_DUMP_INTR != 0;
                match m.kind {
                    NLMSG_NOOP => {}
                    NLMSG_DONE => {
                        // DONE carries the dump's final status (and may carry extack).
                        if m.payload.len() >= 4 {
                            let err = i32::from_ne_bytes([
                                m.payload[0],
                                m.payload[1],
                                m.payload[2],
                                m.payload[3],
                            ]);
                            if err != 0 {
                                return Err(Nack::errno(err.checked_neg().unwrap_or(libc::EIO)));
                            }
                        }
                        return Ok((replies, interrupted));
                    }
                    NLMSG_ERROR => {
                        parse_error(m.flags, &m.payload)?;
                        return Ok((replies, interrupted));
                    }
                    NLMSG_OVERRUN => return Err(Nack::errno(libc::ENOBUFS)),
                    _ => replies.push(m),
                }
            }
        }
    }

    fn is_reply(&self, m: &Message, seq: u32) -> bool {
        m.seq == seq && (m.pid == self.port || m.pid == 0)
    }
}

fn recv_err(e: io::Error) -> Nack {
    match e.kind() {
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => Nack {
            errno: libc::ETIMEDOUT,
            extack: Some(format!(
                "no reply from the kernel within {} s",
                RECV_TIMEOUT.as_secs()
            )),
        },
        _ => e.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nic::netlink::attr::Builder;

    fn error_msg(errno: i32, flags: u16, tlvs: &[u8]) -> Vec<u8> {
        let mut p = (-errno).to_ne_bytes().to_vec();
        p.extend_from_slice(&encode_message(0x15, NLM_F_REQUEST | NLM_F_ACK, 7, &[]).unwrap());
        p.extend_from_slice(tlvs);
        encode_message(NLMSG_ERROR, flags, 7, &p).unwrap()
    }

    #[test]
    fn messages_round_trip() {
        let mut buf = encode_message(20, NLM_F_MULTI, 3, &[1, 2, 3, 4, 5]).unwrap();
        buf.resize(align(buf.len()), 0);
        buf.extend_from_slice(&encode_message(NLMSG_DONE, NLM_F_MULTI, 3, &[0; 4]).unwrap());
        let msgs = parse_messages(&buf).unwrap();
        assert_eq!(msgs.len(), 2);
        assert_eq!(msgs[0].kind, 20);
        assert_eq!(msgs[0].seq, 3);
        assert_eq!(msgs[0].payload, vec![1, 2, 3, 4, 5]);
        assert_eq!(msgs[1].kind, NLMSG_DONE);
    }

    #[test]
    fn malformed_datagrams_are_errors() {
        assert!(parse_messages(&[40, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]).is_err());
        assert!(parse_messages(&[4, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]).is_err());
        assert!(parse_messages(&[1, 2, 3]).is_err());
        assert!(parse_error(0, &[0, 0]).is_err());
    }

    #[test]
    fn error_with_extended_ack() {
        let mut b = Builder::new();
        b.put_str(NLMSGERR_ATTR_MSG, "requested channel count exceeds maximum")
            .put_u32(NLMSGERR_ATTR_OFFS, 36);
        let tlvs = b.finish().unwrap();
        let m = &parse_messages(&error_msg(
            libc::EINVAL,
            NLM_F_CAPPED | NLM_F_ACK_TLVS,
            &tlvs,
        ))
        .unwrap()[0];
        let nack = parse_error(m.flags, &m.payload).unwrap_err();
        assert_eq!(nack.errno, libc::EINVAL);
        assert_eq!(
            nack.extack.as_deref(),
            Some("requested channel count exceeds maximum (at byte 36 of the request)")
        );
    }

    #[test]
    fn ack_and_plain_error() {
        let m = &parse_messages(&error_msg(0, NLM_F_CAPPED, &[])).unwrap()[0];
        assert_eq!(parse_error(m.flags, &m.payload), Ok(()));
        let m = &parse_messages(&error_msg(libc::EOPNOTSUPP, NLM_F_CAPPED, &[])).unwrap()[0];
        assert_eq!(
            parse_error(m.flags, &m.payload),
            Err(Nack::errno(libc::EOPNOTSUPP))
        );
    }
}
