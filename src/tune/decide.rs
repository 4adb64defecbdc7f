//! Keep or revert: a candidate stays only if, in some direction, every
//! trial run lies above every reference run by more than the threshold —
//! the larger of `--min-gain` and the run-to-run noise — and no direction
//! got worse: its median down by more than `--min-gain` and that
//! direction's noise, with every trial run below the reference's median.
//!
//! [`decide_early`] applies the same rule while the trial runs come in: once
//! one trial run in each direction is not above every reference run by more
//! than the threshold, no later run can make a keep, so the candidate is
//! reverted at once (the verdict the full budget would give). A keep before
//! the full budget needs a stricter gate and no direction that shows a loss
//! (a run at or above the reference's median, or every run within half the
//! threshold below it): either more than half the runs taken, every one above
//! every reference run by more than twice the threshold; or, after any
//! number of runs, every one at least [`OVERWHELMING`] times every reference
//! run (offloads back on over a veth pair are a 6× gain: no run-to-run noise
//! measured here comes near a factor of three).

use serde::{Deserialize, Serialize};

use crate::path::throughput::{Direction, Series, format_bps};

/// A gain this many times every reference run is decided after one run
/// (see the module doc; `false_keep.rs` proves the rate of false keeps, for
/// noise that spreads around one rate). Noise with two modes defeats it: a
/// peer whose receive buffer is starved to 64 KiB has whole runs stuck at a
/// fifth of the rate (iperf3's too: 2 of 12 runs under qemu, `vm_tune.rs`),
/// and a 2-run baseline that lands in the slow mode twice makes a no-op read
/// as 5× — as it would against any reference all of whose runs were slow.
pub(crate) const OVERWHELMING: f64 = 3.0;

/// How far below the reference's median, as a share of the gain threshold,
/// every run of a direction may lie and still show no sign of a loss for an
/// early keep. 0.75 would keep a gain beside a real 20% loss 15% more often
/// than the rule before early decisions (`false_keep.rs`); 0.5 stays within 8%.
pub(crate) const LOSS_TOLERANCE: f64 = 0.5;

/// One direction before and after a candidate.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct DirDelta {
    pub(crate) direction: Direction,
    pub(crate) before_bps: f64,
    pub(crate) after_bps: f64,
    pub(crate) change_percent: f64,
    /// The gain it needed to count: max(min-gain, baseline spread).
    pub(crate) threshold_percent: f64,
}

impl DirDelta {
    /// "upload 6.59 Gbit/s → 14.91 Gbit/s".
    fn movement(&self) -> String {
        format!(
            "{} {} → {}",
            self.direction,
            format_bps(self.before_bps),
            format_bps(self.after_bps)
        )
    }

    pub(crate) fn text(&self) -> String {
        format!(
            "{} ({}, needed {:.1}%)",
            self.movement(),
            signed(self.change_percent),
            self.threshold_percent
        )
    }
}

/// "+12.0%", "−10.0%".
fn signed(percent: f64) -> String {
    let sign = if percent >= 0.0 { "+" } else { "−" };
    format!("{sign}{:.1}%", percent.abs())
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) enum Decision {
    Keep(String),
    Revert(String),
}

