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
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};
use std::time::Duration;

use crate::sockopt;

pub(crate) use super::message::{
    Message, NLM_F_DUMP, NLM_F_DUMP_INTR, NLM_F_REQUEST, NLMSG_DONE, NLMSG_ERROR, NLMSG_NOOP,
    NLMSG_OVERRUN, Nack, REQUEST_FLAGS, encode_message, parse_error, parse_messages,
};

pub(crate) const NETLINK_ROUTE: i32 = 0;
pub(crate) const NETLINK_GENERIC: i32 = 16;

const SOL_NETLINK: i32 = 270;
const NETLINK_ADD_MEMBERSHIP: i32 = 1;
const NETLINK_CAP_ACK: i32 = 10;
const NETLINK_EXT_ACK: i32 = 11;

/// How long to wait for the kernel before giving up on a request.
const RECV_TIMEOUT: Duration = Duration::from_secs(10);
/// The receive buffer a socket starts with. It grows to the largest datagram
/// seen (each is sized with `MSG_PEEK | MSG_TRUNC` first), and the kernel
/// sizes its dump datagrams after the reader's buffer, so a small start costs
/// a few more `recv` calls per dump and saves memory in every socket the
/// daemon keeps open (six: reads, changes, two monitors).
const INITIAL_RECV_BUF: usize = 16 * 1024;
/// How often a dump the kernel marked inconsistent is retried.
const DUMP_RETRIES: usize = 5;

/// One AF_NETLINK socket, bound, with its own sequence numbers.
#[derive(Debug)]
pub(crate) struct Socket {
    fd: OwnedFd,
    port: u32,
    seq: u32,
    buf: Vec<u8>,
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
    pub(crate) fn open(protocol: i32) -> io::Result<Self> {
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
        let _ = sockopt::set_int(fd.as_fd(), SOL_NETLINK, NETLINK_EXT_ACK, 1);
        let _ = sockopt::set_int(fd.as_fd(), SOL_NETLINK, NETLINK_CAP_ACK, 1);
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
            buf: vec![0; INITIAL_RECV_BUF],
        })
    }

    /// Receive the multicast group `group` (e.g. RTNLGRP_LINK = 1, or a genetlink group id).
    pub(crate) fn add_membership(&self, group: u32) -> io::Result<()> {
        sockopt::set_int(
            self.fd.as_fd(),
            SOL_NETLINK,
            NETLINK_ADD_MEMBERSHIP,
            group as i32,
        )
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
    pub(crate) fn recv_messages(&mut self) -> Result<Vec<Message>, Nack> {
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
    pub(crate) fn request(
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
    pub(crate) fn dump(&mut self, kind: u16, payload: &[u8]) -> Result<Vec<Message>, Nack> {
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
