//! The one call of Prometheus's HTTP API the matrix needs: an instant query
//! (`GET {prefix}/api/v1/query?query=…`), over plain HTTP/1.0 (one request
//! per connection, no chunked replies), with the URL's user and password as
//! Basic authentication. No TLS: a Prometheus behind HTTPS is reached
//! through a tunnel or a plain listener on the lab's network.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use base64::Engine as _;
use serde_json::Value;

use super::MatrixError;

/// How long a connection and a reply may take.
const TIMEOUT: Duration = Duration::from_secs(10);
/// The largest reply read (a lab's matrix is a few kilobytes).
const MAX_REPLY: u64 = 16 << 20;

/// One series of an instant vector: its labels and value.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Sample {
    pub(crate) labels: BTreeMap<String, String>,
    pub(crate) value: f64,
}

impl Sample {
    pub(crate) fn label(&self, name: &str) -> Option<&str> {
        self.labels.get(name).map(String::as_str)
    }

    /// A series of `labels` at `value`, as the tests write one.
    #[cfg(test)]
    pub(crate) fn of(labels: &[(&str, &str)], value: f64) -> Sample {
        Sample {
            labels: labels
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            value,
        }
    }
}

/// A Prometheus server named by its URL.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Server {
    host: String,
    port: u16,
    /// The path the API sits under (`/prometheus` behind a proxy), no
    /// trailing slash.
    prefix: String,
    /// `user:password`, sent as Basic authentication.
    userinfo: Option<String>,
    /// The URL as shown to the user (without the password).
    shown: String,
}

const ALLOWED: &str = "allowed: http://HOST[:PORT][/PATH] or HOST[:PORT] (port 9090 when no scheme is given), e.g. http://prometheus:9090";

fn bad(url: &str, why: &str) -> MatrixError {
    MatrixError::Url {
        url: url.to_string(),
        why: format!("{why}; {ALLOWED}"),
    }
}

impl Server {
    /// `http://[user[:password]@]host[:port][/path]`, or `host[:port]`.
    pub(crate) fn parse(url: &str) -> Result<Server, MatrixError> {
        let (rest, default_port) = match url.split_once("://") {
            Some(("http", rest)) => (rest, 80),
            Some(("https", _)) => {
                return Err(bad(
                    url,
                    "https is not spoken (hlctl has no TLS client): use Prometheus's plain listener or a tunnel to it",
                ));
            }
            Some((scheme, _)) => return Err(bad(url, &format!("scheme {scheme:?} is not http"))),
            None => (url, 9090),
        };
        let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        let (userinfo, hostport) = match authority.rsplit_once('@') {
            Some((u, h)) => (Some(u.to_string()), h),
            None => (None, authority),
        };
        let (host, port) = split_host_port(hostport).ok_or_else(|| bad(url, "no host"))?;
        let port = match port {
            None => default_port,
            Some(p) => p
                .parse::<u16>()
                .ok()
                .filter(|p| *p > 0)
                .ok_or_else(|| bad(url, &format!("port {p:?} is not 1 to 65535")))?,
        };
        if path.contains(['?', '#']) {
            return Err(bad(url, "a query or fragment has no place in it"));
        }
        let shown_auth = userinfo
            .as_deref()
            .map(|u| format!("{}@", u.split(':').next().unwrap_or("")))
            .unwrap_or_default();
        Ok(Server {
            shown: format!("http://{shown_auth}{hostport}{path}"),
            host: host.to_string(),
            port,
            prefix: path.trim_end_matches('/').to_string(),
            userinfo,
        })
    }

    /// The URL as shown (no password).
    pub(crate) fn shown(&self) -> &str {
        &self.shown
    }

    /// The instant vector `promql` evaluates to now.
    pub(crate) fn query(&self, promql: &str) -> Result<Vec<Sample>, MatrixError> {
        let reply = self.get(&format!(
            "{}/api/v1/query?query={}",
            self.prefix,
            encode(promql)
        ))?;
        samples(&self.shown, promql, &reply)
    }