/// What the rule compares: the current state's series, the trial's series
/// (complete or so far), the baseline (for the run-to-run spread), the
/// smallest gain asked for and the full number of runs per direction. A
/// direction the tune does not measure (`--direction`) has an empty
/// baseline and takes no part.
#[derive(Clone, Copy)]
pub(crate) struct Evidence<'a> {
    pub(crate) reference: [&'a Series; 2],
    pub(crate) trial: [&'a Series; 2],
    pub(crate) baseline: [&'a Series; 2],
    pub(crate) min_gain_percent: f64,
    pub(crate) runs: u32,
}

/// One direction's comparison.
struct DirEvidence {
    delta: DirDelta,
    /// The best reference run (see [`ceiling`]).
    ceiling: f64,
    worst_trial: f64,
    best_trial: f64,
    /// The loss that counts as worse, in percent: `--min-gain` raised to
    /// this direction's noise ([`noise`]: the baseline's, the reference's
    /// and the trial's own spread), so an unchanged direction's run-to-run
    /// noise does not undo a gain in the other one.
    harm_threshold: f64,
}

impl DirEvidence {
    /// Every trial run above every reference run by more than `times` the threshold.
    fn clears(&self, times: f64) -> bool {
        self.worst_trial > self.ceiling * (1.0 + times * self.delta.threshold_percent / 100.0)
    }
    fn gained(&self) -> bool {
        self.clears(1.0)
    }
    fn lost(&self) -> bool {
        self.delta.change_percent < -self.harm_threshold && self.best_trial < self.delta.before_bps
    }
    /// No run still to come can make this direction a gain: one trial run
    /// already fails it (the worst run only gets worse).
    fn gain_impossible(&self) -> bool {
        !self.gained()
    }
    /// No run still to come can make this direction worse: one trial run is
    /// already at or above the reference's median.
    fn loss_impossible(&self) -> bool {
        self.best_trial >= self.delta.before_bps
    }
    /// No sign of a loss yet: a run at or above the reference's median
    /// ([`Self::loss_impossible`]), or every run within [`LOSS_TOLERANCE`] of
    /// the gain threshold below it. An unchanged direction's first run falls
    /// below its median half the time; waiting for one above it cost a whole
    /// run each way in most tunes. A real loss of 20% beside a gain is still
    /// reverted as often as by the rule before early decisions (`false_keep.rs`).
    fn no_sign_of_loss(&self) -> bool {
        let floor = 1.0 - LOSS_TOLERANCE * self.delta.threshold_percent / 100.0;
        self.loss_impossible() || self.worst_trial >= self.delta.before_bps * floor
    }
    /// This direction's figures, for a keep it did not earn, with why a
    /// fall in its median did not count as a loss (by the rule that kept
    /// the change: `early` for [`decide_early`]'s tolerance, else
    /// [`DirEvidence::lost`]'s), so the verdict never contradicts the
    /// figures printed beside it.
    fn beside_a_keep(&self, early: bool) -> String {
        let d = &self.delta;
        let figures = format!("{} ({})", d.movement(), signed(d.change_percent));
        if d.change_percent >= 0.0 {
            return figures;
        }
        let why = if self.loss_impossible() {
            "a run at or above the reference's median".to_string()
        } else if early {
            format!(
                "every run within {:.1}% below the reference's median",
                LOSS_TOLERANCE * d.threshold_percent
            )
        } else {
            format!(
                "less than the {:.1}% that counts as worse",
                self.harm_threshold
            )
        };
        format!("{figures}, not counted as a loss: {why}")
    }
    /// The strict early gate: twice the threshold.
    fn clear_gain(&self) -> bool {
        self.clears(2.0)
    }
    /// Every run at least [`OVERWHELMING`] times every reference run (and
    /// past the strict gate).
    fn overwhelming(&self) -> bool {
        self.clear_gain() && self.worst_trial >= OVERWHELMING * self.ceiling
    }
}

fn change_percent(before: f64, after: f64) -> f64 {
    if before > 0.0 {
        (after - before) / before * 100.0
    } else if after > 0.0 {
        100.0
    } else {
        0.0
    }
}

/// The expected range of n draws of a normal variable, in standard
/// deviations, for n = 0..=20 (the `d2` of quality control; --runs is at most 20).
const RANGE_IN_SD: [f64; 21] = [
    0.0, 0.0, 1.128, 1.693, 2.059, 2.326, 2.534, 2.704, 2.847, 2.970, 3.078, 3.173, 3.258, 3.336,
    3.407, 3.472, 3.532, 3.588, 3.640, 3.689, 3.735,
];

/// A finished series' run-to-run spread, scaled to what the full budget of
/// runs would show: the range of two runs is on average two thirds of the
/// range of three, so a baseline or reference shorter than the budget would
/// otherwise make the noise look smaller than it is.
fn spread(s: &Series, runs: u32) -> f64 {
    let n = s.samples.len().min(RANGE_IN_SD.len() - 1);
    let full = (runs as usize).min(RANGE_IN_SD.len() - 1);
    if (2..full).contains(&n) {
        s.spread() * RANGE_IN_SD[full] / RANGE_IN_SD[n]
    } else {
        s.spread()
    }
}

/// The best reference run. A reference kept early has fewer runs than the
/// budget, and the best of fewer runs is lower by chance: it then counts as
/// at least its median raised by the baseline's spread, so a shorter
/// reference never makes the next keep easier.
fn ceiling(reference: &Series, baseline: &Series, runs: u32) -> f64 {
    let best = reference.samples.iter().map(|x| x.bps).fold(0.0, f64::max);
    if reference.samples.len() >= runs as usize {
        best
    } else {
        best.max(reference.median() * (1.0 + spread(baseline, runs)))
    }
}

/// The run-to-run noise of direction `i`: the baseline's and the
/// reference's spread, and the trial's own (max − min) / max, which only
/// grows as runs come in.
fn noise(ev: &Evidence, i: usize) -> f64 {
    let trial = &ev.trial[i].samples;
    let max = trial.iter().map(|x| x.bps).fold(0.0, f64::max);
    let min = trial.iter().map(|x| x.bps).fold(f64::INFINITY, f64::min);
    let trial_noise = if max > 0.0 { (max - min) / max } else { 0.0 };
    spread(ev.baseline[i], ev.runs)
        .max(spread(ev.reference[i], ev.runs))
        .max(trial_noise)
}

/// The gain that counts, in percent: `--min-gain`, raised to the largest
/// noise seen in either direction (three runs estimate the noise poorly; the
/// machine's noise is one). It only grows as trial runs come in, so a
/// candidate that cannot clear it now never will.
fn gain_threshold(ev: &Evidence) -> f64 {
    let noise = noise(ev, 0).max(noise(ev, 1));
    ev.min_gain_percent.max(noise * 100.0)
}

fn dir_evidence(ev: &Evidence, i: usize, dir: Direction, gain_threshold: f64) -> DirEvidence {
    let (reference, trial) = (ev.reference[i], ev.trial[i]);
    let before = reference.median();
    let after = trial.median();
    let runs: Vec<f64> = trial.samples.iter().map(|x| x.bps).collect();
    DirEvidence {
        delta: DirDelta {
            direction: dir,
            before_bps: before,
            after_bps: after,
            change_percent: change_percent(before, after),
            threshold_percent: gain_threshold,
        },
        ceiling: ceiling(reference, ev.baseline[i], ev.runs),
        worst_trial: runs.iter().copied().fold(f64::INFINITY, f64::min),
        best_trial: runs.iter().copied().fold(0.0, f64::max),
        harm_threshold: ev.min_gain_percent.max(noise(ev, i) * 100.0),
    }
}

/// The indices of the measured directions.
fn measured<'e>(ev: &'e Evidence) -> impl Iterator<Item = usize> + 'e {
    (0..2).filter(|&i| !ev.baseline[i].samples.is_empty())
}

