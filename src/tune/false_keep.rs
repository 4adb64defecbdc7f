//! The false-keep rate of the early decisions, as a property of the rule over
//! series drawn with simulated noise (no machine can give thousands of
//! seeded tunes): every run is the candidate's true throughput times
//! (1 + σ·N(0,1)), σ being the run-to-run noise measured on this machine —
//! 8 runs of 5 s each way over the demo's veth pair (`hlctl tune --dry-run
//! --runs 8`) while others compiled (load 7 on 2 cores): σ 21% and 9%
//! (upload, download) with offloads on, 29% and 14% with them off; the
//! tests use 18% (the middle) and 29% (the worst).
//!
//! It compares, on the same draws, the rule as the tuner runs it (a
//! baseline of 2 of the 3 runs, the candidate run by run with
//! [`decide_early`] first, and a keep against a reference shorter than the
//! budget decided again once the reference has its missing runs, unless it
//! is overwhelming), the same rule with the full budget ([`decide`] on every
//! run), and the rule before early decisions ([`old_rule_keeps`]: a 3-run
//! baseline, the full budget, a median gain above max(min-gain, baseline
//! spread) with every trial run above every reference run).

use super::decide::{
    Decision, Evidence, decide, decide_early, keep_needs_full_reference, verdict_so_far,
};
use super::run::baseline_runs;
use crate::path::throughput::{Sample, Series};

/// Run-to-run noise (σ as a fraction of the median) measured here.
const SIGMA_MEASURED: f64 = 0.18;
/// The noisiest direction measured here.
const SIGMA_WORST: f64 = 0.29;
const RUNS: u32 = 3;
const MIN_GAIN: f64 = 3.0;

/// splitmix64: seeded, so every run of the test draws the same series.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }
    /// Box–Muller.
    fn normal(&mut self) -> f64 {
        let u = self.next().max(1e-12);
        let v = self.next();
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }
    fn series(&mut self, n: u32, level: f64, sigma: f64) -> Series {
        Series {
            samples: (0..n)
                .map(|_| Sample {
                    bps: 1e9 * level * (1.0 + sigma * self.normal()).max(0.01),
                    ..Default::default()
                })
                .collect(),
        }
    }
}

/// The rule before early decisions, kept here as the yardstick of the
/// false-keep rate: some direction's median above the reference's by more
/// than max(min-gain, that direction's baseline spread) with every trial run
/// above every reference run, and no direction worse.
fn old_rule_keeps(reference: &[Series; 2], trial: &[Series; 2], baseline: &[Series; 2]) -> bool {
    let bps = |s: &Series| s.samples.iter().map(|x| x.bps).collect::<Vec<f64>>();
    let mut gained = false;
    for i in 0..2 {
        let (before, after) = (reference[i].median(), trial[i].median());
        let change = (after - before) / before * 100.0;
        let threshold = MIN_GAIN.max(baseline[i].spread() * 100.0);
        let worst = bps(&trial[i]).into_iter().fold(f64::INFINITY, f64::min);
        let best = bps(&trial[i]).into_iter().fold(0.0, f64::max);
        let best_reference = bps(&reference[i]).into_iter().fold(0.0, f64::max);
        if change < -threshold && best < before {
            return false;
        }
        gained |= change > threshold && worst > best_reference;
    }
    gained
}

/// What the candidate is compared with: the baseline (as the tuner takes
/// it, [`baseline_runs`] of the budget), or a reference kept early after
/// `n` runs.
#[derive(Clone, Copy, Debug)]
enum Reference {
    Baseline,
    KeptAfter(u32),
}

/// The reference kinds every property is checked against.
const REFERENCES: [Reference; 3] = [
    Reference::Baseline,
    Reference::KeptAfter(1),
    Reference::KeptAfter(2),
];

