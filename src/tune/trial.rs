//! One candidate: prepare it, journal and apply it, check the link, the
//! connectivity and (MTU) the path, measure it run by run until the evidence
//! decides, then keep it or revert it.

use super::TuneError;
use super::change::{Candidate, Change, show};
use super::checkpoint::Checkpoint;
use super::decide::{Decision, DirDelta, Evidence, keep_needs_full_reference, verdict_so_far};
use super::link;
use super::outcome::{SettingRow, Step, StepStatus};
use super::runs::{Bench, Pair, Span, say, taken};
use super::target::Target;
use crate::nic::model::LinkModes;

/// The table rows of a change: each setting before → tried.
pub(crate) fn rows(change: &Change, undo: &Change) -> Vec<SettingRow> {
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

/// A step for `cand` that nothing has happened to yet.
pub(crate) fn untried(cand: &Candidate, status: StepStatus, reason: &str) -> Step {
    Step {
        candidate: cand.id.clone(),
        title: cand.title.clone(),
        settings: rows(&cand.change, &Change::default()),
        status,
        reason: reason.into(),
        deltas: Vec::new(),
        runs: 0,
    }
}

/// Whether the loop goes on after a candidate.
pub(crate) enum Flow {
    Next,
    /// Stop and roll the whole tune back.
    Stop(TuneError),
}

/// What one candidate left: its step (none when it failed before it could
/// be reported) and whether to go on.
pub(crate) type Tried = (Option<Step>, Flow);

/// A candidate as applied: what undoes it.
struct Applied {
    change: Change,
    undo: Change,
    /// A link renegotiation: the carrier drops and comes back.
    renegotiates: bool,
    link_before: Option<LinkModes>,
}

/// The trial's runs and what they decided.
struct Verdict {
    runs: Pair,
    decision: Decision,
    deltas: Vec<DirDelta>,
}

/// How much evidence a candidate may get, and what gain counts.
pub(crate) struct Budget {
    /// Runs per direction at most.
    pub(crate) runs: u32,
    pub(crate) min_gain_percent: f64,
}

/// The loop's state across candidates.
pub(crate) struct Tuner<'a> {
    pub(crate) budget: Budget,
    pub(crate) target: &'a mut dyn Target,
    pub(crate) bench: Bench<'a>,
    pub(crate) cp: Checkpoint,
    pub(crate) baseline: Pair,
    /// The current state's runs: the baseline, then the last kept
    /// candidate's. A reverted candidate leaves it as it is, so it serves
    /// the next candidate without being measured again.
    pub(crate) reference: Pair,
    /// What was kept so far.
    pub(crate) kept: Change,
}

