//! Netlink change notifications for the daemon, on sockets of their own:
//! rtnetlink `RTNLGRP_LINK` (links appearing, disappearing, renamed, MTU and
//! state changes) and the ethtool generic-netlink `monitor` group (an `*_NTF`
//! message after every ethtool setting change, whoever made it — so
//! `ethtool -G`/`-K` behind our back is seen without polling).

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

const NETLINK_ROUTE: i32 = 0;
const NETLINK_GENERIC: i32 = 16;
const RTNLGRP_LINK: u32 = 1;
const RTM_NEWLINK: u16 = 16;
const RTM_DELLINK: u16 = 17;
const IFLA_IFNAME: u16 = 3;
const GENL_ID_CTRL: u16 = 0x10;
const CTRL_CMD_GETFAMILY: u8 = 3;
const CTRL_ATTR_FAMILY_NAME: u16 = 2;
const CTRL_ATTR_MCAST_GROUPS: u16 = 7;
const CTRL_ATTR_MCAST_GRP_NAME: u16 = 1;
const CTRL_ATTR_MCAST_GRP_ID: u16 = 2;
const ETHTOOL_A_HEADER_DEV_INDEX: u16 = 1;
const ETHTOOL_A_HEADER_DEV_NAME: u16 = 2;
const NLMSG_ERROR: u16 = 2;
const NLMSG_DONE: u16 = 3;
const NLA_TYPE_MASK: u16 = 0x3fff;

/// One notification.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// RTM_NEWLINK (new, renamed or changed link) or RTM_DELLINK.
    Link {
        ifindex: u32,
        name: Option<String>,
        removed: bool,
    },
    /// An ethtool `*_NTF`: some ethtool setting of the link changed.
    Ethtool {
        cmd: u8,
        ifindex: Option<u32>,
        name: Option<String>,
    },
    /// The kernel dropped notifications (receive buffer overrun): re-read everything.
    Overrun,
}

/// The notification sockets.
pub struct Monitor {
    route: OwnedFd,
    ethtool: Option<OwnedFd>,
    buf: Vec<u8>,
}

fn open_socket(protocol: i32) -> io::Result<OwnedFd> {
    // SAFETY: plain socket(2); the fd is owned right away.
    let fd = unsafe {
        libc::socket(
            libc::AF_NETLINK,
            libc::SOCK_RAW | libc::SOCK_CLOEXEC,
            protocol,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fd is a fresh, valid descriptor nobody else owns.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    // SAFETY: sockaddr_nl is plain data; zeroed is a valid value.
    let mut sa: libc::sockaddr_nl = unsafe { std::mem::zeroed() };
    sa.nl_family = libc::AF_NETLINK as u16;
    // SAFETY: sa is a valid sockaddr_nl of the size given.
    let r = unsafe {
        libc::bind(
            fd.as_raw_fd(),
            &sa as *const libc::sockaddr_nl as *const libc::sockaddr,
            std::mem::size_of::<libc::sockaddr_nl>() as u32,
        )
    };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    let size: libc::c_int = 1 << 20;
    // SAFETY: setsockopt with an int option value. Failure only means a smaller buffer.
    unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVBUF,
            &size as *const libc::c_int as *const libc::c_void,
            std::mem::size_of::<libc::c_int>() as u32,
        );
    }
    Ok(fd)
}

fn join_group(fd: &OwnedFd, group: u32) -> io::Result<()> {
    // SAFETY: setsockopt with a u32 group number.
    let r = unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            libc::SOL_NETLINK,
            libc::NETLINK_ADD_MEMBERSHIP,
            &group as *const u32 as *const libc::c_void,
            std::mem::size_of::<u32>() as u32,
        )
    };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Netlink attributes in `buf`: (type without flags, payload).
pub fn attrs(mut buf: &[u8]) -> Vec<(u16, &[u8])> {
    let mut out = Vec::new();
    while buf.len() >= 4 {
        let len = u16::from_ne_bytes([buf[0], buf[1]]) as usize;
        let kind = u16::from_ne_bytes([buf[2], buf[3]]) & NLA_TYPE_MASK;
        if len < 4 || len > buf.len() {
            break;
        }
        out.push((kind, &buf[4..len]));
        let padded = (len + 3) & !3;
        if padded >= buf.len() {
            break;
        }
        buf = &buf[padded..];
    }
    out
}

fn attr_u32(p: &[u8]) -> Option<u32> {
    p.get(..4)
        .map(|b| u32::from_ne_bytes([b[0], b[1], b[2], b[3]]))
}