/// One candidate whose true throughput is `level` × the current state's.
struct Draw {
    baseline: [Series; 2],
    /// The current state's runs: the baseline's, or a reference kept early.
    reference: [Series; 2],
    /// Both with the full budget of runs, as they are once the tuner took
    /// the missing ones ([`keep_needs_full_reference`]).
    baseline_full: [Series; 2],
    reference_full: [Series; 2],
    /// The old rule's reference: the full budget (the baseline then had it).
    old_reference: [Series; 2],
    trial: [Series; 2],
}

fn first(s: &[Series; 2], n: u32) -> [Series; 2] {
    s.clone().map(|x| Series {
        samples: x.samples[..n as usize].to_vec(),
    })
}

impl Draw {
    fn new(rng: &mut Rng, sigma: f64, level: f64, reference: Reference) -> Draw {
        Draw::split(rng, sigma, [level, level], reference)
    }

    /// A candidate whose true throughput changes by a different factor in
    /// each direction (upload, download).
    fn split(rng: &mut Rng, sigma: f64, levels: [f64; 2], reference: Reference) -> Draw {
        let mut two = |n, l| [rng.series(n, l, sigma), rng.series(n, l, sigma)];
        let baseline_full = two(RUNS, 1.0);
        let baseline = first(&baseline_full, baseline_runs(RUNS, false));
        let (reference, reference_full, old_reference) = match reference {
            Reference::Baseline => (
                baseline.clone(),
                baseline_full.clone(),
                baseline_full.clone(),
            ),
            Reference::KeptAfter(n) => {
                let full = two(RUNS, 1.0);
                let short = first(&full, n);
                (short.clone(), full, short)
            }
        };
        let trial = levels.map(|l| rng.series(RUNS, l, sigma));
        Draw {
            baseline,
            reference,
            baseline_full,
            reference_full,
            old_reference,
            trial,
        }
    }

    fn evidence<'a>(&'a self, trial: &'a [Series; 2]) -> Evidence<'a> {
        against(&self.reference, &self.baseline, trial)
    }

    /// The evidence once the reference got its missing runs.
    fn evidence_full<'a>(&'a self, trial: &'a [Series; 2]) -> Evidence<'a> {
        against(&self.reference_full, &self.baseline_full, trial)
    }

    /// The first `j` trial runs each way.
    fn runs(&self, j: usize) -> [Series; 2] {
        first(&self.trial, j as u32)
    }

    fn old(&self) -> bool {
        old_rule_keeps(&self.old_reference, &self.trial, &self.baseline_full)
    }

    /// What the tuner does with a decision on the first `k` trial runs: a
    /// keep against a short reference is decided again once the reference
    /// has its runs, measuring on while the runs do not decide it.
    fn settle(&self, k: usize, decision: Decision) -> bool {
        let keep = |d: &Decision| matches!(d, Decision::Keep(_));
        match decision {
            Decision::Keep(_) if keep_needs_full_reference(&self.evidence(&self.runs(k))) => {
                let mut measured_on = k..=RUNS as usize;
                measured_on
                    .find_map(|j| verdict_so_far(&self.evidence_full(&self.runs(j)), true))
                    .is_some_and(|(d, _)| keep(&d))
            }
            d => keep(&d),
        }
    }

    /// The rule with the full budget, then decide.
    fn full(&self) -> bool {
        self.settle(RUNS as usize, decide(&self.evidence(&self.trial)).0)
    }

    /// The rule as it runs now: (kept, runs taken, reverted early by
    /// [`decide_early`] itself).
    fn early(&self) -> (bool, u32, bool) {
        for k in 1..RUNS as usize {
            if let Some((d, _)) = decide_early(&self.evidence(&self.runs(k))) {
                let reverted = matches!(d, Decision::Revert(_));
                return (self.settle(k, d), k as u32, reverted);
            }
        }
        (self.full(), RUNS, false)
    }
}

