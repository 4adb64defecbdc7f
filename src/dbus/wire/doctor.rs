//! `Manager.Doctor`'s options (`a{sv}`), as both sides spell them:
//! `interfaces` as, `peer` s (HOST, HOST:PORT or [IPv6]:PORT), `dirs` as
//! (absolute), `runs` u (1 to 20, default 1), `stress_s` u (0 to 600, default
//! 3), `disk_size_mib` u (0 to 1048576, default 256), `time_s` u (1 to 60,
//! default 2), `detached` b, `workloads` as (`plex-4k:3`,
//! `need:net=400M,cpu=3000`; judged in the report's `workloads`). The
//! defaults are those of `hlctl doctor`.

use zbus::Variant;

use super::error::{Error, Result};
use super::records::{Dict, OwnedDict};
use super::settings;
use crate::path::Peer;
use crate::problem::{Problem, join};

/// What `hlctl doctor` asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct DoctorParams {
    pub(crate) interfaces: Vec<String>,
    pub(crate) peer: Option<String>,
    pub(crate) dirs: Vec<String>,
    pub(crate) runs: u32,
    pub(crate) stress_s: u32,
    pub(crate) disk_size_mib: u32,
    pub(crate) time_s: u32,
    pub(crate) detached: bool,
    /// `plex-4k:3`, `need:net=400M,cpu=3000`.
    pub(crate) workloads: Vec<String>,
    /// Not on the wire: false in a read-only doctor (no CPU or disk runs
    /// for the workloads).
    pub(crate) workload_runs: bool,
}

impl Default for DoctorParams {
    fn default() -> Self {
        DoctorParams {
            interfaces: Vec::new(),
            peer: None,
            dirs: Vec::new(),
            runs: 1,
            stress_s: 3,
            disk_size_mib: 256,
            time_s: 2,
            detached: false,
            workloads: Vec::new(),
            workload_runs: true,
        }
    }
}

impl DoctorParams {
    pub(crate) fn encode(&self) -> Dict {
        let mut m = Dict::new();
        m.insert("interfaces".into(), Variant::from(self.interfaces.clone()));
        if let Some(p) = &self.peer {
            m.insert("peer".into(), Variant::from(p.clone()));
        }
        m.insert("dirs".into(), Variant::from(self.dirs.clone()));
        m.insert("runs".into(), Variant::U32(self.runs));
        m.insert("stress_s".into(), Variant::U32(self.stress_s));
        m.insert("disk_size_mib".into(), Variant::U32(self.disk_size_mib));
        m.insert("time_s".into(), Variant::U32(self.time_s));
        m.insert("detached".into(), Variant::Bool(self.detached));
        if !self.workloads.is_empty() {
            m.insert("workloads".into(), Variant::from(self.workloads.clone()));
        }
        m
    }

    /// Decode strictly; every problem is reported at once, naming the option
    /// and what is allowed.
    pub(crate) fn decode(m: &OwnedDict) -> Result<DoctorParams> {
        let mut p = DoctorParams::default();
        let mut problems = Vec::new();
        for (k, v) in m {
            let r = match k.as_str() {
                "interfaces" => settings::as_string_list(k, v).map(|x| p.interfaces = x),
                "dirs" => settings::as_string_list(k, v).map(|x| p.dirs = x),
                "peer" => settings::as_str(k, v).map(|x| p.peer = Some(x)),
                "runs" => settings::as_u32_in(k, v, 1, 20).map(|x| p.runs = x),
                "stress_s" => settings::as_u32_in(k, v, 0, 600).map(|x| p.stress_s = x),
                "disk_size_mib" => {
                    settings::as_u32_in(k, v, 0, 1_048_576).map(|x| p.disk_size_mib = x)
                }
                "time_s" => settings::as_u32_in(k, v, 1, 60).map(|x| p.time_s = x),
                "detached" => settings::as_bool(k, v).map(|x| p.detached = x),
                "workloads" => settings::as_string_list(k, v).map(|x| p.workloads = x),
                other => Err(Problem::new(
                    format!("option {}", other.chars().take(64).collect::<String>()),
                    None,
                    "unknown option: allowed interfaces (as), peer (s), dirs (as), runs (u), \
                     stress_s (u), disk_size_mib (u), time_s (u), detached (b), workloads (as)",
                )),
            };
            if let Err(e) = r {
                problems.push(e);
            }
        }
        if let Some(peer) = &p.peer
            && let Err(e) = Peer::parse(peer)
        {
            problems.push(Problem::new("option peer", Some(peer), e));
        }
        for w in &p.workloads {
            if let Err(e) = crate::workload::Workload::parse_spec(w) {
                problems.push(Problem::new("option workloads", Some(w), e));
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

    /// Whether it writes into directories (the disk measurement).
    pub(crate) fn writes_files(&self) -> bool {
        !self.dirs.is_empty() && self.disk_size_mib > 0
    }

    /// The measurements it asks for, as the report names them when they are
    /// left out: each runs as root and needs run-benchmark.
    pub(crate) fn measurements(&self) -> Vec<&'static str> {
        let mut m = Vec::new();
        if self.stress_s > 0 {
            m.push("cpu stress");
        }
        if self.peer.is_some() {
            m.push("peer path and throughput");
        }
        if self.writes_files() {
            m.push("storage throughput");
        }
        let runs = self.workloads.iter().any(|w| {
            crate::workload::Workload::parse_spec(w).is_ok_and(|w| {
                w.needs(crate::workload::Layer::Cpu)
                    || w.needs(crate::workload::Layer::DiskRandread)
            })
        });
        if runs && self.workload_runs {
            m.push("workload CPU and random-read runs");
        }
        m
    }

    /// The same request without any measurement: the read-only checks
    /// (the directories' mounts are still looked at).
    pub(crate) fn read_only(self) -> DoctorParams {
        DoctorParams {
            stress_s: 0,
            peer: None,
            disk_size_mib: 0,
            workload_runs: false,
            ..self
        }
    }
}
