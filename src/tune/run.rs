//! The tuning loop: baseline → plan (with the cores the baseline saw) → for each candidate: journal, apply,
//! connectivity check, (MTU: don't-fragment probe), re-benchmark, keep or
//! revert → confirm → persist. Cancel or any failure rolls everything back.

use std::time::Duration;

use super::TuneError;
use super::change::Change;
use super::checkpoint::Checkpoint;
use super::outcome::{Both, Outcome, StepStatus, TuneReport};
use super::persist::{self, LastTune};
use super::plan::{Candidate, PlanOptions, plan};
use super::runs::{Bench, Pair, Span, limits, say};
use super::target::Target;
use super::trial::{Budget, Flow, Tuner, untried};
use crate::bench::progress::{Cancel, Progress};
use crate::doctor::{Finding, Inputs};
use crate::host::HostInfo;
use crate::path::Peer;
use crate::path::throughput::{Direction, Measure, Series};
use crate::paths::Paths;

/// What `hlctl tune` was asked.
#[derive(Clone, Debug)]
pub(crate) struct Options {
    pub(crate) interface: String,
    pub(crate) mac: Option<String>,
    pub(crate) peer: Peer,
    /// Benchmark runs per direction for the baseline, and the most a
    /// candidate gets (fewer when its first runs already decide it).
    pub(crate) runs: u32,
    pub(crate) min_gain_percent: f64,
    /// How long kept changes wait for confirmation.
    pub(crate) confirm_timeout: Duration,
    /// How long a change being tried may live without the tuner renewing its
    /// deadline (at least one benchmark run with margin).
    pub(crate) step_timeout: Duration,
    pub(crate) dry_run: bool,
    pub(crate) persist: bool,
    pub(crate) mtu: bool,
    /// `--try` candidates.
    pub(crate) extra: Vec<Candidate>,
    /// The directions measured and decided on (`--direction`): both, or
    /// the one the box's work goes (a NAS that serves reads: upload).
    pub(crate) directions: &'static [Direction],
}

/// Everything the loop works with.
pub(crate) struct Context<'a> {
    pub(crate) paths: &'a Paths,
    pub(crate) target: &'a mut dyn Target,
    pub(crate) measure: &'a dyn Measure,
    /// The doctor's inputs, gathered just before.
    pub(crate) inputs: &'a Inputs,
    pub(crate) findings: Vec<Finding>,
    pub(crate) progress: &'a dyn Progress,
    pub(crate) cancel: &'a Cancel,
    /// Called when the kept changes await confirmation: true confirms them.
    pub(crate) confirm: &'a mut dyn FnMut(&TuneReport) -> bool,
}

/// The summaries of a pair's measured directions.
fn both(p: &Pair) -> Both {
    let summary = |s: &Series| (!s.samples.is_empty()).then(|| s.into());
    Both {
        upload: summary(&p.0),
        download: summary(&p.1),
    }
}

/// The report before anything was measured.
fn new_report(
    opts: &Options,
    m: &dyn Measure,
    inputs: &Inputs,
    findings: Vec<Finding>,
    plan: Vec<Candidate>,
    plan_notes: Vec<String>,
) -> TuneReport {
    TuneReport {
        host: HostInfo::current(),
        timestamp: crate::host::now_unix(),
        interface: opts.interface.clone(),
        peer: opts.peer.label(),
        method: m.describe(),
        runs: opts.runs,
        min_gain_percent: opts.min_gain_percent,
        rtt_ms: inputs
            .peer
            .as_ref()
            .and_then(|p| p.rtt.as_ref().ok())
            .map(|r| r.ms),
        findings,
        plan,
        plan_notes,
        baseline: None,
        steps: Vec::new(),
        after: None,
        limits: Vec::new(),
        kept: Change::default(),
        persisted: None,
        outcome: Outcome::DryRun,
        notes: Vec::new(),
    }
}

/// The baseline's runs each way for a budget of `runs`: one fewer than the
/// budget from three runs up, the whole budget below three and for a dry
/// run (which is there to show the baseline and its noise). A baseline
/// shorter than the budget is a short reference to the decisions: its best
/// run counts as at least its median raised by its spread
/// (`decide::ceiling`), so it never makes a keep easier
/// (`false_keep.rs` proves the rate of false keeps with it).
pub(crate) fn baseline_runs(runs: u32, dry_run: bool) -> u32 {
    let runs = runs.max(1);
    if dry_run || runs < 3 { runs } else { runs - 1 }
}

