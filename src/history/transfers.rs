//! This host's row of the host × host × protocol matrix, from its history:
//! per peer (or SSH place, or mount) and protocol, the newest figure of each
//! direction. Raw TCP comes from `net upload`/`net download` (a check, a
//! doctor, `bench net`), the file protocols from `bench file`'s
//! `file PROTOCOL read|write`. "read" is toward this host (`net download`:
//! the peer sends), "write" away from it.

use serde::{Deserialize, Serialize};

use super::StoredResult;
use super::store::parse_file_metric;

/// One cell of the row.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Transfer {
    /// The peer, `user@host:port:/dir`, or a mount's directory.
    pub(crate) subject: String,
    /// `tcp`, `ssh`, `nfs`, `cifs`, or `local FS` for a local directory.
    pub(crate) protocol: String,
    /// `read` or `write`.
    pub(crate) direction: String,
    pub(crate) value: f64,
    /// `bit/s` (TCP) or `B/s` (files), as stored.
    pub(crate) unit: String,
    pub(crate) ts: i64,
    /// This host's interface toward the peer or server, and the address it
    /// resolved to, as the row recorded them (rows stored before they were
    /// recorded have none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) interface: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) address: Option<String>,
}

impl Transfer {
    /// The figure in bit/s.
    pub(crate) fn bps(&self) -> f64 {
        if self.unit == "B/s" {
            self.value * 8.0
        } else {
            self.value
        }
    }
}

/// The interface and address a row recorded for `subject`: a check's peer
/// (`peers`) or `[check] files` entry (`files`), or a `bench file` run's
/// own; a `bench net` row's interface.
fn path_of(r: &StoredResult, protocol: &str, subject: &str) -> (Option<String>, Option<String>) {
    let s = |v: &serde_json::Value, k: &str| v[k].as_str().map(str::to_string);
    let res = &r.result;
    let found = if protocol == "tcp" {
        res["peers"].as_array().and_then(|peers| {
            peers.iter().find(|p| {
                p["peer"].as_str().is_some_and(|x| {
                    x == subject || crate::path::Peer::parse(x).is_ok_and(|p| p.host == subject)
                })
            })
        })
    } else if res["file"]["place"].as_str() == Some(subject) {
        Some(res)
    } else {
        res["files"].as_array().and_then(|files| {
            files
                .iter()
                .find(|e| e["file"]["place"].as_str() == Some(subject))
        })
    };
    match found {
        Some(v) => (s(v, "interface"), s(v, "address")),
        None if protocol == "tcp" => (r.interface.clone(), None),
        None => (None, None),
    }
}

/// The protocol and direction a metric stands for in the matrix.
fn cell_of(name: &str) -> Option<(&str, &'static str)> {
    match name {
        "net download" => Some(("tcp", "read")),
        "net upload" => Some(("tcp", "write")),
        _ => parse_file_metric(name).map(|(p, d)| (p, if d == "read" { "read" } else { "write" })),
    }
}

/// The newest figure of each (subject, protocol, direction) in `rows`
/// (newest first, as `History::list` gives them), in that order.
pub(crate) fn newest(rows: &[StoredResult]) -> Vec<Transfer> {
    let mut out: Vec<Transfer> = Vec::new();
    for r in rows {
        for m in &r.metrics {
            let Some((protocol, direction)) = cell_of(&m.name) else {
                continue;
            };
            if m.subject.is_empty()
                || out.iter().any(|t| {
                    t.subject == m.subject && t.protocol == protocol && t.direction == direction
                })
            {
                continue;
            }
            let (interface, address) = path_of(r, protocol, &m.subject);
            out.push(Transfer {
                subject: m.subject.clone(),
                protocol: protocol.to_string(),
                direction: direction.to_string(),
                value: m.value,
                unit: m.unit.clone(),
                ts: r.ts,
                interface,
                address,
            });
        }
    }
    out.sort_by(|a, b| {
        (&a.subject, &a.protocol, &a.direction).cmp(&(&b.subject, &b.protocol, &b.direction))
    });
    out
}

/// One line of the row as a table shows it: a peer or place and a
/// protocol, with the newest figure of each direction.
pub(crate) struct Line<'a> {
    pub(crate) subject: &'a str,
    pub(crate) protocol: &'a str,
    pub(crate) read: Option<&'a Transfer>,
    pub(crate) write: Option<&'a Transfer>,
}

