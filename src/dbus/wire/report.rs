//! `Manager.Report`'s options (`a{sv}`), as both sides spell them: `peers`
//! as (HOST, HOST:PORT or [IPv6]:PORT), `dirs` as (absolute), `time_s` u
//! (1 to 60, default 10), `disk_size_mib` u (1 to 1048576, default 256),
//! `bench_time_s` u (1 to 600, default 10), `detached` b. The defaults are
//! those of `hlctl report`.

use zbus::Variant;

use super::error::{Error, Result};
use super::records::{Dict, OwnedDict};
use super::settings;
use crate::path::Peer;
use crate::problem::{Problem, join};

/// What `hlctl report` asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ReportParams {
    pub(crate) peers: Vec<String>,
    pub(crate) dirs: Vec<String>,
    pub(crate) time_s: u32,
    pub(crate) disk_size_mib: u32,
    pub(crate) bench_time_s: u32,
    pub(crate) detached: bool,
}

impl Default for ReportParams {
    fn default() -> Self {
        ReportParams {
            peers: Vec::new(),
            dirs: Vec::new(),
            time_s: 10,
            disk_size_mib: 256,
            bench_time_s: 10,
            detached: false,
        }
    }
}

impl ReportParams {
    pub(crate) fn encode(&self) -> Dict {
        let mut m = Dict::new();
        m.insert("peers".into(), Variant::from(self.peers.clone()));
        m.insert("dirs".into(), Variant::from(self.dirs.clone()));
        m.insert("time_s".into(), Variant::U32(self.time_s));
        m.insert("disk_size_mib".into(), Variant::U32(self.disk_size_mib));
        m.insert("bench_time_s".into(), Variant::U32(self.bench_time_s));
        m.insert("detached".into(), Variant::Bool(self.detached));
        m
    }

    /// Decode strictly; every problem is reported at once, naming the option
    /// and what is allowed.
    pub(crate) fn decode(m: &OwnedDict) -> Result<ReportParams> {
        let mut p = ReportParams::default();
        let mut problems = Vec::new();
        for (k, v) in m {
            let r = match k.as_str() {
                "peers" => settings::as_string_list(k, v).map(|x| p.peers = x),
                "dirs" => settings::as_string_list(k, v).map(|x| p.dirs = x),
                "time_s" => settings::as_u32_in(k, v, 1, 60).map(|x| p.time_s = x),
                "disk_size_mib" => {
                    settings::as_u32_in(k, v, 1, 1_048_576).map(|x| p.disk_size_mib = x)
                }
                "bench_time_s" => settings::as_u32_in(k, v, 1, 600).map(|x| p.bench_time_s = x),
                "detached" => settings::as_bool(k, v).map(|x| p.detached = x),
                other => Err(Problem::new(
                    format!("option {}", other.chars().take(64).collect::<String>()),
                    None,
                    "unknown option: allowed peers (as), dirs (as), time_s (u), \
                     disk_size_mib (u), bench_time_s (u), detached (b)",
                )),
            };
            if let Err(e) = r {
                problems.push(e);
            }
        }
        for peer in &p.peers {
            if let Err(e) = Peer::parse(peer) {
                problems.push(Problem::new("option peers", Some(peer), e));
            }
        }
        for d in &p.dirs {
            if !d.starts_with('/') {
                problems.push(Problem::new("option dirs", Some(d), "an absolute path"));
            }
        }
        if problems.is_empty() {
            Ok(p)
        } else {
            Err(Error::InvalidArgument(join(&problems)))
        }
    }
}
