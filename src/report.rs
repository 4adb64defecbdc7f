//! `hlctl report`: a home lab's quarterly benchmark script as one call —
//! network to each peer (both directions), disk on each directory, CPU
//! single- and multi-threaded — as Markdown and JSON, with metrics for history.

use serde::{Deserialize, Serialize};

use crate::bench::progress::{Cancel, Progress, ProgressEvent};
use crate::history::store::{Metric, format_ts, format_value};
use crate::history::transfers::{Transfer, lines};
use crate::host::HostInfo;
use crate::path::Peer;
use crate::path::throughput::{self, Direction, Measure, format_bps};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct NetEntry {
    pub(crate) peer: String,
    pub(crate) interface: Option<String>,
    pub(crate) upload_bps: Option<f64>,
    pub(crate) download_bps: Option<f64>,
    pub(crate) error: Option<String>,
}

/// One named figure of a disk or CPU run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Figure {
    pub(crate) name: String,
    pub(crate) value: f64,
    pub(crate) unit: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Entry {
    /// The directory (disk) or `single`/`multi` (CPU).
    pub(crate) subject: String,
    pub(crate) figures: Vec<Figure>,
    pub(crate) error: Option<String>,
    /// What makes the figures less than they seem (other load, steal, a run
    /// too short, a memory-backed directory).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) warnings: Vec<String>,
}

impl Entry {
    /// The figures of one run, or why it could not run.
    pub(crate) fn new(subject: &str, r: Figures) -> Entry {
        match r {
            Ok(m) => Entry {
                subject: subject.into(),
                figures: m.figures,
                error: None,
                warnings: m.warnings,
            },
            Err(e) => Entry {
                subject: subject.into(),
                figures: Vec::new(),
                error: Some(e),
                warnings: Vec::new(),
            },
        }
    }
}

/// The figures of one disk or CPU run and the warnings that go with them.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Measured {
    pub(crate) figures: Vec<Figure>,
    pub(crate) warnings: Vec<String>,
}

/// Threads of the multi-threaded CPU run: every CPU.
pub(crate) fn cpu_threads() -> u32 {
    std::thread::available_parallelism()
        .map(|n| n.get() as u32)
        .unwrap_or(1)
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Report {
    #[serde(flatten)]
    pub(crate) host: HostInfo,
    pub(crate) timestamp: i64,
    pub(crate) network: Vec<NetEntry>,
    pub(crate) disk: Vec<Entry>,
    pub(crate) cpu: Vec<Entry>,
    /// This host's row of the host × host × protocol matrix after the run:
    /// the history's newest figure per peer or place, protocol and
    /// direction (`ops::report` fills it from the history it stored into).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) transfers: Vec<Transfer>,
}

/// Figures of one disk or CPU run, or why it could not run.
pub(crate) type Figures = Result<Measured, String>;

/// Measures for the parts other modules provide.
pub(crate) struct Benches<'a> {
    /// A network measure per peer.
    pub(crate) net: &'a dyn Fn(&Peer) -> Box<dyn Measure>,
    /// Disk figures for a directory.
    pub(crate) disk: &'a dyn Fn(&str, &Cancel) -> Figures,
    /// CPU figures for `threads` threads (1 = single).
    pub(crate) cpu: &'a dyn Fn(u32, &Cancel) -> Figures,
}

pub(crate) fn run(
    peers: &[Peer],
    dirs: &[String],
    b: &Benches,
    progress: &dyn Progress,
    cancel: &Cancel,
) -> Report {
    let say = |f: f64, m: String| {
        progress.report(ProgressEvent {
            fraction: f,
            message: m,
        })
    };
    let total = (peers.len() + dirs.len() + 2) as f64;
    let mut k = 0.0;
    let mut network = Vec::new();
    for p in peers {
        say(k / total, format!("network to {}", p.label()));
        k += 1.0;
        let interface = p.ip().ok().and_then(crate::path::route::egress_interface);
        let mut e = NetEntry {
            peer: p.label(),
            interface,
            upload_bps: None,
            download_bps: None,
            error: None,
        };
        match throughput::series(
            (b.net)(p).as_ref(),
            1,
            &Direction::BOTH,
            progress,
            cancel,
            |_, _| {},
        ) {
            Ok((u, d)) => {
                e.upload_bps = Some(u.median());
                e.download_bps = Some(d.median());
            }
            Err(err) => e.error = Some(err.to_string()),
        }
        network.push(e);
    }
    let mut disk = Vec::new();
    for d in dirs {
        say(k / total, format!("disk on {d}"));
        k += 1.0;
        disk.push(Entry::new(d, (b.disk)(d, cancel)));
    }
    let mut cpu = Vec::new();
    for (name, t) in [("single", 1), ("multi", cpu_threads())] {
        say(k / total, format!("CPU {name}-threaded"));
        k += 1.0;
        cpu.push(Entry::new(name, (b.cpu)(t, cancel)));
    }
    Report {
        host: HostInfo::current(),
        timestamp: crate::host::now_unix(),
        network,
        disk,
        cpu,
        transfers: Vec::new(),
    }
}

impl Report {
    /// The numbers for history (compare works on these).
    pub(crate) fn metrics(&self) -> Vec<Metric> {
        let mut v = Vec::new();
        for n in &self.network {
            if let (Some(u), Some(d)) = (n.upload_bps, n.download_bps) {
                v.extend(crate::history::store::net_metrics(&n.peer, u, d));
            }
        }
        for (kind, list) in [("disk", &self.disk), ("cpu", &self.cpu)] {
            for e in list {
                for f in &e.figures {
                    let subject = if kind == "disk" {
                        e.subject.clone()
                    } else {
                        String::new()
                    };
                    let name = if kind == "cpu" {
                        format!("cpu {} {}", e.subject, f.name)
                    } else {
                        format!("disk {}", f.name)
                    };
                    let mut m = Metric::new(&name, &subject, f.value, &f.unit);
                    m.higher_is_better =
                        !f.unit.ends_with('s') || f.unit.contains("/s") || f.unit == "IOPS";
                    v.push(m);
                }
            }
        }
        v
    }