/// The fewest runs a measured direction of `series` holds.
fn fewest(ev: &Evidence, series: [&Series; 2]) -> usize {
    measured(ev)
        .map(|i| series[i].samples.len())
        .min()
        .unwrap_or(0)
}

fn all_dirs(ev: &Evidence) -> Vec<DirEvidence> {
    measured(ev)
        .map(|i| dir_evidence(ev, i, Direction::BOTH[i], gain_threshold(ev)))
        .collect()
}

fn texts<'a>(dirs: impl Iterator<Item = &'a DirEvidence>) -> String {
    dirs.map(|d| d.delta.text()).collect::<Vec<_>>().join("; ")
}

/// The directions that got worse, each with the loss that counted.
fn loss_texts<'a>(dirs: impl Iterator<Item = &'a DirEvidence>) -> String {
    dirs.map(|d| {
        format!(
            "{} (−{:.1}%, more than the {:.1}% that counts as worse)",
            d.delta.movement(),
            -d.delta.change_percent,
            d.harm_threshold
        )
    })
    .collect::<Vec<_>>()
    .join("; ")
}

/// A keep's reason: the directions that earned it, then `how` it was
/// decided, then every other direction's figures ([`DirEvidence::beside_a_keep`]).
fn keep_text(dirs: &[DirEvidence], earned: &[&DirEvidence], how: &str, early: bool) -> String {
    let mut text = format!("better: {}", texts(earned.iter().copied()));
    if !how.is_empty() {
        text += &format!(" ({how})");
    }
    for d in dirs {
        if !earned
            .iter()
            .any(|e| e.delta.direction == d.delta.direction)
        {
            text += &format!("; {}", d.beside_a_keep(early));
        }
    }
    text
}