    /// The reply's status and body to a GET of `target`.
    fn get(&self, target: &str) -> Result<(u16, Vec<u8>), MatrixError> {
        let io = |source| MatrixError::Io {
            url: self.shown.clone(),
            source,
        };
        let mut s = self.connect()?;
        s.set_read_timeout(Some(TIMEOUT)).map_err(io)?;
        s.set_write_timeout(Some(TIMEOUT)).map_err(io)?;
        let auth = self
            .userinfo
            .as_ref()
            .map(|u| {
                let b = base64::engine::general_purpose::STANDARD.encode(u);
                format!("Authorization: Basic {b}\r\n")
            })
            .unwrap_or_default();
        let host = if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        };
        let req = format!(
            "GET {target} HTTP/1.0\r\nHost: {host}\r\nAccept: application/json\r\nUser-Agent: hlctl/{}\r\n{auth}\r\n",
            env!("CARGO_PKG_VERSION")
        );
        s.write_all(req.as_bytes()).map_err(io)?;
        let mut raw = Vec::new();
        s.take(MAX_REPLY).read_to_end(&mut raw).map_err(io)?;
        split_reply(&raw).ok_or_else(|| MatrixError::Reply {
            url: self.shown.clone(),
            why: "not an HTTP reply".into(),
        })
    }

    fn connect(&self) -> Result<TcpStream, MatrixError> {
        let addrs: Vec<SocketAddr> =
            crate::resolve::socket_addrs(&self.host, self.port).map_err(|source| {
                MatrixError::Resolve {
                    host: self.host.clone(),
                    source,
                }
            })?;
        let mut last = None;
        for a in &addrs {
            match TcpStream::connect_timeout(a, TIMEOUT) {
                Ok(s) => return Ok(s),
                Err(e) => last = Some((*a, e)),
            }
        }
        let (addr, source) = last.unwrap_or_else(|| {
            (
                SocketAddr::from(([0, 0, 0, 0], self.port)),
                std::io::ErrorKind::NotFound.into(),
            )
        });
        Err(MatrixError::Connect {
            url: self.shown.clone(),
            addr,
            source,
        })
    }
}

/// `host`, `host:port`, `[v6]`, `[v6]:port`; an unbracketed IPv6 address
/// has no port.
fn split_host_port(s: &str) -> Option<(&str, Option<&str>)> {
    let (host, port) = if let Some(rest) = s.strip_prefix('[') {
        let (h, after) = rest.split_once(']')?;
        (h, after.strip_prefix(':'))
    } else if s.matches(':').count() > 1 {
        (s, None)
    } else {
        match s.split_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (s, None),
        }
    };
    (!host.is_empty()).then_some((host, port))
}

/// Percent-encoding of a query parameter: unreserved characters as they are.
fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// The status code and body of a raw HTTP/1.x reply.
fn split_reply(raw: &[u8]) -> Option<(u16, Vec<u8>)> {
    let end = raw.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = std::str::from_utf8(&raw[..end]).ok()?;
    let status = head
        .lines()
        .next()?
        .strip_prefix("HTTP/1.")?
        .split(' ')
        .nth(1)?
        .parse()
        .ok()?;
    Some((status, raw[end + 4..].to_vec()))
}

/// The samples of an API reply, or the error it carries.
pub(super) fn samples(
    url: &str,
    promql: &str,
    (status, body): &(u16, Vec<u8>),
) -> Result<Vec<Sample>, MatrixError> {
    let reply = |why: String| MatrixError::Reply {
        url: url.to_string(),
        why,
    };
    let v: Value = serde_json::from_slice(body).map_err(|_| {
        let start = String::from_utf8_lossy(&body[..body.len().min(120)]).into_owned();
        reply(format!("HTTP {status}, not Prometheus's JSON: {start:?}"))
    })?;
    if v["status"] != "success" {
        return Err(MatrixError::Api {
            url: url.to_string(),
            query: promql.to_string(),
            message: format!(
                "{}: {}",
                v["errorType"].as_str().unwrap_or("error"),
                v["error"].as_str().unwrap_or("(no message)")
            ),
        });
    }
    if v["data"]["resultType"] != "vector" {
        return Err(reply(format!(
            "{promql} gave a {} instead of an instant vector",
            v["data"]["resultType"]
        )));
    }
    let result = v["data"]["result"].as_array().cloned().unwrap_or_default();
    result
        .iter()
        .map(|s| {
            sample(s).ok_or_else(|| reply(format!("a series that is not labels and a value: {s}")))
        })
        .collect()
}

fn sample(s: &Value) -> Option<Sample> {
    let labels = s["metric"]
        .as_object()?
        .iter()
        .map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
        .collect::<Option<_>>()?;
    let value = s["value"][1].as_str()?.parse().ok()?;
    Some(Sample { labels, value })
}

#[cfg(test)]
#[path = "prom_tests.rs"]
mod tests;