    pub(crate) fn markdown(&self) -> String {
        let mut s = format!(
            "# Homelab benchmark report\n\nHost `{}`, kernel `{}`, {} UTC.\n\n## Network\n\n",
            self.host.host,
            self.host.kernel,
            format_ts(self.timestamp)
        );
        if self.network.is_empty() {
            s += "No peers given (`--peer HOST`).\n";
        } else {
            s += "| peer | interface | upload | download |\n|---|---|---|---|\n";
            for n in &self.network {
                let v = |x: Option<f64>| {
                    x.map_or_else(|| n.error.clone().unwrap_or_default(), format_bps)
                };
                s += &format!(
                    "| {} | {} | {} | {} |\n",
                    n.peer,
                    n.interface.clone().unwrap_or_default(),
                    v(n.upload_bps),
                    v(n.download_bps)
                );
            }
        }
        for (title, list, hint) in [
            ("Disk", &self.disk, "`--dir PATH` for disks"),
            ("CPU", &self.cpu, "the CPU runs were left out"),
        ] {
            s += &format!("\n## {title}\n\n");
            if list.is_empty() {
                s += &format!("Nothing measured ({hint}).\n");
                continue;
            }
            s += "| subject | figure | value |\n|---|---|---|\n";
            for e in list {
                if let Some(err) = &e.error {
                    s += &format!("| {} | - | not run: {err} |\n", e.subject);
                }
                for f in &e.figures {
                    s += &format!(
                        "| {} | {} | {} |\n",
                        e.subject,
                        f.name,
                        format_value(f.value, &f.unit)
                    );
                }
            }
            let warnings: Vec<String> = list
                .iter()
                .flat_map(|e| {
                    e.warnings
                        .iter()
                        .map(move |w| format!("{}: {w}", e.subject))
                })
                .collect();
            if !warnings.is_empty() {
                s.push('\n');
                for w in warnings {
                    s += &format!("Warning, {w}\n");
                }
            }
        }
        s + &transfers_markdown(&self.transfers)
    }
}

/// The transfers section: per peer or place and protocol, each direction's
/// newest figure with its time; nothing when the history holds none.
fn transfers_markdown(t: &[Transfer]) -> String {
    if t.is_empty() {
        return String::new();
    }
    let mut s = String::from(
        "\n## Transfers by peer and protocol (newest in the history)\n\n| peer or place | protocol | read (to this host) | write (from this host) |\n|---|---|---|---|\n",
    );
    let cell = |x: Option<&Transfer>| {
        x.map_or("–".to_string(), |x| {
            format!(
                "{} ({} UTC)",
                format_value(x.value, &x.unit),
                format_ts(x.ts)
            )
        })
    };
    for l in lines(t) {
        s += &format!(
            "| {} | {} | {} | {} |\n",
            l.subject,
            l.protocol.to_uppercase(),
            cell(l.read),
            cell(l.write)
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run's warnings reach the report, under the section of the run.
    #[test]
    fn warnings_are_printed_under_their_section() {
        let cpu = Entry::new(
            "multi",
            Ok(Measured {
                figures: vec![Figure {
                    name: "events".into(),
                    value: 900.0,
                    unit: "events/s".into(),
                }],
                warnings: vec!["other processes kept 1.2 of this machine's 2 CPUs busy".into()],
            }),
        );
        let r = Report {
            host: HostInfo::current(),
            timestamp: 0,
            network: Vec::new(),
            disk: Vec::new(),
            cpu: vec![cpu],
            transfers: Vec::new(),
        };
        let md = r.markdown();
        let cpu_part = md.split("## CPU").nth(1).unwrap();
        assert!(
            cpu_part.contains("Warning, multi: other processes kept 1.2"),
            "{md}"
        );
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(json["cpu"][0]["warnings"].as_array().unwrap().len(), 1);
    }

    /// The history's transfers end the report: one line per peer or place
    /// and protocol, each direction in the CLI's units with its time; a
    /// report without them has no such section, and its JSON no key.
    #[test]
    fn transfers_are_a_table_per_peer_and_protocol() {
        use crate::history::transfers::{newest, tests::rows};
        let mut r = Report {
            host: HostInfo::current(),
            timestamp: 0,
            network: Vec::new(),
            disk: Vec::new(),
            cpu: Vec::new(),
            transfers: Vec::new(),
        };
        assert!(!r.markdown().contains("Transfers"));
        assert!(serde_json::to_value(&r).unwrap().get("transfers").is_none());
        r.transfers = newest(&rows());
        let md = r.markdown();
        let part = md
            .split("## Transfers by peer and protocol")
            .nth(1)
            .unwrap();
        assert_eq!(part.matches("\n| ").count(), 3, "{md}");
        assert!(
            part.contains(&format!(
                "| nas | TCP | 938 Mbit/s ({} UTC) | 941 Mbit/s ({} UTC) |",
                format_ts(100),
                format_ts(200)
            )),
            "{md}"
        );
        assert!(part.contains("| me@nas:22:/srv | SSH | "), "{md}");
        let back: Report = serde_json::from_value(serde_json::to_value(&r).unwrap()).unwrap();
        assert_eq!(back, r);
    }
}
