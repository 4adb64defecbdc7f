//! The tuning loop: baseline → plan → for each candidate: journal, apply,
//! connectivity check, (MTU: don't-fragment probe), re-benchmark, keep or
//! revert → confirm → persist. Cancel or any failure rolls everything back.

use std::time::Duration;

use super::TuneError;
use super::change::{Change, show};
use super::checkpoint::Checkpoint;
use super::decide::{Decision, decide};
use super::link;
use super::persist::{self, LastTune};
use super::plan::{Candidate, PlanOptions, plan};
use super::report::{Both, Outcome, SettingRow, Step, StepStatus, TuneReport};
use super::target::Target;
use crate::bench::progress::{Cancel, Progress, ProgressEvent};
use crate::doctor::{Finding, Inputs};
use crate::host::HostInfo;
use crate::path::Peer;
use crate::path::limit::{self, LimitNote};
use crate::path::measure::{self, Direction, Measure, MeasureError, Series};
use crate::paths::Paths;

/// What `hlctl tune` was asked.
#[derive(Clone, Debug)]
pub struct Options {
    pub interface: String,
    pub mac: Option<String>,
    pub peer: Peer,
    /// Benchmark runs per direction, for the baseline and each candidate.
    pub runs: u32,
    pub min_gain_percent: f64,
    /// How long kept changes wait for confirmation.
    pub confirm_timeout: Duration,
    /// How long a change being tried may live without the tuner renewing its
    /// deadline (at least one benchmark run with margin).
    pub step_timeout: Duration,
    pub dry_run: bool,
    pub persist: bool,
    pub mtu: bool,
    /// `--try` candidates.
    pub extra: Vec<Candidate>,
}

/// Everything the loop works with.
pub struct Context<'a> {
    pub paths: &'a Paths,
    pub target: &'a mut dyn Target,
    pub measure: &'a dyn Measure,
    /// The doctor's inputs, gathered just before.
    pub inputs: &'a Inputs,
    pub findings: Vec<Finding>,
    pub progress: &'a dyn Progress,
    pub cancel: &'a Cancel,
    /// Called when the kept changes await confirmation: true confirms them.
    pub confirm: &'a mut dyn FnMut(&TuneReport) -> bool,
}

fn say(p: &dyn Progress, fraction: f64, msg: String) {
    p.report(ProgressEvent {
        fraction,
        message: msg,
    });
}

fn rows(change: &Change, undo: &Change) -> Vec<SettingRow> {
    let before: Vec<(String, serde_json::Value)> = undo.settings();
    change
        .settings()
        .into_iter()
        .map(|(k, v)| SettingRow {
            before: before
                .iter()
                .find(|(b, _)| *b == k)
                .map_or("-".into(), |(_, x)| show(x)),
            tried: show(&v),
            setting: k,
        })
        .collect()
}

/// Take `runs` of both directions, renewing the checkpoint's deadline between runs.
fn bench(
    m: &dyn Measure,
    runs: u32,
    cp: Option<&mut Checkpoint>,
    progress: &dyn Progress,
    frac: (f64, f64),
    label: &str,
    cancel: &Cancel,
) -> Result<(Series, Series), TuneError> {
    let mut renew_err = None;
    let mut cp = cp;
    let total = (runs.max(1) * 2) as f64;
    let mut k = 0.0;
    let r = measure::series(m, runs, cancel, |d, i| {
        if let Some(c) = cp.as_deref_mut()
            && let Err(e) = c.renew()
        {
            renew_err = Some(e);
            cancel.cancel();
        }
        say(
            progress,
            frac.0 + (frac.1 - frac.0) * k / total,
            format!("{label}: {d} run {}/{runs}", i + 1),
        );
        k += 1.0;
    });
    if let Some(e) = renew_err {
        return Err(e);
    }
    r.map_err(|e| match e {
        MeasureError::Cancelled => TuneError::Cancelled,
        MeasureError::Failed(m) => TuneError::Measure(m),
    })
}

