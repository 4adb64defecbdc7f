//! A peer: `HOST[:PORT]`, where a benchmark server (`hlctl serve`, `iperf3 -s`) listens.

use std::io;
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};

use serde::{Deserialize, Serialize};

/// iperf3's port, used when `--peer` names no port.
pub const DEFAULT_PORT: u16 = 5201;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Peer {
    pub host: String,
    pub port: u16,
}

impl Peer {
    /// Parse `host`, `host:port`, `[v6]:port` or a bare IPv6 address.
    pub fn parse(s: &str) -> Result<Peer, String> {
        let s = s.trim();
        let bad = |why: &str| {
            Err(format!(
                "peer '{s}': {why}: expected HOST, HOST:PORT or [IPv6]:PORT"
            ))
        };
        if s.is_empty() {
            return bad("empty");
        }
        let (host, port) = if let Some(rest) = s.strip_prefix('[') {
            let Some((h, tail)) = rest.split_once(']') else {
                return bad("missing ']'");
            };
            match tail.strip_prefix(':') {
                Some(p) => (h, Some(p)),
                None if tail.is_empty() => (h, None),
                None => return bad("text after ']'"),
            }
        } else if s.parse::<std::net::Ipv6Addr>().is_ok() {
            (s, None)
        } else {
            match s.rsplit_once(':') {
                Some((h, p)) => (h, Some(p)),
                None => (s, None),
            }
        };
        if host.is_empty() || host.contains(char::is_whitespace) {
            return bad("no host name");
        }
        let port = match port {
            None => DEFAULT_PORT,
            Some(p) => match p.parse::<u16>() {
                Ok(n) if n > 0 => n,
                _ => return bad("the port must be 1..=65535"),
            },
        };
        Ok(Peer {
            host: host.to_string(),
            port,
        })
    }

    /// The first address the host name resolves to.
    pub fn resolve(&self) -> io::Result<SocketAddr> {
        (self.host.as_str(), self.port)
            .to_socket_addrs()?
            .next()
            .ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::NotFound,
                    format!("{}: no address", self.host),
                )
            })
    }

    pub fn ip(&self) -> io::Result<IpAddr> {
        self.resolve().map(|a| a.ip())
    }

    /// `host:port`, with brackets around an IPv6 address.
    pub fn label(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }
}

impl std::fmt::Display for Peer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.label())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_of_a_peer() {
        let p = |s| Peer::parse(s).unwrap();
        assert_eq!(
            p("nas"),
            Peer {
                host: "nas".into(),
                port: 5201
            }
        );
        assert_eq!(p("10.0.0.2:7000").port, 7000);
        assert_eq!(p("[fd00::2]:7000").host, "fd00::2");
        assert_eq!(p("fd00::2").port, 5201);
        assert_eq!(p("[fd00::2]").label(), "[fd00::2]:5201");
        for bad in ["", "nas:0", "nas:x", "[fd00::2", "[::1]x", ":80", "a b"] {
            assert!(Peer::parse(bad).is_err(), "{bad}");
        }
    }
}