fn attr_str(p: &[u8]) -> Option<String> {
    let end = p.iter().position(|&b| b == 0).unwrap_or(p.len());
    std::str::from_utf8(&p[..end]).ok().map(str::to_string)
}

/// Netlink messages in a datagram: (type, payload after the 16-byte header).
pub fn messages(mut buf: &[u8]) -> Vec<(u16, &[u8])> {
    let mut out = Vec::new();
    while buf.len() >= 16 {
        let len = u32::from_ne_bytes([buf[0], buf[1], buf[2], buf[3]]) as usize;
        let kind = u16::from_ne_bytes([buf[4], buf[5]]);
        if len < 16 || len > buf.len() {
            break;
        }
        out.push((kind, &buf[16..len]));
        let padded = (len + 3) & !3;
        if padded >= buf.len() {
            break;
        }
        buf = &buf[padded..];
    }
    out
}

/// Decode an rtnetlink link message.
pub fn parse_link(kind: u16, payload: &[u8]) -> Option<Event> {
    if kind != RTM_NEWLINK && kind != RTM_DELLINK {
        return None;
    }
    // struct ifinfomsg: family u8, pad u8, type u16, index i32, flags u32, change u32.
    let idx = payload.get(4..8)?;
    let ifindex = i32::from_ne_bytes([idx[0], idx[1], idx[2], idx[3]]);
    let name = attrs(payload.get(16..)?)
        .into_iter()
        .find(|(t, _)| *t == IFLA_IFNAME)
        .and_then(|(_, p)| attr_str(p));
    Some(Event::Link {
        ifindex: u32::try_from(ifindex).ok()?,
        name,
        removed: kind == RTM_DELLINK,
    })
}

/// Decode an ethtool notification (`genlmsghdr` + attributes whose first
/// nest, type 1 in every ethtool message, is the request header).
pub fn parse_ethtool(payload: &[u8]) -> Option<Event> {
    let cmd = *payload.first()?;
    let mut ifindex = None;
    let mut name = None;
    if let Some((_, header)) = attrs(payload.get(4..)?).into_iter().find(|(t, _)| *t == 1) {
        for (t, p) in attrs(header) {
            match t {
                ETHTOOL_A_HEADER_DEV_INDEX => ifindex = attr_u32(p),
                ETHTOOL_A_HEADER_DEV_NAME => name = attr_str(p),
                _ => {}
            }
        }
    }
    Some(Event::Ethtool { cmd, ifindex, name })
}