fn limits(target: &mut dyn Target, inp: &Inputs, after: &(Series, Series)) -> Vec<LimitNote> {
    let rtt = inp
        .peer
        .as_ref()
        .and_then(|p| p.rtt.as_ref().ok())
        .map(|r| r.ms);
    // The link as it is now (a kept renegotiation changed its speed; a NIC
    // reset by a reverted candidate may still be renegotiating): the speed
    // the inputs read only when the driver reports no link settings.
    let link = match target.link() {
        Ok(Some(_)) => link::wait_for_carrier(target, None, link::CARRIER_WAIT)
            .ok()
            .and_then(|l| {
                let mut i = inp
                    .iface(target.interface())
                    .map(|s| s.now().clone())
                    .unwrap_or_default();
                i.link = Some(l);
                crate::nic::speed::link_speed(&i)
            }),
        _ => crate::doctor::tcp::peer_link_speed(inp),
    };
    Direction::BOTH
        .iter()
        .map(|d| {
            let s = match d {
                Direction::Upload => &after.0,
                Direction::Download => &after.1,
            };
            let (key, _) = limit::keys(*d);
            let buf = target
                .sysctl(key)
                .and_then(|v| v.split_whitespace().nth(2).and_then(|x| x.parse().ok()));
            limit::assess(
                *d,
                &limit::Input {
                    bps: s.median(),
                    rtt_idle_ms: rtt,
                    rtt_loaded_ms: s.rtt_loaded_ms(),
                    link: link.clone(),
                    local_buffer_max: buf,
                    cpu_max_percent: s.max_cpu_percent(),
                },
            )
        })
        .collect()
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

pub fn run(opts: &Options, cx: Context) -> Result<TuneReport, TuneError> {
    let Context {
        paths,
        target,
        measure: m,
        inputs,
        findings,
        progress,
        cancel,
        confirm,
    } = cx;
    let (cands, plan_notes) = plan(
        inputs,
        &PlanOptions {
            interface: opts.interface.clone(),
            mtu: opts.mtu,
            extra: opts.extra.clone(),
        },
    );
    let mut report = TuneReport {
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
        plan: cands.clone(),
        plan_notes,
        baseline: None,
        steps: Vec::new(),
        after: None,
        limits: Vec::new(),
        kept: Change::default(),
        persisted: None,
        outcome: Outcome::DryRun,
        notes: Vec::new(),
    };

    say(
        progress,
        0.0,
        format!("baseline: {} runs each way", opts.runs),
    );
    let baseline = bench(m, opts.runs, None, progress, (0.0, 0.2), "baseline", cancel)?;
    report.baseline = Some(Both {
        upload: (&baseline.0).into(),
        download: (&baseline.1).into(),
    });
    if opts.dry_run {
        report.limits = limits(target, inputs, &baseline);
        report.steps = cands
            .iter()
            .map(|c| Step {
                candidate: c.id.clone(),
                title: c.title.clone(),
                settings: rows(&c.change, &Change::default()),
                status: StepStatus::Skipped,
                reason: "dry run".into(),
                deltas: Vec::new(),
            })
            .collect();
        return Ok(report);
    }

    let mut cp = Checkpoint::begin(paths, &opts.interface, opts.mac.clone(), opts.step_timeout)?;
    let mut reference = baseline.clone();
    let n = cands.len().max(1) as f64;
    let mut failure: Option<TuneError> = None;
    for (idx, cand) in cands.iter().enumerate() {
        let f0 = 0.2 + 0.75 * idx as f64 / n;
        let f1 = 0.2 + 0.75 * (idx + 1) as f64 / n;
        if cancel.is_cancelled() {
            failure = Some(TuneError::Cancelled);
            break;
        }
        say(progress, f0, format!("trying {}", cand.title));
        let mut step = Step {
            candidate: cand.id.clone(),
            title: cand.title.clone(),
            settings: rows(&cand.change, &Change::default()),
            status: StepStatus::Failed,
            reason: String::new(),
            deltas: Vec::new(),
        };
        let change = match target.prepare(&cand.change) {
            Ok(c) => c,
            Err(e) => {
                step.reason = format!("not applicable: {e}");
                report.steps.push(step);
                continue;
            }
        };
        let undo = match target.current(&change) {
            Ok(u) => u,
            Err(e) => {
                failure = Some(e);
                break;
            }
        };
        step.settings = rows(&change, &undo);
        let renegotiates = change.nic.link.is_some();
        let link_before = if renegotiates {
            target.link().ok().flatten()
        } else {
            None
        };
        let applied = match cp.change(&cand.id, &undo, || target.apply(&change)) {
            Ok(r) => r,
            Err(e) => {
                failure = Some(e);
                break;
            }
        };
        let revert = |t: &mut dyn Target, cp: &mut Checkpoint| -> Result<(), TuneError> {
            let link_now = if renegotiates {
                t.link().ok().flatten()
            } else {
                None
            };
            cp.settle(|| t.apply(&undo))?.map_err(TuneError::Restore)?;
            if renegotiates {
                // The carrier drops again while the old settings take hold.
                let _ = link::wait_for_carrier(t, link_now.as_ref(), link::CARRIER_WAIT);
                let _ = t.connectivity();
            }
            Ok(())
        };
        if let Err(e) = applied {
            step.reason = format!("the kernel refused it: {e}");
            if let Err(e) = revert(target, &mut cp) {
                failure = Some(e);
                report.steps.push(step);
                break;
            }
            report.steps.push(step);
            continue;
        }
        let link_after = if renegotiates {
            match link::wait_for_carrier(target, link_before.as_ref(), link::CARRIER_WAIT) {
                Ok(l) => Some(l),
                Err(e) => {
                    step.status = StepStatus::Reverted;
                    step.reason = format!("{e}: the previous link settings were restored");
                    report.steps.push(step);
                    if let Err(e) = revert(target, &mut cp) {
                        failure = Some(e);
                        break;
                    }
                    continue;
                }
            }
        } else {
            None
        };
        if let Err(e) = target.connectivity() {
            step.status = StepStatus::Reverted;
            step.reason = format!("connectivity lost: {e}");
            report.steps.push(step);
            if let Err(e) = revert(target, &mut cp) {
                failure = Some(e);
                break;
            }
            continue;
        }
        if let Some(size) = cand.probe_mtu {
            match target.df_probe(size) {
                Ok(true) => {}
                r => {
                    step.status = StepStatus::Reverted;
                    step.reason = match r {
                        Err(e) => format!("the don't-fragment probe of {size} bytes failed: {e}"),
                        _ => format!(
                            "a don't-fragment probe of {size} bytes does not reach the peer: the path does not carry MTU {size}"
                        ),
                    };
                    report.steps.push(step);
                    if let Err(e) = revert(target, &mut cp) {
                        failure = Some(e);
                        break;
                    }
                    continue;
                }
            }
        }
        let trial = match bench(
            m,
            opts.runs,
            Some(&mut cp),
            progress,
            (f0, f1),
            &cand.title,
            cancel,
        ) {
            Ok(t) => t,
            Err(e) => {
                step.status = StepStatus::Reverted;
                step.reason = format!("measuring failed: {e}");
                report.steps.push(step);
                let stop = matches!(e, TuneError::Cancelled | TuneError::DeadlinePassed(_));
                if let Err(e2) = revert(target, &mut cp) {
                    failure = Some(e2);
                    break;
                }
                if stop {
                    failure = Some(e);
                    break;
                }
                continue;
            }
        };
        let (decision, deltas) = decide(
            [&reference.0, &reference.1],
            [&trial.0, &trial.1],
            [&baseline.0, &baseline.1],
            opts.min_gain_percent,
        );
        let decision = match (&link_before, &link_after) {
            (Some(b), Some(a)) => link::decide_link(b, a, decision),
            _ => decision,
        };
        step.deltas = deltas;
        match decision {
            Decision::Keep(why) => {
                step.status = StepStatus::Kept;
                step.reason = why;
                report.kept.merge(&change);
                reference = trial;
                if let Err(e) = cp.settle(|| ()) {
                    failure = Some(e);
                    report.steps.push(step);
                    break;
                }
            }
            Decision::Revert(why) => {
                step.status = StepStatus::Reverted;
                step.reason = why;
                if let Err(e) = revert(target, &mut cp) {
                    failure = Some(e);
                    report.steps.push(step);
                    break;
                }
            }
        }
        report.steps.push(step);
    }
    // Candidates never reached.
    for c in cands.iter().skip(report.steps.len()) {
        report.steps.push(Step {
            candidate: c.id.clone(),
            title: c.title.clone(),
            settings: rows(&c.change, &Change::default()),
            status: StepStatus::Skipped,
            reason: "not reached".into(),
            deltas: Vec::new(),
        });
    }
    report.after = Some(Both {
        upload: (&reference.0).into(),
        download: (&reference.1).into(),
    });
    report.limits = limits(target, inputs, &reference);

    if let Some(e) = failure {
        let errors = roll_back(target, cp);
        report.outcome = if matches!(e, TuneError::Cancelled) {
            Outcome::Cancelled
        } else {
            Outcome::RolledBack
        };
        report
            .notes
            .push(format!("{e}: every change of this tune was restored"));
        for err in errors {
            report.notes.push(format!("restore failed: {err}"));
        }
        report.kept = Change::default();
        return Ok(report);
    }

    if report.kept.is_empty() {
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
        return Ok(report);
    }

    cp.await_confirm(opts.confirm_timeout)?;
    report.outcome = Outcome::Done;
    if !confirm(&report) {
        let errors = roll_back(target, cp);
        report.outcome = Outcome::RolledBack;
        report.notes.push(
            "not confirmed before the deadline: every change of this tune was restored".into(),
        );
        for err in errors {
            report.notes.push(format!("restore failed: {err}"));
        }
        report.kept = Change::default();
        return Ok(report);
    }
    // Confirmed: persist, record for `hlctl rollback`, close the journal.
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
