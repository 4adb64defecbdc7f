//! The whole lab's host × host × protocol matrix, read from the fleet's
//! Prometheus: every host publishes its own row in `hlctl.prom` (the last
//! check's raw TCP to each peer, `bench file`'s newest figure per place and
//! protocol), its node_exporter serves it, Prometheus scrapes them all; this
//! module asks Prometheus's HTTP API for those series and joins them into
//! cells. No collector of our own: Prometheus is the engine for many hosts.
//!
//! A row is a host (the scrape's `host` label, or its `instance`); a column
//! is the other end, named as a host of the lab when its address or name is
//! one (the instance's address, the addresses a host publishes in
//! `hlctl_address_link_speed_bps`, the address a peer resolved to in
//! `hlctl_net_peer_address`), otherwise as the row's host wrote it (a peer
//! outside the lab, a mount's directory).

pub(crate) mod host;
pub(crate) mod prom;

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::class::Class;
pub(crate) use host::Fleet;
use prom::Sample;
pub(crate) use prom::Server;

/// The scrape label that names a host, unless told otherwise (the shipped
/// dashboard's and the docs' scrape configurations set it).
pub(crate) const HOST_LABEL: &str = "host";
/// Raw TCP of the last check, both directions (`upload`: the row's host sends).
pub(crate) const THROUGHPUT: &str = "hlctl_net_throughput_bps";
/// Each TCP figure over the slower end's physical link speed: the shipped
/// dashboard's matrix colour (its query B, there for uploads only).
pub(crate) const SHARE: &str = "hlctl_net_throughput_bps / on(instance, peer) group_left() min by (instance, peer) (hlctl_net_local_link_speed_bps or (hlctl_net_peer_address * on(address) group_left() max by (address) (hlctl_address_link_speed_bps)))";
/// `bench file`'s newest figure per place, protocol and direction.
pub(crate) const FILES: &str = "hlctl_file_transfer_bytes_per_second";
/// Each file figure (in bits) over the slower end's physical link speed:
/// this host's link toward the server, or the server's own link through
/// the address the place resolved to (the shipped dashboard's file colour).
pub(crate) const FILE_SHARE: &str = "hlctl_file_transfer_bytes_per_second * 8 / on(instance, place, protocol) group_left() min by (instance, place, protocol) (hlctl_file_local_link_speed_bps or (hlctl_file_server_address * on(address) group_left() max by (address) (hlctl_address_link_speed_bps)))";
/// The address each file place's server resolved to.
pub(crate) const FILE_SERVER: &str = "hlctl_file_server_address";
/// The address each peer resolved to.
pub(crate) const PEER_ADDRESS: &str = "hlctl_net_peer_address";
/// Each host's own addresses (those on physical links).
pub(crate) const OWN_ADDRESSES: &str = "hlctl_address_link_speed_bps";

/// What went wrong reading the matrix.
#[derive(Debug, thiserror::Error)]
pub(crate) enum MatrixError {
    #[error("--prometheus {url:?}: {why}")]
    Url { url: String, why: String },
    #[error("Prometheus's host {host}: {source}")]
    Resolve {
        host: String,
        source: std::io::Error,
    },
    #[error("Prometheus at {url} ({addr}): {source}")]
    Connect {
        url: String,
        addr: std::net::SocketAddr,
        source: std::io::Error,
    },
    #[error("Prometheus at {url}: {source}")]
    Io { url: String, source: std::io::Error },
    #[error("Prometheus at {url}: {why}")]
    Reply { url: String, why: String },
    #[error("Prometheus at {url} refused the query {query}: {message}")]
    Api {
        url: String,
        query: String,
        message: String,
    },
}

impl MatrixError {
    pub(crate) fn class(&self) -> Class {
        match self {
            MatrixError::Url { .. } => Class::Invalid,
            _ => Class::Failed,
        }
    }
}

