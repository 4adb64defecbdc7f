//! `hlctl doctor`: read-only diagnosis. Every finding carries the values it
//! rests on, why it matters and the exact fix; a check whose data this
//! machine cannot provide is listed as not checked, with the reason.
//!
//! - [`gather`]: read interfaces (twice, a second apart), sysctls, and
//!   towards `--peer` the RTT, path MTU and throughput;
//! - checks, one file per area: [`link`] (with [`link_speed`]), [`counters`], [`features`],
//!   [`owners`] (persisted settings a network manager sets back),
//!   [`mtu`], [`tcp`], [`path`], [`cpu`], [`mounts`], [`stack`] (bridges
//!   and bonds), [`storage`] (the NFS playbook: network vs NFS vs local disk);
//! - [`finding`]: the report's types.

pub(crate) mod cores;
pub(crate) mod counters;
pub(crate) mod cpu;
pub(crate) mod features;
pub(crate) mod finding;
pub(crate) mod gather;
pub(crate) mod guests;
pub(crate) mod inputs;
pub(crate) mod link;
pub(crate) mod link_speed;
pub(crate) mod mounts;
pub(crate) mod mtu;
pub(crate) mod owners;
pub(crate) mod path;
pub(crate) mod stack;
pub(crate) mod storage;
pub(crate) mod tcp;

use std::time::Duration;

use serde::{Deserialize, Serialize};

pub(crate) use finding::{Check, Finding, Outcome};
pub(crate) use inputs::Inputs;

use crate::bench::progress::{Cancel, Progress};
use crate::host::HostInfo;
use crate::path::Peer;
use crate::path::throughput::Measure;
use crate::paths::Paths;

#[derive(Debug, thiserror::Error)]
pub(crate) enum DoctorError {
    #[error(transparent)]
    Nic(#[from] crate::nic::error::NicError),
    /// No benchmark server answers at the peer the doctor was to measure.
    #[error("{0}")]
    Peer(String),
    /// What was asked cannot be done as given (a peer or a workload that
    /// does not parse).
    #[error("{0}")]
    Invalid(String),
}

impl DoctorError {
    /// Its class ([`crate::class`]): a NIC error's own (no such interface,
    /// an invalid setting: the caller's input), else failed.
    pub(crate) fn class(&self) -> crate::class::Class {
        match self {
            DoctorError::Nic(n) => n.class(),
            DoctorError::Peer(_) => crate::class::Class::Failed,
            DoctorError::Invalid(_) => crate::class::Class::Invalid,
        }
    }
}

/// What to examine.
#[derive(Clone, Debug)]
pub(crate) struct Options {
    /// Interfaces; empty = the one towards the peer, else the physical NICs that are up.
    pub(crate) interfaces: Vec<String>,
    pub(crate) peer: Option<Peer>,
    pub(crate) dirs: Vec<String>,
    /// Time between the two counter samples.
    pub(crate) sample_interval: Duration,
    /// Throughput runs per direction (when a benchmark server answers at the peer).
    pub(crate) runs: u32,
    /// Length of the CPU stress that looks for throttling (zero: none).
    pub(crate) stress: Duration,
    /// Bytes written and read back in each `--dir` (zero: no measurement).
    pub(crate) disk_size: u64,
    /// `--workload`/`--need`: judged against what was measured.
    pub(crate) workloads: Vec<crate::workload::Workload>,
    /// Whether a workload that needs the CPU or random reads may run them
    /// (not in a read-only doctor).
    pub(crate) workload_runs: bool,
    /// The fleet's Prometheus: a network mount's server's own disk and CPU.
    pub(crate) fleet: Option<crate::matrix::Fleet>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            interfaces: Vec::new(),
            peer: None,
            dirs: Vec::new(),
            sample_interval: Duration::from_secs(1),
            runs: 1,
            stress: Duration::from_secs(3),
            disk_size: storage::DEFAULT_SIZE,
            workloads: Vec::new(),
            workload_runs: true,
            fleet: None,
        }
    }
}

/// The doctor's report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Report {
    #[serde(flatten)]
    pub(crate) host: HostInfo,
    pub(crate) timestamp: i64,
    pub(crate) interfaces: Vec<String>,
    pub(crate) findings: Vec<Finding>,
    pub(crate) passed: Vec<Check>,
    pub(crate) not_checked: Vec<Check>,
    /// What was measured towards the peer.
    pub(crate) peer: Option<inputs::PeerData>,
    /// What limits each direction towards the peer (kind, sentence, and the
    /// link speed it was judged against).
    #[serde(default)]
    pub(crate) limits: Vec<crate::path::limit::LimitNote>,
    /// Bridges and bonds among the interfaces (each examined whole).
    #[serde(default)]
    pub(crate) stacks: Vec<crate::nic::stack::Stack>,
    /// `--dir`: sequential write and read per directory.
    #[serde(default)]
    pub(crate) storage: Vec<inputs::DirResult>,
    /// `--workload`: will it carry what the owner runs?
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) workloads: Vec<crate::workload::Answer>,
}

/// Run every check on gathered inputs (pure: no I/O).
pub(crate) fn check(inp: &Inputs) -> Outcome {
    let mut out = Outcome::default();
    for s in &inp.interfaces {
        link::check(s, &mut out);
        counters::check(s, &mut out);
        features::check_offloads(s, &mut out);
        features::check_pause(s, &mut out);
    }
    stack::check(inp, &mut out);
    owners::check(inp, &mut out);
    mtu::check(inp, &mut out);
    tcp::check_buffers(inp, &mut out);
    tcp::check_congestion(inp, &mut out);
    tcp::check_slow_start(inp, &mut out);
    path::check(inp, &mut out);
    cores::check(inp, &mut out);
    guests::check(inp, &mut out);
    link_speed::tie_to_measurement(inp, &mut out);
    cpu::check(inp.cpu.as_ref(), &mut out);
    for m in &inp.mounts {
        match m {
            Ok(m) => mounts::check(m, &mut out),
            Err((dir, why)) => out.skip("filesystem", None, format!("{dir}: {why}")),
        }
    }
    storage::check(inp, &mut out);
    out.sort();
    out
}

/// Gather and check.
pub(crate) fn run(
    opts: &Options,
    paths: &Paths,
    measure: Option<&dyn Measure>,
    progress: &dyn Progress,
    cancel: &Cancel,
) -> Result<(Report, Inputs), DoctorError> {
    let inp = gather::gather(opts, paths, measure, progress, cancel)?;
    let out = check(&inp);
    let report = Report {
        host: HostInfo::current(),
        timestamp: crate::host::now_unix(),
        interfaces: inp
            .interfaces
            .iter()
            .map(|s| s.name().to_string())
            .collect(),
        findings: out.findings,
        passed: out.passed,
        not_checked: out.not_checked,
        peer: inp.peer.clone(),
        limits: path::limits(&inp),
        stacks: stack::stacks(&inp),
        storage: inp.storage.clone(),
        workloads: Vec::new(),
    };
    Ok((report, inp))
}
