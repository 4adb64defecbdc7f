//! Netlink change notifications for the daemon, on sockets of their own
//! (so requests never wait behind notifications): rtnetlink `RTNLGRP_LINK`
//! (links appearing, disappearing, renamed, MTU and state changes) and the
//! ethtool generic-netlink `monitor` group (an `*_NTF` message after every
//! ethtool setting change, whoever made it — so `ethtool -G`/`-K` behind our
//! back is seen without polling).

use std::io;

use super::attr::Attrs;
use super::genl;
use super::socket::{NETLINK_GENERIC, NETLINK_ROUTE, NLMSG_DONE, NLMSG_ERROR, Socket};

const RTNLGRP_LINK: u32 = 1;
const RTM_NEWLINK: u16 = 16;
const RTM_DELLINK: u16 = 17;
const IFLA_IFNAME: u16 = 3;
/// Every ethtool message starts with its request header (type 1 in each command).
const ETHTOOL_A_HEADER: u16 = 1;
const ETHTOOL_A_HEADER_DEV_INDEX: u16 = 1;
const ETHTOOL_A_HEADER_DEV_NAME: u16 = 2;

/// One notification.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Event {
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

/// Decode an rtnetlink link message (`struct ifinfomsg` + attributes).
pub(crate) fn parse_link(kind: u16, payload: &[u8]) -> Option<Event> {
    if kind != RTM_NEWLINK && kind != RTM_DELLINK {
        return None;
    }
    // struct ifinfomsg: family u8, pad u8, type u16, index i32, flags u32, change u32.
    let idx = payload.get(4..8)?;
    let ifindex = i32::from_ne_bytes([idx[0], idx[1], idx[2], idx[3]]);
    let name = Attrs::new(payload.get(16..)?)
        .map_while(Result::ok)
        .find(|a| a.kind == IFLA_IFNAME)
        .map(|a| a.string());
    Some(Event::Link {
        ifindex: u32::try_from(ifindex).ok()?,
        name,
        removed: kind == RTM_DELLINK,
    })
}

/// Decode an ethtool notification (`genlmsghdr` + attributes).
pub(crate) fn parse_ethtool(payload: &[u8]) -> Option<Event> {
    let (cmd, attrs) = genl::split(payload).ok()?;
    let mut ifindex = None;
    let mut name = None;
    if let Some(header) = Attrs::new(attrs)
        .map_while(Result::ok)
        .find(|a| a.kind == ETHTOOL_A_HEADER)
    {
        for a in header.nested().map_while(Result::ok) {
            match a.kind {
                ETHTOOL_A_HEADER_DEV_INDEX => ifindex = a.u32().ok(),
                ETHTOOL_A_HEADER_DEV_NAME => name = Some(a.string()),
                _ => {}
            }
        }
    }
    Some(Event::Ethtool { cmd, ifindex, name })
}

/// One subscribed socket; give each a thread of its own.
pub(crate) struct Receiver {
    sock: Socket,
    route: bool,
}

impl Receiver {
    /// Wait for the next datagram (at most the socket's receive timeout) and
    /// decode it; empty when the wait timed out.
    pub(crate) fn wait(&mut self) -> io::Result<Vec<Event>> {
        let msgs = match self.sock.recv_messages() {
            Ok(m) => m,
            // The socket's receive timeout only means "nothing happened".
            Err(n) if matches!(n.errno, libc::EAGAIN | libc::EINTR | libc::ETIMEDOUT) => {
                return Ok(Vec::new());
            }
            Err(n) if n.errno == libc::ENOBUFS => return Ok(vec![Event::Overrun]),
            Err(n) => return Err(io::Error::from_raw_os_error(n.errno)),
        };
        Ok(msgs
            .iter()
            .filter(|m| m.kind != NLMSG_ERROR && m.kind != NLMSG_DONE)
            .filter_map(|m| {
                if self.route {
                    parse_link(m.kind, &m.payload)
                } else {
                    parse_ethtool(&m.payload)
                }
            })
            .collect())
    }
}

/// Subscribe to link and ethtool notifications in the calling thread's
/// network namespace. A kernel without ethtool netlink gives link events only
/// (one receiver instead of two).
pub(crate) fn subscribe() -> io::Result<Vec<Receiver>> {
    let route = Socket::open(NETLINK_ROUTE)?;
    route.add_membership(RTNLGRP_LINK)?;
    let mut out = vec![Receiver {
        sock: route,
        route: true,
    }];
    if let Ok(mut sock) = Socket::open(NETLINK_GENERIC)
        && let Ok(family) = genl::resolve_family(&mut sock, "ethtool")
        && let Some(&group) = family.mcast_groups.get("monitor")
    {
        sock.add_membership(group)?;
        out.push(Receiver { sock, route: false });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nic::netlink::attr::Builder;

    #[test]
    fn decodes_link_and_ethtool_notifications() {
        let mut ifinfo = vec![0u8; 16];
        ifinfo[4..8].copy_from_slice(&7i32.to_ne_bytes());
        let mut b = Builder::new();
        b.put_str(IFLA_IFNAME, "veth0");
        ifinfo.extend(b.finish().unwrap());
        assert_eq!(
            parse_link(RTM_NEWLINK, &ifinfo),
            Some(Event::Link {
                ifindex: 7,
                name: Some("veth0".into()),
                removed: false
            })
        );
        assert!(parse_link(20, &ifinfo).is_none());

        let mut genl = vec![13u8, 1, 0, 0];
        let mut b = Builder::new();
        b.nested(ETHTOOL_A_HEADER, |b| {
            b.put_u32(ETHTOOL_A_HEADER_DEV_INDEX, 9)
                .put_str(ETHTOOL_A_HEADER_DEV_NAME, "eth1");
        });
        genl.extend(b.finish().unwrap());
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