/// One cell: from a host to the other end, over one protocol.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct Cell {
    pub(crate) from: String,
    /// A host of the lab, or the other end as `from` names it.
    pub(crate) to: String,
    /// Whether `to` is a host of the lab.
    pub(crate) to_is_host: bool,
    /// `tcp`, `ssh`, `nfs`, `cifs`.
    pub(crate) protocol: String,
    /// The peer or place as `from`'s figures name it.
    pub(crate) subject: String,
    /// Toward `from` (TCP download, a file read), in `unit`.
    pub(crate) read: Option<f64>,
    /// Away from `from` (TCP upload, a file write).
    pub(crate) write: Option<f64>,
    /// `bit/s` (TCP) or `B/s` (files).
    pub(crate) unit: &'static str,
    /// Read and write as shares of the slower end's physical link (TCP).
    pub(crate) read_share: Option<f64>,
    pub(crate) write_share: Option<f64>,
}

/// The matrix: every host that published a figure, and the cells.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct Matrix {
    pub(crate) prometheus: String,
    pub(crate) hosts: Vec<String>,
    pub(crate) cells: Vec<Cell>,
}

/// The series the matrix is built from, one instant query each.
#[derive(Debug, Default)]
pub(crate) struct Series {
    pub(crate) throughput: Vec<Sample>,
    pub(crate) share: Vec<Sample>,
    pub(crate) files: Vec<Sample>,
    pub(crate) file_share: Vec<Sample>,
    pub(crate) file_server: Vec<Sample>,
    pub(crate) peer_address: Vec<Sample>,
    pub(crate) own_addresses: Vec<Sample>,
}

/// Ask `server` for the series and join them, rows named by `host_label`.
pub(crate) fn read(server: &Server, host_label: &str) -> Result<Matrix, MatrixError> {
    let series = Series {
        throughput: server.query(THROUGHPUT)?,
        share: server.query(SHARE)?,
        files: server.query(FILES)?,
        file_share: server.query(FILE_SHARE)?,
        file_server: server.query(FILE_SERVER)?,
        peer_address: server.query(PEER_ADDRESS)?,
        own_addresses: server.query(OWN_ADDRESSES)?,
    };
    Ok(join(server.shown(), &series, host_label))
}

/// The cells of `s`, rows named by `host_label` (else `instance`).
pub(crate) fn join(prometheus: &str, s: &Series, host_label: &str) -> Matrix {
    let lab = Lab::of(s, host_label);
    let mut cells: BTreeMap<(String, String, String), Cell> = BTreeMap::new();
    for t in s.throughput.iter().filter(|t| t.value.is_finite()) {
        let (Some(peer), Some(dir)) = (t.label("peer"), t.label("direction")) else {
            continue;
        };
        let from = lab.host(t);
        let share = value_like(&s.share, t, &["instance", "peer", "direction"]);
        let cell = cell(&mut cells, &lab, from, peer, "tcp", "bit/s", t);
        if dir == "download" {
            (cell.read, cell.read_share) = (Some(t.value), share);
        } else {
            (cell.write, cell.write_share) = (Some(t.value), share);
        }
    }
    for f in s.files.iter().filter(|f| f.value.is_finite()) {
        let (Some(place), Some(protocol), Some(dir)) =
            (f.label("place"), f.label("protocol"), f.label("direction"))
        else {
            continue;
        };
        let from = lab.host(f);
        let share = value_like(
            &s.file_share,
            f,
            &["instance", "place", "protocol", "direction"],
        );
        let cell = cell(&mut cells, &lab, from, place, protocol, "B/s", f);
        if dir == "read" {
            (cell.read, cell.read_share) = (Some(f.value), share);
        } else {
            (cell.write, cell.write_share) = (Some(f.value), share);
        }
    }
    // A BTreeMap's keys: sorted already.
    let hosts: Vec<String> = lab.hosts.keys().cloned().collect();
    Matrix {
        prometheus: prometheus.to_string(),
        hosts,
        cells: cells.into_values().collect(),
    }
}

/// The cell of (from, the other end, protocol), created when new.
fn cell<'a>(
    cells: &'a mut BTreeMap<(String, String, String), Cell>,
    lab: &Lab,
    from: String,
    subject: &str,
    protocol: &str,
    unit: &'static str,
    series: &Sample,
) -> &'a mut Cell {
    let (to, to_is_host) = match lab.end(series, subject) {
        Some(h) => (h, true),
        None => (subject.to_string(), false),
    };
    cells
        .entry((from.clone(), to.clone(), protocol.to_string()))
        .or_insert_with(|| Cell {
            from,
            to,
            to_is_host,
            protocol: protocol.to_string(),
            subject: subject.to_string(),
            read: None,
            write: None,
            unit,
            read_share: None,
            write_share: None,
        })
}

