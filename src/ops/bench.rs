//! The benchmarks as operations: run, record the history row under the
//! uid that asked, return the report. `hlctl bench …` in process and
//! hlctld's `StartBenchmark` jobs both call these.

use super::row_store::{Requester, Stored, store};
use super::rows;
use crate::bench::cpu::{self, CpuConfig, CpuError, CpuReport};
use crate::bench::disk::{self, DiskConfig, DiskError, DiskReport};
use crate::bench::file::FileError;
use crate::bench::net::{self, ClientConfig, NetError, NetReport};
use crate::bench::progress::{Cancel, Progress};
use crate::bench::stress::{self, StressConfig, StressError, StressReport};
use crate::measure::settings_snapshot;
use crate::path::Peer;
use crate::paths::Paths;
use crate::protocol::FileRun;

/// A finished operation: its report and what became of its history row.
#[derive(Debug)]
pub(crate) struct Ran<R> {
    pub(crate) report: R,
    pub(crate) stored: Stored,
}

/// `bench net`: a test against an iperf3 server, stored with the peer and
/// the interface the route to it leaves by. A busy server is tried again
/// within `cfg.busy_window`, each wait said through `progress`.
pub(crate) fn net(
    paths: &Paths,
    cfg: &ClientConfig,
    who: Requester,
    progress: &dyn Progress,
    cancel: &Cancel,
) -> Result<Ran<NetReport>, NetError> {
    let peer = Peer {
        host: cfg.host.clone(),
        port: cfg.port,
    };
    let iface = peer
        .ip()
        .ok()
        .and_then(crate::path::route::egress_interface);
    // The cores are sampled around the waits for a busy peer too: a wait
    // sleeps, so it adds idle time to every CPU alike.
    let (report, cores) = crate::cpu::sample::around(iface.as_deref(), || {
        net::run_client_waiting(cfg, progress, cancel, &mut || {}).map(|(r, _busy_retries)| r)
    });
    let mut report = report?;
    report.set_cores(cores);
    let ifaces: Vec<String> = iface.iter().cloned().collect();
    let row = rows::bench_net(
        peer.label(),
        iface,
        &report,
        settings_snapshot(paths, &ifaces),
    );
    let stored = store(paths, who, row);
    Ok(Ran { report, stored })
}

/// `bench cpu`; a cancelled run is not stored.
pub(crate) fn cpu(
    paths: &Paths,
    cfg: &CpuConfig,
    who: Requester,
    progress: &dyn Progress,
    cancel: Cancel,
) -> Result<Ran<CpuReport>, CpuError> {
    let report = cpu::run(cfg, progress, cancel)?;
    let stored = if report.cancelled {
        Stored::NotAsked
    } else {
        store(
            paths,
            who,
            rows::bench_cpu(&report, settings_snapshot(paths, &[])),
        )
    };
    Ok(Ran { report, stored })
}

/// `bench disk` in `cfg.dir`; a cancelled run is not stored.
pub(crate) fn disk(
    paths: &Paths,
    cfg: &DiskConfig,
    who: Requester,
    progress: &dyn Progress,
    cancel: Cancel,
) -> Result<Ran<DiskReport>, DiskError> {
    let report = disk::run(cfg, progress, cancel)?;
    let stored = if report.cancelled {
        Stored::NotAsked
    } else {
        let dir = cfg.dir.to_string_lossy();
        store(
            paths,
            who,
            rows::bench_disk(&dir, &report, settings_snapshot(paths, &[])),
        )
    };
    Ok(Ran { report, stored })
}

/// `bench file`: the transfer, the layers beside it and the verdicts,
/// stored with the place (`user@host:/dir` or the mount); a cancelled run
/// is not stored.
pub(crate) fn file(
    paths: &Paths,
    req: &super::bench_file::FileRequest,
    who: Requester,
    progress: &dyn Progress,
    cancel: &Cancel,
) -> Result<Ran<FileRun>, FileError> {
    let report = super::bench_file::run(req, progress, cancel)?;
    let row = rows::bench_file(&report, settings_snapshot(paths, &[]));
    let stored = store(paths, who, row);
    Ok(Ran { report, stored })
}

/// `bench stress`: a verdict, not a figure to compare, so nothing is stored.
pub(crate) fn stress(
    cfg: &StressConfig,
    progress: &dyn Progress,
    cancel: Cancel,
) -> Result<StressReport, StressError> {
    stress::run(cfg, progress, cancel)
}