/// The rule's evidence for a trial against a reference and a baseline.
fn against<'a>(
    reference: &'a [Series; 2],
    baseline: &'a [Series; 2],
    trial: &'a [Series; 2],
) -> Evidence<'a> {
    Evidence {
        reference: [&reference[0], &reference[1]],
        trial: [&trial[0], &trial[1]],
        baseline: [&baseline[0], &baseline[1]],
        min_gain_percent: MIN_GAIN,
        runs: RUNS,
    }
}

#[test]
fn simulated_noise_measured_here_a_no_op_and_a_harmful_candidate_never_kept_in_20_trials() {
    for sigma in [SIGMA_MEASURED, SIGMA_WORST] {
        for (k, reference) in REFERENCES.into_iter().enumerate() {
            let mut rng = Rng(0x7E57 + k as u64);
            for (what, level) in [("no-op", 1.0), ("harmful", 0.7), ("slightly harmful", 0.95)] {
                for trial in 0..20 {
                    let d = Draw::new(&mut rng, sigma, level, reference);
                    let (kept, runs, _) = d.early();
                    assert!(
                        !kept,
                        "σ {sigma}, reference {reference:?}: the {what} candidate was kept in trial {trial} after {runs} runs"
                    );
                }
            }
        }
    }
}

#[test]
fn simulated_noise_an_early_revert_is_always_the_verdict_the_full_budget_gives() {
    let mut rng = Rng(42);
    for sigma in [SIGMA_MEASURED, SIGMA_WORST] {
        for level in [0.7, 0.95, 1.0, 1.05, 1.1, 1.5] {
            for _ in 0..2000 {
                let d = Draw::new(&mut rng, sigma, level, Reference::Baseline);
                let (_, _, reverted_early) = d.early();
                if reverted_early {
                    assert!(
                        !d.full(),
                        "σ {sigma}, level {level}: reverted early, kept in full"
                    );
                }
            }
        }
    }
}

/// Counts over many draws: (kept by the old rule, kept by the rule with the
/// full budget, kept now, runs taken now).
fn rates(rng: &mut Rng, sigma: f64, level: f64, reference: Reference, n: u32) -> [u32; 4] {
    let mut c = [0; 4];
    for _ in 0..n {
        let d = Draw::new(rng, sigma, level, reference);
        let (kept, runs, _) = d.early();
        c[0] += u32::from(d.old());
        c[1] += u32::from(d.full());
        c[2] += u32::from(kept);
        c[3] += runs;
    }
    c
}

#[test]
fn simulated_noise_false_keeps_no_more_often_than_before() {
    let n = 20_000;
    let mut rng = Rng(7);
    for sigma in [SIGMA_MEASURED, SIGMA_WORST] {
        for level in [1.0, 0.95] {
            for reference in REFERENCES {
                let [old, full, now, runs] = rates(&mut rng, sigma, level, reference, n);
                eprintln!(
                    "σ {sigma}, level {level}, reference {reference:?}: kept {now} of {n} now ({full} with every run, {old} by the old rule), {runs} runs"
                );
                // The old rule's reference had the full budget, so compare with its count there.
                assert!(
                    now <= old,
                    "σ {sigma}, level {level}, reference {reference:?}: kept {now} of {n} now, {old} by the old rule"
                );
                // And it spends less: a no-op is mostly settled after one run.
                assert!(
                    runs < n * RUNS * 2 / 3,
                    "σ {sigma}, level {level}: {runs} runs for {n} candidates"
                );
            }
        }
    }
}

