//! `hlctl tune`: measure, change one thing at a time, keep what is proven better.

use std::io::IsTerminal;
use std::time::Duration;

use clap::Args;

use super::backend::Backend;
use super::error::CliError;
use super::exit;
use super::global::Global;
use super::output::{ProgressBar, print_json};
use super::tune_text::render;
use crate::dbus::wire::verb;
use crate::tune::outcome::{Outcome, TuneReport};
use crate::tune::params::TuneParams;
use crate::tune::{self, checkpoint, rollback};

/// Tune an interface against a peer, with before/after proof and rollback.
///
/// The peer is checked first (the connection within 2 s and iperf3's first
/// answer within 2 s): when no benchmark server answers, tune stops with the
/// reason and exit code 1 before changing or measuring anything.
///
/// 1. Baseline: the network benchmark to the peer (which runs `hlctl serve`
///    or `iperf3 -s`) in both directions (or the one --direction names),
///    --runs minus one times each from three runs up (all --runs with
///    --dry-run), plus the doctor's findings.
/// 2. Plan: candidate changes in order, each with its reason: ring buffers
///    to their maximum, TCP buffers from the bandwidth-delay product,
///    offloads back on, flow control, MTU 9000 (kept only if a don't-fragment
///    probe of that size reaches the peer), congestion control bbr on long
///    paths, txqueuelen; where one core did the receive work, more channels
///    (else RPS) and interrupt coalescing; then your own --try candidates.
///    --dry-run stops here.
/// 3. Each candidate is a checkpoint: the values it overwrites are journalled
///    to disk first, then it is applied, the peer's port must still answer
///    and no default route may go away, and the benchmark runs again, one
///    run each way at a time, up to --runs. It is kept only if, in some
///    direction, every run beats every reference run by more than the
///    larger of --min-gain and the run-to-run noise, and no direction got
///    worse; otherwise it is reverted. It is decided as soon as its runs
///    decide it: reverted once one run each way fails that (no later run
///    could make a keep), kept early only on stricter evidence (a majority
///    of the runs beyond twice the threshold, or 3× every reference run)
///    with no direction that could still turn out worse.
/// 4. Commit-confirm: applied changes carry a deadline (--confirm-timeout);
///    if it passes without the tuner renewing it or the client confirming,
///    the daemon (hlctld) restores the journalled values on its own. If the
///    daemon itself dies mid-change, it restores them when it starts again.
/// 5. Report: setting, before, after, throughput before → after with Δ%,
///    kept or reverted and why; then what was kept is persisted to
///    sysctl.d/90-hlctl.conf and the NIC state file (unless --no-persist).
///
/// Ctrl-C cancels and rolls everything back. `hlctl rollback IFACE` undoes
/// the last tune later; `hlctl status` shows pending checkpoints.
///
/// With --local (root only) the same code runs in this process with the
/// same journal, checks and rollback, but WITHOUT the daemon-side deadline:
/// if this process is killed, the journalled values are restored only by
/// `hlctl rollback` or when hlctld next starts.
///
/// Exit codes: 0 done (kept or not); 1 rolled back, cancelled or failed;
/// 2 invalid input; 3 not permitted.
#[derive(Debug, Args)]
#[command(verbatim_doc_comment)]
pub(crate) struct TuneArgs {
    /// The interface to tune.
    #[arg(value_name = "IFACE")]
    pub(crate) interface: String,

    /// The peer running a benchmark server: HOST, HOST:PORT or [IPv6]:PORT (port default 5201).
    #[arg(long, value_name = "HOST[:PORT]")]
    pub(crate) peer: String,

    /// Show the baseline and the plan; change nothing.
    #[arg(long)]
    pub(crate) dry_run: bool,

    /// Do not ask before changing settings (needed when not on a terminal).
    #[arg(long, short = 'y')]
    pub(crate) yes: bool,

    /// Benchmark runs per direction for each candidate at most; the baseline
    /// takes one fewer from three up (all of them with --dry-run). With one
    /// run no noise is measured: a change beyond --min-gain decides alone,
    /// so an unchanged direction's noise can revert a real gain (raise
    /// --min-gain then). Where whole runs stall (a peer's starved receive
    /// buffer), more runs make a baseline that stalled every time rarer.
    #[arg(long, default_value_t = 3, value_parser = crate::units::ranged(1u32, 20))]
    pub(crate) runs: u32,

    /// Seconds per benchmark run.
    #[arg(long, default_value_t = 5, value_parser = crate::units::ranged(1u32, 60))]
    pub(crate) time: u32,

    /// Smallest gain (percent) over every reference run that keeps a
    /// candidate; the run-to-run noise raises it when larger.
    #[arg(long, default_value_t = 3.0, value_name = "PCT")]
    pub(crate) min_gain: f64,

    /// Seconds the kept changes wait for this client's confirmation before
    /// the daemon rolls them back; a change being tried gets at least this
    /// (and at least two benchmark runs) between the tuner's renewals.
    #[arg(long, default_value_t = 60, value_name = "S", value_parser = crate::units::ranged(5u64, 3600))]
    pub(crate) confirm_timeout: u64,

    /// Keep the changes only until reboot: do not write sysctl.d or the NIC state file.
    #[arg(long)]
    pub(crate) no_persist: bool,