/// `t` (as [`newest`] orders it) as one line per peer or place and protocol.
pub(crate) fn lines(t: &[Transfer]) -> Vec<Line<'_>> {
    let mut out: Vec<Line> = Vec::new();
    for x in t {
        if !out
            .last()
            .is_some_and(|l| l.subject == x.subject && l.protocol == x.protocol)
        {
            out.push(Line {
                subject: &x.subject,
                protocol: &x.protocol,
                read: None,
                write: None,
            });
        }
        let l = out.last_mut().expect("pushed above");
        if x.direction == "read" {
            l.read = Some(x);
        } else {
            l.write = Some(x);
        }
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::history::settings::Snapshot;
    use crate::history::store::{Metric, file_metric_name};

    pub(crate) fn row(ts: i64, kind: &str, metrics: Vec<Metric>) -> StoredResult {
        StoredResult {
            id: ts,
            ts,
            kind: kind.into(),
            host: "h".into(),
            kernel: "k".into(),
            interface: None,
            peer: None,
            uid: None,
            metrics,
            settings: Snapshot::default(),
            result: serde_json::Value::Null,
        }
    }

    /// Rows as a history holds them, newest first: a check, an older
    /// `bench net` to the same peer, a `bench file` over SSH.
    pub(crate) fn rows() -> Vec<StoredResult> {
        let ssh = "me@nas:22:/srv";
        vec![
            row(
                300,
                "file",
                vec![
                    Metric::new(&file_metric_name("ssh", "read"), ssh, 110e6, "B/s"),
                    Metric::new(&file_metric_name("ssh", "write"), ssh, 60e6, "B/s"),
                ],
            ),
            row(
                200,
                "check",
                vec![
                    Metric::new("net upload", "nas", 9.41e8, "bit/s"),
                    Metric::new("cpu multi events", "", 900.0, "events/s"),
                ],
            ),
            row(
                100,
                "net",
                vec![
                    Metric::new("net upload", "nas", 5e8, "bit/s"),
                    Metric::new("net download", "nas", 9.38e8, "bit/s"),
                ],
            ),
        ]
    }

    /// Each kind of row names the interface toward the other end where it
    /// recorded one: a check's peer (by its label or its host), a bench file
    /// run, a check's `[check] files` entry, a bench net row's column.
    #[test]
    fn the_interface_and_address_each_row_recorded() {
        let mut check = row(300, "check", vec![]);
        check.result = serde_json::json!({
            "peers": [{"peer": "nas:5201", "interface": "eth1", "address": "10.0.0.2"}],
            "files": [{"target": "/mnt/media", "file": {"place": "/mnt/media"},
                       "interface": "eth2", "address": "10.0.0.3"}]});
        let pair = |i: &str, a: &str| (Some(i.to_string()), Some(a.to_string()));
        assert_eq!(path_of(&check, "tcp", "nas"), pair("eth1", "10.0.0.2"));
        assert_eq!(path_of(&check, "tcp", "nas:5201"), pair("eth1", "10.0.0.2"));
        assert_eq!(
            path_of(&check, "nfs4", "/mnt/media"),
            pair("eth2", "10.0.0.3")
        );
        assert_eq!(path_of(&check, "nfs4", "/mnt/other"), (None, None));
        let mut file = row(200, "file", vec![]);
        file.result = serde_json::json!({"file": {"place": "me@nas:22:/srv"},
            "interface": "eth1", "address": "10.0.0.2"});
        assert_eq!(
            path_of(&file, "ssh", "me@nas:22:/srv"),
            pair("eth1", "10.0.0.2")
        );
        let mut net = row(100, "net", vec![]);
        net.interface = Some("eth1".into());
        assert_eq!(path_of(&net, "tcp", "nas"), (Some("eth1".into()), None));
    }

    #[test]
    fn the_newest_of_each_peer_protocol_and_direction() {
        let got: Vec<(String, String, String, f64, i64)> = newest(&rows())
            .into_iter()
            .map(|t| (t.subject, t.protocol, t.direction, t.value, t.ts))
            .collect();
        let s = |x: &str| x.to_string();
        assert_eq!(
            got,
            [
                (s("me@nas:22:/srv"), s("ssh"), s("read"), 110e6, 300),
                (s("me@nas:22:/srv"), s("ssh"), s("write"), 60e6, 300),
                (s("nas"), s("tcp"), s("read"), 9.38e8, 100),
                (s("nas"), s("tcp"), s("write"), 9.41e8, 200),
            ]
        );
    }
}
