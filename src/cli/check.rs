//! `hlctl check`: the scheduled measurements of hlctl.toml, stored, compared
//! and turned into metrics.

use clap::Args;

use super::exit;
use super::global::Global;
use super::output::{ProgressBar, print_json, table};
use crate::check::{self, CheckReport, PREVIOUS_CHECK};
use crate::config::Config;
use crate::history::compare::Comparison;
use crate::history::{History, Verdict};
use crate::path::Peer;

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

/// The configuration with the command line's overrides.
fn effective(global: &Global, args: &CheckArgs) -> Result<Config, i32> {
    let paths = global.paths();
    let loaded = crate::config::load(&paths.config_file, global.config.is_some());
    for p in &loaded.problems {
        eprintln!("hlctl check: warning: {p} (ignored)");
    }
    let mut c = loaded.config;
    if !args.peers.is_empty() {
        for p in &args.peers {
            if let Err(e) = Peer::parse(p) {
                eprintln!("hlctl check: {e}");
                return Err(exit::INVALID);
            }
        }
        c.check.peers = args.peers.clone();
    }
    if !args.dirs.is_empty() {
        c.check.dirs = args.dirs.clone();
    }
    if args.no_cpu {
        c.check.cpu = false;
    }
    if let Some(b) = &args.baseline {
        c.check.baseline = Some(b.clone());
    }
    if let Some(t) = args.time {
        c.check.time_s = t;
        c.check.bench_time_s = u64::from(t);
    }
    if let Some(t) = args.bench_time {
        c.check.bench_time_s = t;
    }
    if let Some(s) = args.disk_size {
        c.check.disk_size_mib = s;
    }
    if let Some(w) = args.busy_window {
        c.check.busy_window_s = w;
    }
    Ok(c)
}

pub(crate) fn run(global: &Global, args: CheckArgs) -> i32 {
    let cfg = match effective(global, &args) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let paths = global.paths();
    if args.if_kernel_changed
        && let Some(code) = same_kernel(&paths)
    {
        return code;
    }
    if !cfg.check_has_work() {
        eprintln!(
            "hlctl check: nothing to check: set [check] peers, dirs or cpu in {} (or --peer/--dir)",
            paths.config_file.display()
        );
        return exit::INVALID;
    }
    let r = measure(global, &cfg);
    let failures = failures(&r);
    let comparison = match History::open(&paths.state_dir)
        .and_then(|mut h| check::last_comparison(&mut h, &cfg.check))
    {
        Ok(x) => x.and_then(|(_, c)| c),
        Err(e) => return super::fail(&e, exit::FAILED),
    };
    let regressions: Vec<_> = comparison
        .iter()
        .flat_map(|c| &c.metrics)
        .filter(|m| m.verdict == Verdict::Regression)
        .collect();
    let logged_to = regressions.iter().fold(None, |_, m| {
        Some(check::journal::regression(
            &format!("regression: {}", m.text),
            &m.name,
            &m.subject,
        ))
    });
    let metrics_file = refresh_metrics(&paths, &cfg);
    let below = below_need(&r);
    if global.json {
        print_json(&serde_json::json!({
            "check": r,
            "comparison": comparison,
            "regressions": regressions.len(),
            "regressions_logged_to": logged_to,
            "failures": failures,
            "below_need": below,
            "metrics_file": metrics_file,
        }));
    } else {
        print_text(&r, comparison.as_ref());
        print!("{}", super::doctor::workload_text(&r.workloads));
        for b in &below {
            println!("{b}");
        }
        for f in &failures {
            println!("not measured: {f}");
        }
        if let Some(p) = &metrics_file {
            println!("Metrics: {}", p.display());
        }
    }
    if !regressions.is_empty() || !failures.is_empty() || !below.is_empty() {
        exit::FAILED
    } else {
        exit::OK
    }
}

/// Every `[workload]` layer the check measured below its need, with the
/// metric: "below the need: net 115 Mbit/s, plex-4k ×2 needs 200 Mbit/s".
fn below_need(r: &CheckReport) -> Vec<String> {
    r.workloads
        .iter()
        .flat_map(|a| {
            a.rows
                .iter()
                .filter(|x| x.verdict == "short")
                .map(move |x| {
                    format!(
                        "below the need: {} {}, {} needs {} ({})",
                        x.layer.name(),
                        x.layer.format(x.measured.unwrap_or(0.0)),
                        a.workload.label(),
                        x.layer.format(x.needed),
                        x.source
                    )
                })
        })
        .collect()
}

/// `--if-kernel-changed`: the exit code when there is nothing to do (the
/// kernel is the last check's, or no check ran yet), `None` to check.
fn same_kernel(paths: &crate::paths::Paths) -> Option<i32> {
    let now = crate::host::HostInfo::current().kernel;
    match History::open(&paths.state_dir).and_then(|mut h| check::last_kernel(&mut h)) {
        Ok(Some(k)) if k == now => {
            println!("hlctl check: kernel {now} is the one of the last check; nothing to do");
            Some(exit::OK)
        }
        Ok(None) => {
            println!("hlctl check: no check ran yet; the timer's first run makes the reference");
            Some(exit::OK)
        }
        Ok(Some(k)) => {
            println!("hlctl check: kernel changed ({k} → {now}): checking");
            None
        }
        Err(e) => Some(super::fail(&e, exit::FAILED)),
    }
}

/// What could not be measured, each with its subject.
fn failures(r: &CheckReport) -> Vec<String> {
    r.report
        .network
        .iter()
        .filter_map(|n| n.error.clone())
        .chain(
            r.report
                .disk
                .iter()
                .chain(&r.report.cpu)
                .filter_map(|e| e.error.as_ref().map(|x| format!("{}: {x}", e.subject))),
        )
        .collect()
}

/// Rewrite the Prometheus textfile when one is configured; warn when it fails.
fn refresh_metrics(paths: &crate::paths::Paths, cfg: &Config) -> Option<std::path::PathBuf> {
    match crate::metrics::refresh(paths, cfg) {
        Some(Ok(p)) => Some(p),
        Some(Err(e)) => {
            eprintln!("hlctl check: warning: metrics file not written: {e}");
            None
        }
        None => None,
    }
}

fn measure(global: &Global, cfg: &Config) -> CheckReport {
    let cancel = super::interrupt::cancel_on_interrupt();
    let bar = ProgressBar::new(global.json);
    let who = crate::ops::Requester::this_process();
    let ran = crate::ops::check::run(cfg, &global.paths(), who, &bar, &cancel);
    bar.finish();
    super::kept::warn_unstored(ran)
}

fn print_text(r: &CheckReport, c: Option<&Comparison>) {
    print!("{}", r.report.markdown());
    for p in &r.peers {
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
