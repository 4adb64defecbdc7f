//! `doctor` as an operation: gather, check, store the report under the uid
//! that asked. [`DoctorRequest`] is what either front end asks for (the
//! CLI's flags, `Manager.Doctor`'s options); [`run_request`] turns it into
//! the doctor's options once, for both.

use super::bench::Ran;
use super::row_store::{Requester, store};
use super::rows;
use crate::bench::progress::{Cancel, Progress};
use crate::doctor::{self, DoctorError, Options, Report};
use crate::path::Peer;
use crate::path::throughput::Measure;
use crate::paths::Paths;
use crate::workload::{Layer, Workload};

/// What a doctor is asked for, as `hlctl doctor`'s flags and
/// `Manager.Doctor`'s options say it (their defaults are these).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct DoctorRequest {
    pub(crate) interfaces: Vec<String>,
    /// HOST, HOST:PORT or [IPv6]:PORT.
    pub(crate) peer: Option<String>,
    pub(crate) dirs: Vec<String>,
    pub(crate) runs: u32,
    pub(crate) stress_s: u32,
    pub(crate) disk_size_mib: u32,
    pub(crate) time_s: u32,
    /// `plex-4k:3`, `need:net=400M,cpu=3000`.
    pub(crate) workloads: Vec<String>,
    /// False in a read-only doctor (no CPU or disk runs for the workloads).
    pub(crate) workload_runs: bool,
    /// The fleet's Prometheus, where a mount's server's own figures are read.
    pub(crate) prometheus: Option<String>,
    /// The scrape label naming a host there (None: `host`).
    pub(crate) host_label: Option<String>,
}

impl Default for DoctorRequest {
    fn default() -> Self {
        DoctorRequest {
            interfaces: Vec::new(),
            peer: None,
            dirs: Vec::new(),
            runs: 1,
            stress_s: 3,
            disk_size_mib: 256,
            time_s: 2,
            workloads: Vec::new(),
            workload_runs: true,
            prometheus: None,
            host_label: None,
        }
    }
}

impl DoctorRequest {
    /// The peer, parsed.
    pub(crate) fn peer(&self) -> Result<Option<Peer>, DoctorError> {
        self.peer
            .as_deref()
            .map(Peer::parse)
            .transpose()
            .map_err(DoctorError::Invalid)
    }

    /// The doctor's options: the one conversion both front ends use.
    pub(crate) fn options(&self) -> Result<Options, DoctorError> {
        let workloads = self
            .workloads
            .iter()
            .map(|w| Workload::parse_spec(w).map_err(DoctorError::Invalid))
            .collect::<Result<Vec<_>, _>>()?;
        let fleet = self
            .prometheus
            .as_deref()
            .map(|url| crate::matrix::Fleet::parse(url, self.host_label.as_deref()))
            .transpose()
            .map_err(|e| DoctorError::Invalid(e.to_string()))?;
        Ok(Options {
            interfaces: self.interfaces.clone(),
            peer: self.peer()?,
            dirs: self.dirs.clone(),
            runs: self.runs,
            stress: std::time::Duration::from_secs(self.stress_s.into()),
            disk_size: u64::from(self.disk_size_mib) << 20,
            workloads,
            workload_runs: self.workload_runs,
            fleet,
            ..Default::default()
        })
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
            Workload::parse_spec(w)
                .is_ok_and(|w| w.needs(Layer::Cpu) || w.needs(Layer::DiskRandread))
        });
        if runs && self.workload_runs {
            m.push("workload CPU and random-read runs");
        }
        m
    }

    /// The same request without any measurement: the read-only checks
    /// (the directories' mounts are still looked at).
    pub(crate) fn read_only(self) -> DoctorRequest {
        DoctorRequest {
            stress_s: 0,
            peer: None,
            disk_size_mib: 0,
            workload_runs: false,
            ..self
        }
    }
}

/// Diagnose as `req` asks (the path to its peer measured with its
/// `time_s`), in this process or as hlctld's job.
pub(crate) fn run_request(
    req: &DoctorRequest,
    paths: &Paths,
    who: Requester,
    progress: &dyn Progress,
    cancel: &Cancel,
) -> Result<Ran<Report>, DoctorError> {
    let opts = req.options()?;
    let measure = opts
        .peer
        .as_ref()
        .map(|p| crate::path::measure_for(p, req.time_s));
    run(&opts, paths, measure.as_deref(), who, progress, cancel)
}

/// Diagnose as `opts` asks, measuring the path with `measure` when a peer
/// is given.
fn run(
    opts: &Options,
    paths: &Paths,
    measure: Option<&dyn Measure>,
    who: Requester,
    progress: &dyn Progress,
    cancel: &Cancel,
) -> Result<Ran<Report>, DoctorError> {
    // A doctor that will measure towards the peer checks first, where it
    // runs, that a benchmark server answers there.
    if let (Some(peer), Some(_)) = (&opts.peer, measure) {
        crate::bench::net::check_peer(&peer.host, peer.port)
            .map_err(|e| DoctorError::Peer(e.to_string()))?;
    }
    let (mut report, inputs) = doctor::run(opts, paths, measure, progress, cancel)?;
    report.workloads = super::workload::answers(opts, paths, &report, progress, cancel);
    let stored = store(paths, who, rows::doctor(&report, &inputs));
    Ok(Ran { report, stored })
}