    /// Do not try MTU 9000.
    #[arg(long)]
    pub(crate) no_mtu: bool,

    /// An extra candidate to measure: `hlctl set` words ('ring rx 512',
    /// 'feature gro off') or one sysctl ('net.ipv4.tcp_wmem=4096 16384 65536'). Repeatable.
    #[arg(long = "try", value_name = "CHANGE")]
    pub(crate) tries: Vec<String>,

    /// Measure and decide on one direction only: `download` (the peer sends
    /// to this host: a media player's box, a backup target) or `upload`
    /// (this host sends: a NAS serving reads). A change is then kept for a
    /// gain in that direction, whatever it does to the other, which is
    /// never measured. `both` (the default) keeps nothing that makes
    /// either direction worse.
    #[arg(long, value_name = "WAY", default_value = "both", value_parser = ["both", "upload", "download"])]
    pub(crate) direction: String,
}

pub(crate) fn run(global: &Global, args: TuneArgs) -> i32 {
    let p = TuneParams {
        interface: args.interface.clone(),
        peer: args.peer.clone(),
        runs: Some(args.runs),
        time_s: Some(args.time),
        min_gain_percent: Some(args.min_gain),
        confirm_timeout_s: Some(args.confirm_timeout),
        dry_run: args.dry_run,
        no_persist: args.no_persist,
        no_mtu: args.no_mtu,
        tries: args.tries.clone(),
        direction: (args.direction != "both").then(|| args.direction.clone()),
    };
    // Invalid parameters stop here; the peer is checked where the tune runs
    // (ops::tune: this process or hlctld, which may be in another namespace).
    if let Err(e) = p.options(None) {
        eprintln!("hlctl tune: {e}");
        return exit::INVALID;
    }
    if !args.dry_run && !args.yes {
        if !std::io::stdin().is_terminal() {
            eprintln!(
                "hlctl tune: not on a terminal: add --yes to let the tuner change settings (or --dry-run to see the plan)"
            );
            return exit::INVALID;
        }
        eprint!(
            "hlctl tune changes {} one setting at a time, keeping only what measures better \
             (see --dry-run for the plan). Go ahead? [y/N] ",
            args.interface
        );
        let mut line = String::new();
        let _ = std::io::stdin().read_line(&mut line);
        if !matches!(line.trim(), "y" | "Y" | "yes") {
            eprintln!("Nothing changed.");
            return exit::OK;
        }
    }
    let bar = ProgressBar::new(global.json);
    let result = match Backend::select(global, super::backend::Need::Privilege) {
        Err(e) => return e.report(),
        Ok(Backend::Bus(remote)) => through_daemon(&remote, &p, &bar),
        Ok(Backend::Local { paths, .. }) => local(&paths, &p, &bar).map_err(local_error),
    };
    bar.finish();
    let report = match result {
        Ok(r) => r,
        Err(e) => return e.report(),
    };
    if global.json {
        print_json(&report);
    } else {
        print!("{}", render(&report));
    }
    match report.outcome {
        Outcome::Done | Outcome::DryRun => exit::OK,
        Outcome::Cancelled | Outcome::RolledBack => exit::FAILED,
    }
}

/// A tune's error in this process, worded as hlctld's: an interface that
/// does not exist is said by itself (its message names it, as the Tune
/// method's error does); the rest under "tune:".
fn local_error(e: tune::TuneError) -> CliError {
    let code = e.class().exit_code();
    match e {
        tune::TuneError::Nic(n @ crate::nic::error::NicError::NoSuchInterface { .. }) => {
            CliError::new(n.to_string(), code)
        }
        e => CliError::new(format!("tune: {e}"), code),
    }
}

/// In this process (`--local`, or root without a daemon): same journal,
/// checks and rollback, with a watchdog thread of this process instead of the
/// daemon's deadline.
fn local(
    paths: &crate::paths::Paths,
    p: &TuneParams,
    bar: &ProgressBar,
) -> Result<TuneReport, tune::TuneError> {
    let cancel = super::interrupt::cancel_on_interrupt();
    let stop = crate::bench::progress::Cancel::new();
    let dog = checkpoint::spawn_watchdog(
        paths.clone(),
        Duration::from_millis(500),
        stop.clone(),
        rollback::restore_journal(paths),
        |r| eprintln!("hlctl tune: {}: {}: restored", r.interface, r.why),
    );
    let mut confirm = |_: &TuneReport| true;
    let who = crate::ops::Requester::this_process();
    let r = crate::ops::tune::run(p, paths, who, bar, &cancel, &mut confirm);
    stop.cancel();
    let _ = dog.join();
    r.map(super::kept::warn_unstored)
}

/// Through hlctld: the tune job, confirmed when it asks (commit-confirm: if
/// this client is gone by then, the daemon rolls the changes back at the
/// deadline); Ctrl-C cancels it.
fn through_daemon(
    r: &super::remote::Remote,
    p: &TuneParams,
    bar: &ProgressBar,
) -> Result<TuneReport, CliError> {
    let opts = crate::dbus::wire::start::TuneOptions {
        params: p.clone(),
        detached: false,
    }
    .encode();
    let call = super::remote::JobCall {
        what: "tune",
        progress: bar,
        confirm: true,
        cancelling: "cancelling: rolling back",
        partial_ok: false,
    };
    r.follow(call, r.start(&verb::TUNE, opts))
}
