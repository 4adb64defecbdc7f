//! `check` as an operation: measure what the configuration names (one
//! measurement on the host at a time) and store the result under the uid
//! that asked; comparing it with the baseline is the caller's next step.

use super::bench::Ran;
use super::record::{Requester, store};
use super::rows;
use crate::bench::progress::{Cancel, Progress};
use crate::check::{self, CheckReport};
use crate::config::Config;
use crate::paths::Paths;

pub(crate) fn run(
    cfg: &Config,
    paths: &Paths,
    who: Requester,
    progress: &dyn Progress,
    cancel: &Cancel,
) -> Ran<CheckReport> {
    let (size, secs) = (cfg.check.disk_size_mib << 20, cfg.check.bench_time_s);
    let disk = move |d: &str, c: &Cancel| crate::measure::disk(d, size, secs, c);
    let cpu = move |t: u32, c: &Cancel| crate::measure::cpu(t, secs, c);
    let mut report = check::run(
        &cfg.check,
        &cfg.peers(),
        &paths.measure_lock_file(),
        &check::Benches {
            disk: &disk,
            cpu: &cpu,
        },
        progress,
        cancel,
    );
    report.workloads = super::workload::on_check(&report, &cfg.workload.workloads());
    let stored = store(paths, who, rows::check(paths, &report));
    Ran { report, stored }
}
