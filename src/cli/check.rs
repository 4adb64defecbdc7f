//! `hlctl check`: the scheduled measurements of hlctl.toml, stored, compared
//! and turned into metrics.

use clap::Args;

use super::backend::{Backend, Need};
use super::error::CliError;
use super::exit;
use super::global::Global;
use super::output::{ProgressBar, print_json, table};
use crate::check::{CheckReport, PREVIOUS_CHECK};
use crate::dbus::wire::check::CheckParams;
use crate::dbus::wire::verb;
use crate::history::Verdict;
use crate::history::compare::Comparison;
use crate::ops::check::{CheckOutcome, Overrides};
use crate::paths::Paths;

/// Run the checks configured in hlctl.toml ([check]): network to every peer
/// in both directions, disk on every directory, CPU; store them in the
/// history, compare with the configured baseline (or with the previous check
/// when there is none), print a verdict per metric, write hlctl.prom into
/// the [metrics] textfile directory, and log every regression to the journal
/// (warning, MESSAGE_ID=5f1c2a7e9b3d4c60a8e1f2d3c4b5a697) or to stderr.
///
/// A peer that is busy (it serves someone else, or measures itself) is tried
/// again after a random back-off within busy_window_s; a figure is never
/// taken while the peer serves another test. hlctl-check.timer runs this on
/// the configured schedule.
///
/// Through hlctld (as every verb, unless --local or hlctld is not
/// reachable) the check runs there, on hlctld's configuration with these
/// options over it, and is stored under the caller's uid.
///
/// Exit codes: 0 no regression; 1 a regression, a measurement that failed
/// or a `[workload]` need not met; 2 invalid input.
#[derive(Debug, Args)]
pub(crate) struct CheckArgs {
    /// Measure to this peer instead of the configured ones (repeatable).
    #[arg(long = "peer", value_name = "HOST[:PORT]")]
    pub(crate) peers: Vec<String>,
    /// Measure the disk in this directory instead of the configured ones (repeatable).
    #[arg(long = "dir", value_name = "PATH")]
    pub(crate) dirs: Vec<String>,
    /// Skip the CPU runs.
    #[arg(long)]
    pub(crate) no_cpu: bool,
    /// Compare with this baseline instead of the configured one.
    #[arg(long, value_name = "NAME")]
    pub(crate) baseline: Option<String>,
    /// Seconds per run: each network direction, the random-read disk run
    /// and each CPU run, 1 to 60 [default: the config's time_s and
    /// bench_time_s, 10].
    #[arg(long, value_name = "S", value_parser = crate::units::ranged(1u32, 60))]
    pub(crate) time: Option<u32>,
    /// The old name for the disk and CPU runs' length (--time covers them).
    #[arg(long, hide = true, value_name = "S", value_parser = crate::units::ranged(1u64, 600))]
    pub(crate) bench_time: Option<u64>,
    /// Size written and read back per directory: 256M, 1G (binary units; a
    /// plain number is MiB) [default: the config's, else 256M].
    #[arg(long, value_name = "SIZE", value_parser = super::bench_parse::disk_size_mib(1))]
    pub(crate) disk_size: Option<u64>,
    /// Seconds within which a busy peer is retried [default: config, 600].
    #[arg(long, value_name = "S", value_parser = crate::units::ranged(0u64, 86400))]
    pub(crate) busy_window: Option<u64>,
    /// Only run when the kernel release differs from the last check's
    /// (hlctl-check-boot.service); otherwise say so and exit 0.
    #[arg(long)]
    pub(crate) if_kernel_changed: bool,
}

impl CheckArgs {
    /// What the command line changes in `[check]`.
    fn overrides(&self) -> Overrides {
        Overrides {
            peers: self.peers.clone(),
            // Absolute, so that hlctld measures where this shell meant.
            dirs: self
                .dirs
                .iter()
                .map(|d| {
                    std::path::absolute(d).map_or(d.clone(), |p| p.to_string_lossy().into_owned())
                })
                .collect(),
            no_cpu: self.no_cpu,
            baseline: self.baseline.clone(),
            time_s: self.time,
            bench_time_s: self.bench_time,
            disk_size_mib: self.disk_size,
            busy_window_s: self.busy_window,
            if_kernel_changed: self.if_kernel_changed,
        }
    }
}