/// The baseline: [`baseline_runs`] each way.
fn measure_baseline(opts: &Options, bench: &Bench) -> Result<Pair, TuneError> {
    let runs = baseline_runs(opts.runs, opts.dry_run);
    say(
        bench.progress,
        0.0,
        format!("baseline: {runs} runs each way"),
    );
    let mut baseline = Pair::default();
    let span = Span {
        label: "baseline",
        runs: 0..runs,
        of: runs,
        frac: (0.0, 0.2),
    };
    bench.take(&mut baseline, &span, None)?;
    Ok(baseline)
}

/// `--dry-run`: the baseline, the limits and the plan, every step skipped.
fn dry_run(
    mut report: TuneReport,
    target: &mut dyn Target,
    inputs: &Inputs,
    baseline: &Pair,
    cands: &[Candidate],
) -> TuneReport {
    report.limits = limits(target, inputs, baseline);
    report.steps = cands
        .iter()
        .map(|c| untried(c, StepStatus::Skipped, "dry run"))
        .collect();
    report
}

/// Try every candidate in turn; the error that stopped the loop, if any.
fn try_all(tuner: &mut Tuner, cands: &[Candidate], report: &mut TuneReport) -> Option<TuneError> {
    let n = cands.len().max(1) as f64;
    for (idx, cand) in cands.iter().enumerate() {
        if tuner.bench.cancel.is_cancelled() {
            return Some(TuneError::Cancelled);
        }
        let frac = (
            0.2 + 0.75 * idx as f64 / n,
            0.2 + 0.75 * (idx + 1) as f64 / n,
        );
        let (step, flow) = tuner.try_candidate(cand, frac);
        report.steps.extend(step);
        if let Flow::Stop(e) = flow {
            return Some(e);
        }
    }
    None
}

/// Candidates never reached.
fn skip_unreached(cands: &[Candidate], report: &mut TuneReport) {
    for c in cands.iter().skip(report.steps.len()) {
        report
            .steps
            .push(untried(c, StepStatus::Skipped, "not reached"));
    }
}

/// The tune's journal, before its first change: one that cannot be
/// written (a full or read-only disk) stops the tune, said as such.
fn begin_journal(paths: &Paths, opts: &Options) -> Result<Checkpoint, TuneError> {
    Checkpoint::begin(paths, &opts.interface, opts.mac.clone(), opts.step_timeout).map_err(|e| {
        match e {
            TuneError::Io { path, source } => TuneError::NotJournalled { path, source },
            e => e,
        }
    })
}

/// Undo everything the journal holds and remove it.
fn roll_back(target: &mut dyn Target, cp: Checkpoint) -> Vec<String> {
    let original = cp.journal.original.clone();
    let mut errors = Vec::new();
    if !original.is_empty() {
        match cp.locked(|| target.apply(&original)) {
            Ok(Ok(())) => {}
            Ok(Err(e)) => errors.push(e),
            Err(e) => errors.push(e.to_string()),
        }
    }
    if errors.is_empty()
        && let Err(e) = cp.finish()
    {
        errors.push(format!(
            "settings restored, but the tune journal could not be removed: {e}"
        ));
    }
    errors
}

/// Everything restored: after a failure, a cancel, or no confirmation.
fn rolled_back(
    mut report: TuneReport,
    target: &mut dyn Target,
    cp: Checkpoint,
    outcome: Outcome,
    why: String,
) -> TuneReport {
    let errors = roll_back(target, cp);
    report.outcome = outcome;
    report
        .notes
        .push(format!("{why}: every change of this tune was restored"));
    for err in errors {
        report.notes.push(format!("restore failed: {err}"));
    }
    report.kept = Change::default();
    report
}

/// Nothing kept: close the journal; failing to is reported, not dropped.
fn nothing_kept(mut report: TuneReport, cp: Checkpoint) -> TuneReport {
    if let Err(e) = cp.finish() {
        tracing::warn!("tune journal not removed: {e}");
        report
            .notes
            .push(format!("the tune journal was not removed: {e}"));
    }
    report.outcome = Outcome::Done;
    report
        .notes
        .push("nothing kept: no candidate improved throughput beyond the noise".into());
    report
}