fn deltas(dirs: &[DirEvidence]) -> Vec<DirDelta> {
    dirs.iter().map(|d| d.delta.clone()).collect()
}

/// The verdict on a complete trial.
pub(crate) fn decide(ev: &Evidence) -> (Decision, Vec<DirDelta>) {
    let dirs = all_dirs(ev);
    let lost: Vec<&DirEvidence> = dirs.iter().filter(|d| d.lost()).collect();
    let gained: Vec<&DirEvidence> = dirs.iter().filter(|d| d.gained()).collect();
    let decision = if !lost.is_empty() {
        Decision::Revert(format!("worse: {}", loss_texts(lost.into_iter())))
    } else if !gained.is_empty() {
        Decision::Keep(keep_text(&dirs, &gained, "", false))
    } else {
        Decision::Revert(format!("no gain above the noise: {}", texts(dirs.iter())))
    };
    (decision, deltas(&dirs))
}

/// Whether a keep needs the reference's missing runs first: the reference
/// (a 2-run baseline, or a candidate kept early) has fewer runs than the
/// budget, and the trial is not overwhelming (every run at least
/// [`OVERWHELMING`] times every reference run, no direction that could turn
/// out worse). A short reference estimates the noise poorly, so a keep
/// against it would come too easily; the tuner then reverts the candidate,
/// takes the missing reference runs and decides again (applying it again
/// and measuring on while the runs do not decide it yet).
pub(crate) fn keep_needs_full_reference(ev: &Evidence) -> bool {
    let reference_runs = fewest(ev, ev.reference);
    let dirs = all_dirs(ev);
    // A factor over one reference run proves little: it needs two.
    let beyond_doubt = reference_runs >= 2
        && dirs.iter().any(DirEvidence::overwhelming)
        && dirs.iter().all(DirEvidence::no_sign_of_loss);
    reference_runs < ev.runs as usize && !beyond_doubt
}

/// The verdict on the trial runs so far: the full rule once the budget is
/// spent; before that, with `early`, [`decide_early`]; `None` while more
/// runs are needed.
pub(crate) fn verdict_so_far(ev: &Evidence, early: bool) -> Option<(Decision, Vec<DirDelta>)> {
    let taken = fewest(ev, ev.trial);
    if taken >= ev.runs as usize {
        Some(decide(ev))
    } else if early {
        decide_early(ev)
    } else {
        None
    }
}

