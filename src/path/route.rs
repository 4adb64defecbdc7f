//! Routes as this thread's network namespace sees them, read from
//! `/proc/thread-self/net`, and the interface that carries traffic to a peer.

use std::io;
use std::net::{IpAddr, SocketAddr, UdpSocket};

use serde::{Deserialize, Serialize};

/// One default route: `0.0.0.0/0` or `::/0` and the interface it leaves by.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub(crate) struct DefaultRoute {
    pub(crate) family: &'static str,
    pub(crate) interface: String,
    pub(crate) gateway: String,
}

fn net_file(name: &str) -> String {
    std::fs::read_to_string(format!("/proc/thread-self/net/{name}"))
        .or_else(|_| std::fs::read_to_string(format!("/proc/net/{name}")))
        .unwrap_or_default()
}

/// Parse `/proc/net/route` (IPv4) text for default routes.
pub(crate) fn parse_v4(text: &str) -> Vec<DefaultRoute> {
    text.lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let (iface, dest, gw, mask) = (f.first()?, f.get(1)?, f.get(2)?, f.get(7)?);
            if *dest != "00000000" || *mask != "00000000" {
                return None;
            }
            let g = u32::from_str_radix(gw, 16).ok()?;
            Some(DefaultRoute {
                family: "ipv4",
                interface: iface.to_string(),
                gateway: std::net::Ipv4Addr::from(g.to_le_bytes()).to_string(),
            })
        })
        .collect()
}

/// Parse `/proc/net/ipv6_route` text for default routes (`::/0`, not unreachable).
pub(crate) fn parse_v6(text: &str) -> Vec<DefaultRoute> {
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            if f.len() < 10 || f[0] != "00000000000000000000000000000000" || f[1] != "00" {
                return None;
            }
            if f[9] == "lo" {
                return None; // the unreachable default of the local table
            }
            let gw = u128::from_str_radix(f[4], 16).ok()?;
            Some(DefaultRoute {
                family: "ipv6",
                interface: f[9].to_string(),
                gateway: std::net::Ipv6Addr::from(gw).to_string(),
            })
        })
        .collect()
}

/// Every default route, sorted.
pub(crate) fn default_routes() -> Vec<DefaultRoute> {
    let mut v = parse_v4(&net_file("route"));
    v.extend(parse_v6(&net_file("ipv6_route")));
    v.sort();
    v
}

/// The local address the kernel would use to reach `dest` (no packet is sent).
pub(crate) fn source_for(dest: IpAddr) -> io::Result<IpAddr> {
    let bind: SocketAddr = if dest.is_ipv6() {
        "[::]:0".parse().expect("literal")
    } else {
        "0.0.0.0:0".parse().expect("literal")
    };
    let s = UdpSocket::bind(bind)?;
    s.connect(SocketAddr::new(dest, 9))?;
    Ok(s.local_addr()?.ip())
}

/// Every interface address (IPv4 and IPv6): (interface, address).
pub(crate) fn addresses() -> Vec<(String, IpAddr)> {
    let Ok(addrs) = nix::ifaddrs::getifaddrs() else {
        return Vec::new();
    };
    addrs
        .filter_map(|a| {
            let sa = a.address?;
            let ip = match (sa.as_sockaddr_in(), sa.as_sockaddr_in6()) {
                (Some(v4), _) => IpAddr::V4(v4.ip()),
                (_, Some(v6)) => IpAddr::V6(v6.ip()),
                _ => return None,
            };
            Some((a.interface_name, ip))
        })
        .collect()
}

/// The interface holding address `ip`.
pub(crate) fn interface_with(ip: IpAddr) -> Option<String> {
    let addrs = nix::ifaddrs::getifaddrs().ok()?;
    for a in addrs {
        let Some(sa) = a.address else { continue };
        let matches = match ip {
            IpAddr::V4(v4) => sa.as_sockaddr_in().is_some_and(|s| s.ip() == v4),
            IpAddr::V6(v6) => sa.as_sockaddr_in6().is_some_and(|s| s.ip() == v6),
        };
        if matches {
            return Some(a.interface_name);
        }
    }
    None
}

/// The interface traffic to `dest` leaves by (via the source address the kernel picks).
pub(crate) fn egress_interface(dest: IpAddr) -> Option<String> {
    let src = source_for(dest).ok()?;
    if src.is_loopback() {
        return Some("lo".to_string());
    }
    interface_with(src)
}

/// Where the other end of a transfer is: the first address its host (a
/// name or an address) resolved to, and the interface traffic to it leaves
/// by. A file transfer's server, for the matrix's link shares; each is
/// None when it could not be found.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Toward {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interface: Option<String>,
}

/// The first address `host` (a name or an address) resolves to.
pub(crate) fn resolve(host: &str) -> Option<IpAddr> {
    use std::net::ToSocketAddrs;
    (host, 0)
        .to_socket_addrs()
        .ok()
        .and_then(|mut a| a.next())
        .map(|a| a.ip())
}

impl Toward {
    /// Resolve `host` and find the interface toward it.
    pub(crate) fn host(host: &str) -> Toward {
        let address = resolve(host);
        Toward {
            address: address.map(|a| a.to_string()),
            interface: address.and_then(egress_interface),
        }
    }

    /// Toward a transfer's server, if it has one.
    pub(crate) fn server(server: Option<&str>) -> Toward {
        server.map(Toward::host).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toward_loopback_is_lo_and_nothing_is_said_when_unknown() {
        let t = Toward::host("127.0.0.1");
        assert_eq!(
            (t.address.as_deref(), t.interface.as_deref()),
            (Some("127.0.0.1"), Some("lo"))
        );
        assert_eq!(serde_json::to_value(&t).unwrap()["interface"], "lo");
        let none = Toward::server(None);
        assert_eq!(none, Toward::default());
        assert_eq!(serde_json::to_string(&none).unwrap(), "{}");
    }

    #[test]
    fn default_routes_from_proc_text() {
        let v4 = "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n\
                  eth0\t00000000\t0102A8C0\t0003\t0\t0\t0\t00000000\t0\t0\t0\n\
                  eth0\t0002A8C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n";
        let r = parse_v4(v4);
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].interface, "eth0");
        assert_eq!(r[0].gateway, "192.168.2.1");
        let v6 = "00000000000000000000000000000000 00 00000000000000000000000000000000 00 fe800000000000000000000000000001 00000400 00000001 00000000 00000003 eth0\n\
                  00000000000000000000000000000000 00 00000000000000000000000000000000 00 00000000000000000000000000000000 ffffffff 00000001 00000000 00200200 lo\n";
        let r = parse_v6(v6);
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].gateway, "fe80::1");
    }

    #[test]
    fn loopback_egress() {
        assert_eq!(
            egress_interface("127.0.0.1".parse().unwrap()).as_deref(),
            Some("lo")
        );
    }
}