#[test]
fn simulated_noise_a_clear_gain_is_kept_nearly_as_often_and_sooner() {
    let n = 5_000;
    let mut rng = Rng(11);
    // The stricter gain rule costs power on moderate gains in this much
    // noise: at σ 18% a 1.6× gain is kept 35% of the time (the old rule: 93%,
    // at the price of 6% false keeps), and the 2-run baseline, whose spread
    // counts as the range three runs would show, costs some more on a 3×
    // gain. Offloads back on over veth are a 6× gain: kept as often as by
    // the old rule at σ 18%, mostly after one run each way; at the worst
    // noise measured here (σ 29%) 97% as often.
    for (sigma, level, share) in [
        (SIGMA_MEASURED, 3.0, 0.90),
        (SIGMA_MEASURED, 6.0, 0.99),
        (SIGMA_WORST, 6.0, 0.95),
    ] {
        {
            let [old, _, now, runs] = rates(&mut rng, sigma, level, Reference::Baseline, n);
            eprintln!(
                "σ {sigma}, level {level}: kept {now} of {n} now, {old} by the old rule, {runs} runs"
            );
            assert!(
                f64::from(now) >= share * f64::from(old),
                "σ {sigma}, level {level}: kept {now} of {n} now, {old} by the old rule (at least {share} of it expected)"
            );
            assert!(
                runs < n * RUNS,
                "σ {sigma}: {runs} runs for {n} clear gains"
            );
        }
    }
}

/// Run-to-run noise of the quiet machine: 5 runs of 5 s each way over the
/// demo's veth pair with iperf3, offloads off and on alternating, nothing
/// else running: σ 6% and 9% (download, off and on), 5% (upload, off).
const SIGMA_QUIET: f64 = 0.08;

#[test]
fn simulated_noise_a_gain_in_one_direction_survives_noise_in_the_unchanged_other() {
    // Offloads back on over the veth pair on a quiet machine: upload 2.6×
    // (with iperf3's receiver; 4× with hlctl's, which wakes once per block),
    // download unchanged. The unchanged direction's noise must not revert
    // the gain as "worse" more often than the old rule did; a real loss of
    // 20% there must still revert it about as often as the old rule did.
    // (At σ 18% the stricter gain rule keeps such a gain 61% of the time,
    // the old rule 94%: the price of its 6% false keeps there.)
    let n = 5_000;
    let mut rng = Rng(13);
    for (levels, at_least, at_most) in [
        ([2.6, 1.0], 0.99, 1.02),
        ([2.6, 0.8], 0.0, 1.1),
        ([4.0, 1.0], 0.99, 1.02),
    ] {
        let (mut now, mut old, mut runs) = (0, 0, 0);
        for _ in 0..n {
            let d = Draw::split(&mut rng, SIGMA_QUIET, levels, Reference::Baseline);
            let e = d.early();
            now += u32::from(e.0);
            runs += e.1;
            old += u32::from(d.old());
        }
        eprintln!(
            "σ {SIGMA_QUIET}, levels {levels:?}: kept {now} of {n} now, {old} by the old rule, {runs} runs"
        );
        let share = f64::from(now) / f64::from(old);
        assert!(
            (at_least..=at_most).contains(&share),
            "levels {levels:?}: kept {now} of {n} now, {old} by the old rule (expected {at_least} to {at_most} of it)"
        );
    }
}

#[test]
fn simulated_noise_a_fourfold_gain_is_mostly_decided_after_one_run_each_way() {
    // The demo's fix as the tuner measures it against `hlctl serve` on a
    // quiet machine: upload 4×, download unchanged. Decided after one run
    // each way, with no runs added to the 2-run baseline, it costs the tune
    // 2 runs instead of 6 (the rule before early decisions) or 4–6 (the rule
    // before the loss tolerance, which waited for a download run at or above
    // its median).
    let n = 5_000;
    let mut rng = Rng(17);
    let mut after_one = 0;
    for _ in 0..n {
        let d = Draw::split(&mut rng, SIGMA_QUIET, [4.0, 1.0], Reference::Baseline);
        let first = d.runs(1);
        let ev = d.evidence(&first);
        if matches!(decide_early(&ev), Some((Decision::Keep(_), _)))
            && !keep_needs_full_reference(&ev)
        {
            after_one += 1;
        }
    }
    eprintln!(
        "σ {SIGMA_QUIET}, levels [4.0, 1.0]: kept after one run each way in {after_one} of {n}"
    );
    assert!(
        after_one * 10 >= n * 6,
        "kept after one run each way in {after_one} of {n} (at least 60% expected)"
    );
}