/// The verdict on the trial runs so far, when they already decide it; `None`
/// while more runs are needed (and always once the budget is spent: then
/// [`decide`] gives it).
pub(crate) fn decide_early(ev: &Evidence) -> Option<(Decision, Vec<DirDelta>)> {
    let taken = fewest(ev, ev.trial);
    if taken == 0 || taken >= ev.runs as usize {
        return None;
    }
    let dirs = all_dirs(ev);
    let after = format!("decided after {taken} of {} runs", ev.runs);
    if dirs.iter().all(DirEvidence::gain_impossible) {
        let worse: Vec<&DirEvidence> = dirs.iter().filter(|d| d.lost()).collect();
        let why = if worse.is_empty() {
            format!("no gain above the noise: {}", texts(dirs.iter()))
        } else {
            format!("worse: {}", loss_texts(worse.into_iter()))
        };
        return Some((
            Decision::Revert(format!(
                "{why} ({after}: in every direction a run not above every reference run by more than the threshold, no later run can make a gain)"
            )),
            deltas(&dirs),
        ));
    }
    if !dirs.iter().all(DirEvidence::no_sign_of_loss) {
        return None;
    }
    let overwhelming: Vec<&DirEvidence> = dirs.iter().filter(|d| d.overwhelming()).collect();
    if !overwhelming.is_empty() {
        let how = format!("{after}: every run at least {OVERWHELMING}× every reference run");
        return Some((
            Decision::Keep(keep_text(&dirs, &overwhelming, &how, true)),
            deltas(&dirs),
        ));
    }
    let clear: Vec<&DirEvidence> = dirs
        .iter()
        .filter(|d| d.gained() && d.clear_gain())
        .collect();
    let median_fixed = 2 * taken > ev.runs as usize;
    if median_fixed && !clear.is_empty() {
        let how = format!(
            "{after}: every run above every reference run by more than twice the threshold"
        );
        return Some((
            Decision::Keep(keep_text(&dirs, &clear, &how, true)),
            deltas(&dirs),
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::path::throughput::Sample;

    fn s(v: &[f64]) -> Series {
        Series {
            samples: v
                .iter()
                .map(|b| Sample {
                    bps: *b,
                    ..Default::default()
                })
                .collect(),
        }
    }

    fn ev<'a>(r: [&'a Series; 2], t: [&'a Series; 2], b: [&'a Series; 2]) -> Evidence<'a> {
        Evidence {
            reference: r,
            trial: t,
            baseline: b,
            min_gain_percent: 3.0,
            runs: 3,
        }
    }

    /// The verdict names every direction that fell, with the same change
    /// the result line prints from the deltas, and never says there is no loss.
    fn assert_agrees(r: &Decision, d: &[DirDelta]) {
        let Decision::Keep(why) = r else {
            panic!("expected a keep: {r:?}")
        };
        assert!(!why.contains("no direction shows a loss"), "{why}");
        for d in d.iter().filter(|d| d.change_percent < 0.0) {
            let shown = format!("{} ({}", d.movement(), signed(d.change_percent));
            assert!(why.contains(&shown), "{why}\nmissing: {shown}");
            assert!(why.contains("not counted as a loss"), "{why}");
        }
    }

    #[test]
    fn one_measured_direction_decides_alone() {
        // `--direction download`: the upload is never measured (empty
        // series); the download's runs alone keep or revert, and the
        // verdict and deltas name only it.
        let none = s(&[]);
        let down = s(&[10.0, 10.2]);
        let base = [&none, &down];
        let gain = s(&[12.0, 12.1, 12.2]);
        let (r, d) = decide(&ev(base, [&none, &gain], base));
        assert!(
            matches!(&r, Decision::Keep(w) if !w.contains("upload")),
            "{r:?}"
        );
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].direction, Direction::Download);
        // Two runs of three taken: not decided yet (a keep needs two
        // times the threshold early); one run below is a revert at once.
        let two = s(&[10.9, 11.0]);
        assert!(decide_early(&ev(base, [&none, &two], base)).is_none());
        let low = s(&[9.2]);
        let (r, d) = decide_early(&ev(base, [&none, &low], base)).expect("decided");
        assert!(
            matches!(&r, Decision::Revert(w) if w.starts_with("worse: download")),
            "{r:?}"
        );
        assert_eq!(d.len(), 1);
        assert!(verdict_so_far(&ev(base, [&none, &gain], base), true).is_some());
        assert!(keep_needs_full_reference(&ev(base, [&none, &gain], base)));
    }

    #[test]
    fn a_keep_beside_a_fall_in_the_other_direction_says_so_with_its_figures() {
        // Issue 38: an early keep said "no direction shows a loss" while its
        // own result line showed download −10 %: upload 3× from the first
        // runs, download's median 17.0 → 15.3 with one run above 17.0.
        let (up, down) = (s(&[6.0, 6.2]), s(&[17.0, 17.0]));
        let base = [&up, &down];
        let (t_up, t_down) = (s(&[20.0, 20.0, 20.0]), s(&[17.1, 15.3, 15.0]));
        let mut e = ev(base, [&t_up, &t_down], base);
        e.runs = 5;
        let (r, d) = decide_early(&e).expect("decided early");
        let down = d
            .iter()
            .find(|d| d.direction == Direction::Download)
            .unwrap();
        assert!((down.change_percent + 10.0).abs() < 0.01, "{down:?}");
        assert_agrees(&r, &d);
        // The full budget's keep names it too.
        let (full_up, full_down) = (s(&[6.0, 6.2, 6.1]), s(&[17.0, 17.0, 17.0]));
        let reference = [&full_up, &full_down];
        let (r, d) = decide(&ev(reference, [&t_up, &t_down], reference));
        assert_agrees(&r, &d);
    }

    #[test]
    fn a_loss_inside_the_directions_noise_does_not_undo_a_gain_in_the_other() {
        // The demo's fix on a quiet machine: upload 2.6×, download unchanged
        // but noisy (runs 15.2–16.5 against 16.6 and 17.0).
        let (up, down) = (s(&[6.8, 6.4]), s(&[16.6, 17.0]));
        let base = [&up, &down];
        let trial_up = s(&[15.1, 16.7, 15.4]);
        let (r, _) = decide(&ev(base, [&trial_up, &s(&[15.2, 15.7, 16.5])], base));
        assert!(
            matches!(&r, Decision::Keep(w) if w.contains("upload")),
            "{r:?}"
        );
        // A loss beyond that noise still reverts it, and the reason names
        // the threshold the loss passed, not the gain's.
        let (r, _) = decide(&ev(base, [&trial_up, &s(&[13.0, 13.4, 13.2])], base));
        assert!(
            matches!(&r, Decision::Revert(w) if w.starts_with("worse: download") && w.contains("counts as worse")),
            "{r:?}"
        );
    }

    #[test]
    fn keep_only_every_run_above_every_reference_run_by_the_threshold() {
        let quiet = s(&[100.0, 100.0, 100.0]);
        let q = [&quiet, &quiet];
        let base_down = s(&[100.0, 90.0, 110.0]); // 20% spread
        let b = [&quiet, &base_down];
        let d = |b: [&Series; 2], t: [&Series; 2]| decide(&ev(b, t, b)).0;
        // +10% upload on a quiet path: above 3%.
        let r = d(q, [&s(&[110.0; 3]), &s(&[100.0; 3])]);
        assert!(matches!(r, Decision::Keep(_)), "{r:?}");
        // +2% upload: below min-gain.
        let r = d(q, [&s(&[102.0; 3]), &s(&[100.0; 3])]);
        assert!(
            matches!(r, Decision::Revert(ref r) if r.starts_with("no gain")),
            "{r:?}"
        );
        // The download's 20% spread is the noise of the path: +10% upload is inside it...
        let r = d(b, [&s(&[110.0; 3]), &s(&[100.0; 3])]);
        assert!(
            matches!(r, Decision::Revert(ref r) if r.contains("needed 20.0%")),
            "{r:?}"
        );
        // ...+25% is not; but the trial's own noise counts too.
        let r = d(b, [&s(&[125.0; 3]), &s(&[100.0; 3])]);
        assert!(matches!(r, Decision::Keep(_)), "{r:?}");
        let r = d(q, [&s(&[112.0, 125.0, 160.0]), &s(&[100.0; 3])]);
        assert!(matches!(r, Decision::Revert(_)), "{r:?}");
        // +15% download is inside its 20% spread: not a gain.
        let r = d(b, [&s(&[100.0; 3]), &s(&[115.0; 3])]);
        assert!(matches!(r, Decision::Revert(_)), "{r:?}");
        // Upload +50% but download −40%: worse.
        let (r, deltas) = decide(&ev(b, [&s(&[150.0; 3]), &s(&[60.0; 3])], b));
        assert!(
            matches!(r, Decision::Revert(ref r) if r.starts_with("worse")),
            "{r:?}"
        );
        assert_eq!(deltas.len(), 2);
        // A median gain whose runs overlap the reference's is not a gain.
        let base = s(&[95.0, 100.0, 105.0]);
        let (r, _) = decide(&ev(
            [&base, &base],
            [&s(&[100.0, 120.0, 130.0]), &base],
            [&base, &base],
        ));
        assert!(matches!(r, Decision::Revert(_)), "{r:?}");
        // 3× in both directions.
        assert!(matches!(
            d(b, [&s(&[300.0; 3]), &s(&[300.0; 3])]),
            Decision::Keep(_)
        ));
    }

    #[test]
    fn early_revert_once_a_keep_is_impossible_and_says_after_how_many_runs() {
        let base = s(&[95.0, 100.0, 105.0]);
        let b = [&base, &base];
        // One run each way inside the reference's runs: reverted after 1 of 3.
        let (r, deltas) = decide_early(&ev(b, [&s(&[101.0]), &s(&[99.0])], b)).unwrap();
        assert!(
            matches!(&r, Decision::Revert(w) if w.starts_with("no gain") && w.contains("after 1 of 3 runs")),
            "{r:?}"
        );
        assert_eq!(deltas.len(), 2);
        // Far below in both directions: reverted as worse.
        let (r, _) = decide_early(&ev(b, [&s(&[50.0]), &s(&[60.0])], b)).unwrap();
        assert!(
            matches!(&r, Decision::Revert(w) if w.starts_with("worse")),
            "{r:?}"
        );
        // Upload above every reference run: a keep is still possible, measure on.
        assert!(decide_early(&ev(b, [&s(&[130.0]), &s(&[99.0])], b)).is_none());
        // The full budget is never decided early.
        assert!(decide_early(&ev(b, [&base, &base], b)).is_none());
    }

    #[test]
    fn early_keep_needs_most_runs_twice_the_threshold_and_no_sign_of_a_loss() {
        let base = s(&[95.0, 100.0, 105.0]); // 10% spread: threshold 10%, gate 105 × 1.2 = 126
        let b = [&base, &base];
        // One run is enough only when overwhelming: 3× every reference run.
        let (r, _) = decide_early(&ev(b, [&s(&[320.0]), &s(&[101.0])], b)).unwrap();
        assert!(
            matches!(&r, Decision::Keep(w) if w.contains("after 1 of 3 runs") && w.contains("3×")),
            "{r:?}"
        );
        assert!(decide_early(&ev(b, [&s(&[300.0]), &s(&[101.0])], b)).is_none());
        // The other direction's run a little below its median (within half
        // the 10% threshold) shows no loss; 6% below it does: measure on.
        let (r, _) = decide_early(&ev(b, [&s(&[320.0]), &s(&[96.0])], b)).unwrap();
        assert!(matches!(&r, Decision::Keep(_)), "{r:?}");
        assert!(decide_early(&ev(b, [&s(&[320.0]), &s(&[94.0])], b)).is_none());
        // Two runs far beyond the gate, the other direction flat (one run at
        // or above the median): kept after 2 of 3.
        let (r, _) = decide_early(&ev(b, [&s(&[200.0, 210.0]), &s(&[101.0, 99.0])], b)).unwrap();
        assert!(
            matches!(&r, Decision::Keep(w) if w.contains("after 2 of 3 runs")),
            "{r:?}"
        );
        // Beyond every reference run but not by twice the threshold: measure on.
        assert!(decide_early(&ev(b, [&s(&[120.0, 122.0]), &s(&[100.0, 100.0])], b)).is_none());
        // The other direction has a run more than half the threshold below
        // its median: a loss may be coming, measure on.
        assert!(decide_early(&ev(b, [&s(&[200.0, 210.0]), &s(&[98.0, 94.0])], b)).is_none());
    }

    #[test]
    fn a_short_reference_counts_as_high_as_the_noise_allows() {
        let base = s(&[95.0, 100.0, 105.0]); // 10% spread
        let full = s(&[100.0, 100.0, 100.0]);
        let short = s(&[100.0, 100.0]); // kept early after 2 of 3 runs
        let b = [&base, &base];
        let t = s(&[118.0, 119.0, 120.0]);
        // Above a full reference by more than the 10% threshold: kept.
        let (r, _) = decide(&ev([&full, &full], [&t, &full], b));
        assert!(matches!(r, Decision::Keep(_)), "{r:?}");
        // The short reference counts as 100 raised by the baseline's 10%: not kept.
        let (r, _) = decide(&ev([&short, &short], [&t, &short], b));
        assert!(matches!(r, Decision::Revert(_)), "{r:?}");
        let t = s(&[125.0, 126.0, 127.0]);
        let (r, _) = decide(&ev([&short, &short], [&t, &short], b));
        assert!(matches!(r, Decision::Keep(_)), "{r:?}");
    }
}