impl Tuner<'_> {
    /// Try `cand`; `frac` is its share of the progress bar.
    pub(crate) fn try_candidate(&mut self, cand: &Candidate, frac: (f64, f64)) -> Tried {
        say(
            self.bench.progress,
            frac.0,
            format!("trying {}", cand.title),
        );
        let mut step = untried(cand, StepStatus::Failed, "");
        let change = match self.target.prepare(&cand.change) {
            Ok(c) => c,
            Err(e) => {
                step.reason = format!("not applicable: {e}");
                return (Some(step), Flow::Next);
            }
        };
        let (applied, result) = match self.apply(cand, change) {
            Ok(a) => a,
            Err(e) => return (None, Flow::Stop(e)),
        };
        step.settings = rows(&applied.change, &applied.undo);
        if let Err(e) = result {
            step.reason = format!("the kernel refused it: {e}");
            return self.undo(step, &applied);
        }
        let link_after = match self.wait_for_link(&applied) {
            Ok(l) => l,
            Err(why) => return self.refuse(step, &applied, why),
        };
        if let Err(why) = self.check_path(cand) {
            return self.refuse(step, &applied, why);
        }
        let early = !applied.renegotiates;
        let verdict = match self.measure(cand, frac, early, Pair::default()) {
            Ok(v) => v,
            Err(e) => return self.measuring_failed(step, &applied, e),
        };
        let decision = match (&applied.link_before, &link_after) {
            (Some(b), Some(a)) => link::decide_link(b, a, verdict.decision),
            _ => verdict.decision,
        };
        step.deltas = verdict.deltas;
        step.runs = taken(&verdict.runs);
        match decision {
            Decision::Keep(_)
                if !applied.renegotiates
                    && keep_needs_full_reference(&self.evidence(&verdict.runs)) =>
            {
                self.keep_after_full_reference(step, cand, &applied, verdict.runs, frac)
            }
            Decision::Keep(why) => self.keep(step, &applied, verdict.runs, why),
            Decision::Revert(why) => self.refuse(step, &applied, why),
        }
    }

    /// A keep against a short reference (see
    /// [`keep_needs_full_reference`]): revert the candidate, give the
    /// current settings their missing runs, decide again, and apply the
    /// candidate again only if it is still kept.
    fn keep_after_full_reference(
        &mut self,
        mut step: Step,
        cand: &Candidate,
        a: &Applied,
        trial: Pair,
        frac: (f64, f64),
    ) -> Tried {
        if let Err(e) = self.revert(a) {
            return (Some(step), Flow::Stop(e));
        }
        step.status = StepStatus::Reverted;
        if let Err(e) = self.complete_reference(frac) {
            step.reason = format!("measuring the current settings again failed: {e}");
            return (Some(step), after_failed_measurement(e, Flow::Next));
        }
        // Reverted without applying it again when its runs so far already say so.
        if let Some((Decision::Revert(why), deltas)) = verdict_so_far(&self.evidence(&trial), true)
        {
            step.deltas = deltas;
            step.reason = why;
            return (Some(step), Flow::Next);
        }
        let (applied, result) = match self.apply(cand, a.change.clone()) {
            Ok(x) => x,
            Err(e) => return (Some(step), Flow::Stop(e)),
        };
        if let Err(e) = result {
            step.reason = format!("the kernel refused it when applied again: {e}");
            return self.undo(step, &applied);
        }
        if let Err(why) = self.check_path(cand) {
            return self.refuse(step, &applied, why);
        }
        let verdict = match self.measure(cand, frac, true, trial) {
            Ok(v) => v,
            Err(e) => return self.measuring_failed(step, &applied, e),
        };
        step.deltas = verdict.deltas;
        step.runs = taken(&verdict.runs);
        match verdict.decision {
            Decision::Keep(why) => {
                let why = format!(
                    "{why}; against the current settings measured again to the full {} runs",
                    self.budget.runs
                );
                self.keep(step, &applied, verdict.runs, why)
            }
            Decision::Revert(why) => self.refuse(step, &applied, why),
        }
    }

    /// Take the current settings' missing runs, up to the budget; the
    /// baseline grows with them while nothing is kept (it is the same state).
    fn complete_reference(&mut self, frac: (f64, f64)) -> Result<(), TuneError> {
        let runs = self.budget.runs.max(1);
        let have = taken(&self.reference);
        let span = Span {
            label: "current settings, measured again",
            runs: have..runs,
            of: runs,
            frac,
        };
        let mut reference = self.reference.clone();
        self.bench.take(&mut reference, &span, None)?;
        if self.kept.is_empty() {
            self.baseline = reference.clone();
        }
        self.reference = reference;
        Ok(())
    }

    /// Journal the undo, then apply; the outer error is the journal's, the
    /// inner the kernel's.
    fn apply(
        &mut self,
        cand: &Candidate,
        change: Change,
    ) -> Result<(Applied, Result<(), String>), TuneError> {
        let undo = self.target.current(&change)?;
        let renegotiates = change.nic.link.is_some();
        let link_before = if renegotiates {
            self.target.link().ok().flatten()
        } else {
            None
        };
        let target = &mut *self.target;
        let result = self.cp.change(&cand.id, &undo, || target.apply(&change))?;
        let applied = Applied {
            change,
            undo,
            renegotiates,
            link_before,
        };
        Ok((applied, result))
    }

    /// After a renegotiation, the link as it came back.
    fn wait_for_link(&mut self, a: &Applied) -> Result<Option<LinkModes>, String> {
        if !a.renegotiates {
            return Ok(None);
        }
        link::wait_for_carrier(self.target, a.link_before.as_ref(), link::CARRIER_WAIT)
            .map(Some)
            .map_err(|e| format!("{e}: the previous link settings were restored"))
    }

    /// The peer still answers and, for an MTU, the path carries it.
    fn check_path(&mut self, cand: &Candidate) -> Result<(), String> {
        self.target
            .connectivity()
            .map_err(|e| format!("connectivity lost: {e}"))?;
        let Some(size) = cand.probe_mtu else {
            return Ok(());
        };
        match self.target.df_probe(size) {
            Ok(true) => Ok(()),
            Err(e) => Err(format!(
                "the don't-fragment probe of {size} bytes failed: {e}"
            )),
            Ok(false) => Err(format!(
                "a don't-fragment probe of {size} bytes does not reach the peer: the path does not carry MTU {size}"
            )),
        }
    }

    /// Measure the candidate one run (both directions) at a time; with
    /// `early`, stop as soon as the runs so far decide it.
    fn measure(
        &mut self,
        cand: &Candidate,
        frac: (f64, f64),
        early: bool,
        mut trial: Pair,
    ) -> Result<Verdict, TuneError> {
        let runs = self.budget.runs.max(1);
        loop {
            if let Some((decision, deltas)) = verdict_so_far(&self.evidence(&trial), early) {
                return Ok(Verdict {
                    runs: trial,
                    decision,
                    deltas,
                });
            }
            let taken = taken(&trial);
            let span = Span {
                label: &cand.title,
                runs: taken..taken + 1,
                of: runs,
                frac,
            };
            self.bench.take(&mut trial, &span, Some(&mut self.cp))?;
        }
    }

    fn evidence<'e>(&'e self, trial: &'e Pair) -> Evidence<'e> {
        Evidence {
            reference: [&self.reference.0, &self.reference.1],
            trial: [&trial.0, &trial.1],
            baseline: [&self.baseline.0, &self.baseline.1],
            min_gain_percent: self.budget.min_gain_percent,
            runs: self.budget.runs.max(1),
        }
    }

    /// Kept: it becomes the reference.
    fn keep(&mut self, mut step: Step, a: &Applied, runs: Pair, why: String) -> Tried {
        step.status = StepStatus::Kept;
        step.reason = why;
        self.kept.merge(&a.change);
        self.reference = runs;
        match self.cp.settle(|| ()) {
            Ok(()) => (Some(step), Flow::Next),
            Err(e) => (Some(step), Flow::Stop(e)),
        }
    }

    /// Reverted, for `why`.
    fn refuse(&mut self, mut step: Step, a: &Applied, why: String) -> Tried {
        step.status = StepStatus::Reverted;
        step.reason = why;
        self.undo(step, a)
    }

    /// The benchmark failed: reverted; a cancel or a passed deadline stops the tune.
    fn measuring_failed(&mut self, step: Step, a: &Applied, e: TuneError) -> Tried {
        let (step, flow) = self.refuse(step, a, format!("measuring failed: {e}"));
        (step, after_failed_measurement(e, flow))
    }

    /// Put back what the candidate overwrote; failing that, stop.
    fn undo(&mut self, step: Step, a: &Applied) -> Tried {
        match self.revert(a) {
            Ok(()) => (Some(step), Flow::Next),
            Err(e) => (Some(step), Flow::Stop(e)),
        }
    }

    fn revert(&mut self, a: &Applied) -> Result<(), TuneError> {
        let link_now = if a.renegotiates {
            self.target.link().ok().flatten()
        } else {
            None
        };
        let target = &mut *self.target;
        self.cp
            .settle(|| target.apply(&a.undo))?
            .map_err(TuneError::Restore)?;
        if a.renegotiates {
            // The carrier drops again while the old settings take hold.
            let _ = link::wait_for_carrier(self.target, link_now.as_ref(), link::CARRIER_WAIT);
            let _ = self.target.connectivity();
        }
        Ok(())
    }
}

/// What follows a failed measurement, once the candidate is off: a cancel or
/// a passed deadline stops the tune; otherwise `flow` (the next candidate,
/// or the stop a failed revert asked for).
fn after_failed_measurement(e: TuneError, flow: Flow) -> Flow {
    match flow {
        Flow::Next if matches!(e, TuneError::Cancelled | TuneError::DeadlinePassed(_)) => {
            Flow::Stop(e)
        }
        flow => flow,
    }
}