/// The finite value of the sample of `samples` that agrees with `like` on
/// every label of `names` (a figure's share, found by its labels).
fn value_like(samples: &[Sample], like: &Sample, names: &[&str]) -> Option<f64> {
    samples
        .iter()
        .find(|x| same(x, like, names))
        .map(|x| x.value)
        .filter(|v| v.is_finite())
}

/// Whether `a` and `b` agree on every label of `names`.
fn same(a: &Sample, b: &Sample, names: &[&str]) -> bool {
    names.iter().all(|n| a.label(n) == b.label(n))
}

/// The hosts of the lab and the names and addresses each answers to.
struct Lab<'a> {
    host_label: &'a str,
    /// Host → its names and addresses.
    hosts: BTreeMap<String, BTreeSet<String>>,
    peer_address: &'a [Sample],
    file_server: &'a [Sample],
}

impl<'a> Lab<'a> {
    fn of(s: &'a Series, host_label: &'a str) -> Lab<'a> {
        let figures = s.throughput.iter().chain(&s.files);
        let mut lab = Lab::named(figures, &s.own_addresses, host_label);
        lab.peer_address = &s.peer_address;
        lab.file_server = &s.file_server;
        lab
    }

    /// The hosts that published `figures` or `own_addresses`, each known by
    /// its name, its instance's address and the addresses it publishes.
    fn named(
        figures: impl Iterator<Item = &'a Sample>,
        own_addresses: &'a [Sample],
        host_label: &'a str,
    ) -> Lab<'a> {
        let mut lab = Lab {
            host_label,
            hosts: BTreeMap::new(),
            peer_address: &[],
            file_server: &[],
        };
        for x in figures.chain(own_addresses) {
            let h = lab.host(x);
            let names = lab.hosts.entry(h.clone()).or_default();
            names.insert(h);
            if let Some(i) = x.label("instance") {
                names.insert(host_part(i).to_string());
            }
        }
        for a in own_addresses {
            if let Some(addr) = a.label("address") {
                let h = lab.host(a);
                lab.hosts.entry(h).or_default().insert(addr.to_string());
            }
        }
        lab
    }

    /// The host known by any of `names` (a name or an address).
    fn known_as(&self, names: &[String]) -> Option<String> {
        self.hosts
            .iter()
            .find(|(_, known)| names.iter().any(|n| known.contains(n)))
            .map(|(h, _)| h.clone())
    }

    /// The host a series came from.
    fn host(&self, s: &Sample) -> String {
        s.label(self.host_label)
            .or(s.label("instance"))
            .unwrap_or("?")
            .to_string()
    }

    /// The lab's host at the other end of `subject` (a peer `host:port`,
    /// an SSH place `user@host:port:/dir`, a mount's directory whose server
    /// resolved to one of the lab's addresses), if any.
    fn end(&self, series: &Sample, subject: &str) -> Option<String> {
        let mut names = Vec::new();
        if !subject.starts_with('/') {
            names.push(end_host(subject).to_string());
        }
        let here = |p: &&Sample, key: &str| {
            p.label(key) == Some(subject) && p.label("instance") == series.label("instance")
        };
        let address = |p: &Sample| p.label("address").map(str::to_string);
        names.extend(
            self.peer_address
                .iter()
                .filter(|p| here(p, "peer"))
                .filter_map(address),
        );
        names.extend(
            self.file_server
                .iter()
                .filter(|p| here(p, "place"))
                .filter_map(address),
        );
        self.known_as(&names)
    }
}

/// The host of `host:port`, `[v6]:port` or a bare host.
fn host_part(s: &str) -> &str {
    if let Some(rest) = s.strip_prefix('[') {
        return rest.split(']').next().unwrap_or(rest);
    }
    match s.rsplit_once(':') {
        Some((h, p)) if !h.contains(':') && p.bytes().all(|b| b.is_ascii_digit()) => h,
        _ => s,
    }
}

/// The host of a peer (`host:port`) or SSH place (`user@host:port:/dir`).
fn end_host(subject: &str) -> &str {
    let s = subject.split_once('@').map_or(subject, |(_, h)| h);
    let s = s.split_once(":/").map_or(s, |(h, _)| h);
    host_part(s)
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