/// `hlctl check`: through hlctld (a `Check` job, hlctld's configuration) or
/// in this process, by [`Backend::select`]'s rule; either way
/// [`crate::ops::check::run`] does the whole check and this prints it.
pub(crate) fn run(global: &Global, args: CheckArgs) -> i32 {
    let o = args.overrides();
    // Checked here, before the path is chosen: the same message either way.
    if let Err(e) = o.validate() {
        return CliError::new(format!("check: {e}"), e.class().exit_code()).report();
    }
    let bar = ProgressBar::new(global.json);
    let outcome = match Backend::select(global, Need::Nothing) {
        Ok(Backend::Bus(remote)) => through_daemon(&remote, o, &bar),
        Ok(Backend::Local { paths, .. }) => in_process(global, &paths, &o, &bar),
        Err(e) => Err(e),
    };
    bar.finish();
    let outcome = match outcome {
        Ok(x) => x,
        Err(e) => return e.report(),
    };
    for w in &outcome.warnings {
        eprintln!("hlctl check: warning: {w}");
    }
    if global.json {
        print_json(&outcome);
    } else {
        print_outcome(&outcome);
    }
    if outcome.passed {
        exit::OK
    } else {
        exit::FAILED
    }
}

/// The check as a job of hlctld's.
fn through_daemon(
    remote: &super::remote::Remote,
    overrides: Overrides,
    bar: &ProgressBar,
) -> Result<CheckOutcome, CliError> {
    let params = CheckParams {
        overrides,
        detached: false,
    };
    let call = super::remote::JobCall {
        what: "check",
        progress: bar,
        confirm: false,
        cancelling: "cancelling",
        partial_ok: false,
    };
    remote.follow(call, remote.start(&verb::CHECK, params.encode()))
}

/// The check in this process, stored in this user's history.
fn in_process(
    global: &Global,
    paths: &Paths,
    o: &Overrides,
    bar: &ProgressBar,
) -> Result<CheckOutcome, CliError> {
    let cancel = super::interrupt::cancel_on_interrupt();
    let who = crate::ops::Requester::this_process();
    crate::ops::check::run(paths, global.config.is_some(), o, who, bar, &cancel)
        .map_err(|e| CliError::new(format!("check: {e}"), e.class().exit_code()))
}

fn print_outcome(o: &CheckOutcome) {
    if let Some(k) = &o.kernel {
        println!("hlctl check: {k}");
    }
    let Some(r) = &o.check else {
        return;
    };
    print_text(r, o.comparison.as_ref());
    print!("{}", super::doctor::workload_text(&r.workloads));
    for b in &o.below_need {
        println!("{b}");
    }
    for f in &o.failures {
        println!("not measured: {f}");
    }
    if let Some(p) = &o.metrics_file {
        println!("Metrics: {}", p.display());
    }
}

fn print_text(r: &CheckReport, c: Option<&Comparison>) {
    print!("{}", r.report.markdown());
    print_files(&r.files);
    for p in &r.peers {
        for d in &p.directions {
            if let Some(c) = &d.cores {
                println!(
                    "{}: {}",
                    p.peer,
                    crate::cpu::text::line(&d.direction.to_string(), c)
                );
            }
        }
        if p.busy_retries() > 0 {
            println!(
                "\n{}: busy {} time(s), retried after a random back-off",
                p.peer,
                p.busy_retries()
            );
        }
    }
    let Some(c) = c else {
        println!("\nNo reference yet (no baseline, no earlier check): this check is the first.");
        return;
    };
    println!(
        "\nAgainst {} ({}), threshold {}%:",
        if c.baseline == PREVIOUS_CHECK {
            "the previous check".to_string()
        } else {
            format!("baseline '{}'", c.baseline)
        },
        crate::history::store::format_ts(c.baseline_ts),
        c.threshold_percent
    );
    let mut t = vec![vec![
        "metric".to_string(),
        "subject".into(),
        "reference".into(),
        "now".into(),
        "change".into(),
        "verdict".into(),
    ]];
    for m in &c.metrics {
        t.push(vec![
            m.name.clone(),
            m.subject.clone(),
            crate::history::store::format_value(m.baseline, &m.unit),
            m.now.map_or("-".into(), |v| {
                crate::history::store::format_value(v, &m.unit)
            }),
            m.change_percent.map_or("-".into(), |p| format!("{p:+.0}%")),
            m.verdict.to_string(),
        ]);
    }
    print!("{}", table(&t));
    for m in c
        .metrics
        .iter()
        .filter(|m| m.verdict == Verdict::Regression)
    {
        println!("{}", m.text);
    }
}

/// `[check] files`: per target its protocol and both directions, in MB/s.
fn print_files(files: &[crate::check::FileEntry]) {
    if files.is_empty() {
        return;
    }
    println!("\n## Files\n\n| target | protocol | write | read |\n|---|---|---|---|");
    for e in files {
        match (&e.file, &e.error) {
            (Some(f), _) => println!(
                "| {} | {} | {:.1} MB/s | {:.1} MB/s |",
                e.target,
                f.protocol,
                f.write.bytes_per_second / 1e6,
                f.read.bytes_per_second / 1e6
            ),
            (None, err) => println!(
                "| {} | - | not run: {} | |",
                e.target,
                err.as_deref().unwrap_or("?")
            ),
        }
    }
}
