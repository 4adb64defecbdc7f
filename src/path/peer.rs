//! A peer: `HOST[:PORT]`, where a benchmark server (`hlctl serve`, `iperf3 -s`) listens.

use std::io;
use std::net::{IpAddr, SocketAddr};

use serde::{Deserialize, Serialize};

/// iperf3's port, used when `--peer` names no port.
pub(crate) const DEFAULT_PORT: u16 = 5201;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Peer {
    pub(crate) host: String,
    pub(crate) port: u16,
}

/// A peer as written: the port only when the text names one (so a caller can
/// tell `nas` from `nas:5201`, e.g. to check it against a separate `-p`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct PeerSpec {
    pub(crate) host: String,
    pub(crate) port: Option<u16>,
}

impl PeerSpec {
    /// Parse `host`, `host:port`, `[v6]:port`, `[v6]` or a bare IPv6 address.
    pub(crate) fn parse(s: &str) -> Result<PeerSpec, String> {
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
        } else if s.matches(':').count() > 1 {
            // A bare IPv6 address (with or without a scope, `fe80::1%eth0`).
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
            None => None,
            Some(p) => match p.parse::<u16>() {
                Ok(n) if n > 0 => Some(n),
                _ => return bad("the port must be 1 to 65535"),
            },
        };
        Ok(PeerSpec {
            host: host.to_string(),
            port,
        })
    }
}

impl Peer {
    /// Parse `host`, `host:port`, `[v6]:port` or a bare IPv6 address; the
    /// port is [`DEFAULT_PORT`] unless named.
    pub(crate) fn parse(s: &str) -> Result<Peer, String> {
        let p = PeerSpec::parse(s)?;
        Ok(Peer {
            host: p.host,
            port: p.port.unwrap_or(DEFAULT_PORT),
        })
    }

    /// The first address the host name resolves to.
    pub(crate) fn resolve(&self) -> io::Result<SocketAddr> {
        crate::resolve::socket_addrs(&self.host, self.port)?
            .into_iter()
            .next()
            .ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::NotFound,
                    format!("{}: no address", self.host),
                )
            })
    }

    pub(crate) fn ip(&self) -> io::Result<IpAddr> {
        self.resolve().map(|a| a.ip())
    }

    /// `host:port`, with brackets around an IPv6 address.
    pub(crate) fn label(&self) -> String {
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
        assert_eq!(p("fe80::1%eth0").host, "fe80::1%eth0");
        assert_eq!(PeerSpec::parse("nas").unwrap().port, None);
        assert_eq!(PeerSpec::parse("nas:5201").unwrap().port, Some(5201));
        for bad in ["", "nas:0", "nas:x", "[fd00::2", "[::1]x", ":80", "a b"] {
            assert!(Peer::parse(bad).is_err(), "{bad}");
        }
    }
}