/// The id of the ethtool family's `monitor` multicast group.
fn ethtool_monitor_group(fd: &OwnedFd) -> io::Result<Option<u32>> {
    let name = b"ethtool\0";
    let attr_len = 4 + name.len();
    let total = 16 + 4 + ((attr_len + 3) & !3);
    let mut msg = Vec::with_capacity(total);
    msg.extend_from_slice(&(total as u32).to_ne_bytes());
    msg.extend_from_slice(&GENL_ID_CTRL.to_ne_bytes());
    msg.extend_from_slice(&(libc::NLM_F_REQUEST as u16).to_ne_bytes());
    msg.extend_from_slice(&1u32.to_ne_bytes()); // seq
    msg.extend_from_slice(&0u32.to_ne_bytes()); // pid
    msg.extend_from_slice(&[CTRL_CMD_GETFAMILY, 1, 0, 0]);
    msg.extend_from_slice(&(attr_len as u16).to_ne_bytes());
    msg.extend_from_slice(&CTRL_ATTR_FAMILY_NAME.to_ne_bytes());
    msg.extend_from_slice(name);
    msg.resize(total, 0);
    // SAFETY: sending a fully initialised buffer.
    let r = unsafe { libc::send(fd.as_raw_fd(), msg.as_ptr().cast(), msg.len(), 0) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    let mut buf = vec![0u8; 16 * 1024];
    // SAFETY: receiving into a buffer of the given length.
    let n = unsafe { libc::recv(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), 0) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    for (kind, payload) in messages(&buf[..n as usize]) {
        if kind == NLMSG_ERROR {
            // ENOENT: no ethtool family in this kernel.
            return Ok(None);
        }
        let Some(body) = payload.get(4..) else {
            continue;
        };
        for (t, groups) in attrs(body) {
            if t != CTRL_ATTR_MCAST_GROUPS {
                continue;
            }
            for (_, group) in attrs(groups) {
                let a = attrs(group);
                let gname = a
                    .iter()
                    .find(|(t, _)| *t == CTRL_ATTR_MCAST_GRP_NAME)
                    .and_then(|(_, p)| attr_str(p));
                let id = a
                    .iter()
                    .find(|(t, _)| *t == CTRL_ATTR_MCAST_GRP_ID)
                    .and_then(|(_, p)| attr_u32(p));
                if gname.as_deref() == Some("monitor") {
                    return Ok(id);
                }
            }
        }
    }
    Ok(None)
}

impl Monitor {
    /// Subscribe to link and ethtool notifications in the calling thread's
    /// network namespace. A kernel without ethtool netlink gives link events only.
    pub fn open() -> io::Result<Monitor> {
        let route = open_socket(NETLINK_ROUTE)?;
        join_group(&route, RTNLGRP_LINK)?;
        let ethtool = match open_socket(NETLINK_GENERIC) {
            Ok(fd) => match ethtool_monitor_group(&fd)? {
                Some(group) => {
                    join_group(&fd, group)?;
                    Some(fd)
                }
                None => None,
            },
            Err(_) => None,
        };
        Ok(Monitor {
            route,
            ethtool,
            buf: vec![0u8; 64 * 1024],
        })
    }

    /// True when ethtool notifications are subscribed.
    pub fn has_ethtool(&self) -> bool {
        self.ethtool.is_some()
    }

    /// Wait up to `timeout_ms` (-1: forever) and return the notifications that arrived.
    pub fn wait(&mut self, timeout_ms: i32) -> io::Result<Vec<Event>> {
        let mut fds = vec![libc::pollfd {
            fd: self.route.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        }];
        if let Some(e) = &self.ethtool {
            fds.push(libc::pollfd {
                fd: e.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            });
        }
        // SAFETY: fds is a valid array of pollfd of the given length.
        let r = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, timeout_ms) };
        if r < 0 {
            let e = io::Error::last_os_error();
            return if e.kind() == io::ErrorKind::Interrupted {
                Ok(Vec::new())
            } else {
                Err(e)
            };
        }
        let mut events = Vec::new();
        for (i, p) in fds.iter().enumerate() {
            if p.revents == 0 {
                continue;
            }
            let is_route = i == 0;
            loop {
                // SAFETY: receiving into our own buffer of the given length.
                let n = unsafe {
                    libc::recv(
                        p.fd,
                        self.buf.as_mut_ptr().cast(),
                        self.buf.len(),
                        libc::MSG_DONTWAIT,
                    )
                };
                if n < 0 {
                    let e = io::Error::last_os_error();
                    match e.raw_os_error() {
                        Some(libc::EAGAIN) => break,
                        Some(libc::ENOBUFS) => {
                            events.push(Event::Overrun);
                            continue;
                        }
                        Some(libc::EINTR) => continue,
                        _ => return Err(e),
                    }
                }
                for (kind, payload) in messages(&self.buf[..n as usize]) {
                    if kind == NLMSG_ERROR || kind == NLMSG_DONE {
                        continue;
                    }
                    let ev = if is_route {
                        parse_link(kind, payload)
                    } else {
                        parse_ethtool(payload)
                    };
                    events.extend(ev);
                }
            }
        }
        Ok(events)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nla(kind: u16, payload: &[u8]) -> Vec<u8> {
        let len = 4 + payload.len();
        let mut v = Vec::new();
        v.extend_from_slice(&(len as u16).to_ne_bytes());
        v.extend_from_slice(&kind.to_ne_bytes());
        v.extend_from_slice(payload);
        v.resize((len + 3) & !3, 0);
        v
    }

    #[test]
    fn decodes_link_and_ethtool_notifications() {
        let mut ifinfo = vec![0u8; 16];
        ifinfo[4..8].copy_from_slice(&7i32.to_ne_bytes());
        ifinfo.extend(nla(IFLA_IFNAME, b"veth0\0"));
        assert_eq!(
            parse_link(RTM_NEWLINK, &ifinfo),
            Some(Event::Link {
                ifindex: 7,
                name: Some("veth0".into()),
                removed: false
            })
        );
        assert!(parse_link(20, &ifinfo).is_none());

        let mut header = nla(ETHTOOL_A_HEADER_DEV_INDEX, &9u32.to_ne_bytes());
        header.extend(nla(ETHTOOL_A_HEADER_DEV_NAME, b"eth1\0"));
        let mut genl = vec![13u8, 1, 0, 0];
        genl.extend(nla(1 | 0x8000, &header));
        assert_eq!(
            parse_ethtool(&genl),
            Some(Event::Ethtool {
                cmd: 13,
                ifindex: Some(9),
                name: Some("eth1".into())
            })
        );
        // Truncated input never panics.
        for cut in 0..genl.len() {
            let _ = parse_ethtool(&genl[..cut]);
        }
        for cut in 0..ifinfo.len() {
            let _ = parse_link(RTM_NEWLINK, &ifinfo[..cut]);
        }
    }
}