/// Confirmed: persist, record for `hlctl rollback`, close the journal.
fn persist_kept(
    opts: &Options,
    paths: &Paths,
    cp: Checkpoint,
    mut report: TuneReport,
) -> Result<TuneReport, TuneError> {
    let original = cp.journal.original.restricted_to(&report.kept);
    let mut last = LastTune {
        tune_id: cp.journal.tune_id.clone(),
        ts: crate::host::now_unix(),
        interface: opts.interface.clone(),
        mac: opts.mac.clone(),
        original,
        kept: report.kept.clone(),
        sysctl_file_before: None,
        nic_state_before: None,
    };
    if opts.persist {
        let (p, files) =
            persist::persist(paths, &opts.interface, opts.mac.as_deref(), &report.kept)?;
        last.sysctl_file_before = files.sysctl;
        last.nic_state_before = files.nic;
        report.persisted = Some(p);
    } else {
        report
            .notes
            .push("not persisted (--no-persist): the kept changes last until reboot".into());
    }
    persist::save_last(paths, &last)?;
    cp.finish()?;
    Ok(report)
}

/// The plan, read from the inputs with the cores as the baseline's runs
/// found them (the doctor's cores findings join the report's), and the
/// report with its baseline.
fn measured_plan(
    opts: &Options,
    measure: &dyn Measure,
    inputs: &Inputs,
    mut findings: Vec<Finding>,
    baseline: &Pair,
) -> (Inputs, TuneReport, Vec<Candidate>) {
    let measured = super::cores::with_baseline(inputs, baseline, measure.describe());
    findings.extend(super::cores::findings(&measured));
    let plan_opts = PlanOptions {
        interface: opts.interface.clone(),
        mtu: opts.mtu,
        extra: opts.extra.clone(),
    };
    let (cands, notes) = plan(&measured, &plan_opts);
    let mut report = new_report(opts, measure, &measured, findings, cands.clone(), notes);
    report.baseline = Some(both(baseline));
    (measured, report, cands)
}

pub(crate) fn run(opts: &Options, cx: Context) -> Result<TuneReport, TuneError> {
    let Context {
        paths,
        target,
        measure,
        inputs,
        findings,
        progress,
        cancel,
        confirm,
    } = cx;
    let bench = Bench {
        measure,
        progress,
        cancel,
        directions: opts.directions,
    };
    let baseline = measure_baseline(opts, &bench)?;
    let (measured, mut report, cands) = measured_plan(opts, measure, inputs, findings, &baseline);
    let inputs = &measured;
    if opts.dry_run {
        return Ok(dry_run(report, target, inputs, &baseline, &cands));
    }

    let cp = begin_journal(paths, opts)?;
    let mut tuner = Tuner {
        budget: Budget {
            runs: opts.runs,
            min_gain_percent: opts.min_gain_percent,
        },
        target,
        bench,
        cp,
        reference: baseline.clone(),
        baseline,
        kept: Change::default(),
    };
    let failure = try_all(&mut tuner, &cands, &mut report);
    let Tuner {
        target,
        mut cp,
        baseline,
        reference,
        kept,
        ..
    } = tuner;
    // With the runs a keep may have added to it.
    report.baseline = Some(both(&baseline));
    report.kept = kept;
    skip_unreached(&cands, &mut report);
    report.after = Some(both(&reference));
    report.limits = limits(target, inputs, &reference);

    if let Some(e) = failure {
        let outcome = if matches!(e, TuneError::Cancelled) {
            Outcome::Cancelled
        } else {
            Outcome::RolledBack
        };
        return Ok(rolled_back(report, target, cp, outcome, e.to_string()));
    }
    if report.kept.is_empty() {
        return Ok(nothing_kept(report, cp));
    }
    cp.await_confirm(opts.confirm_timeout)?;
    report.outcome = Outcome::Done;
    if !confirm(&report) {
        let why = "not confirmed before the deadline".to_string();
        return Ok(rolled_back(report, target, cp, Outcome::RolledBack, why));
    }
    persist_kept(opts, paths, cp, report)
}
