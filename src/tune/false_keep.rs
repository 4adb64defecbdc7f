//! The false-keep rate of the early decisions, as a property of the rule over
//! series drawn with simulated noise (no machine can give thousands of
//! seeded tunes): every run is the candidate's true throughput times
//! (1 + σ·N(0,1)), σ being the run-to-run noise measured on this machine —
//! 8 runs of 5 s each way over the demo's veth pair (`hlctl tune --dry-run
//! --runs 8`) while others compiled (load 7 on 2 cores): σ 21% and 9%
//! (upload, download) with offloads on, 29% and 14% with them off; the
//! tests use 18% (the middle) and 29% (the worst).
//!
//! It compares, on the same draws, the rule as it runs now (run by run,
//! [`decide_early`] first), the same rule with the full budget ([`decide`]
//! on every run), and the rule before this change ([`old_rule_keeps`]: the
//! full budget, a median gain above max(min-gain, baseline spread) with
//! every trial run above every reference run).

use super::decide::{Decision, Evidence, decide, decide_early};
use crate::path::measure::{Sample, Series};

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

/// One candidate whose true throughput is `level` × the current state's.
struct Draw {
    baseline: [Series; 2],
    /// The current state's runs: the baseline's, or a reference kept early
    /// after `reference_runs`.
    reference: [Series; 2],
    trial: [Series; 2],
}

impl Draw {
    fn new(rng: &mut Rng, sigma: f64, level: f64, reference_runs: u32) -> Draw {
        let mut two = |n, l| [rng.series(n, l, sigma), rng.series(n, l, sigma)];
        let baseline = two(RUNS, 1.0);
        let reference = if reference_runs == RUNS {
            baseline.clone()
        } else {
            two(reference_runs, 1.0)
        };
        let trial = two(RUNS, level);
        Draw {
            baseline,
            reference,
            trial,
        }
    }

    fn evidence<'a>(&'a self, trial: &'a [Series; 2]) -> Evidence<'a> {
        Evidence {
            reference: [&self.reference[0], &self.reference[1]],
            trial: [&trial[0], &trial[1]],
            baseline: [&self.baseline[0], &self.baseline[1]],
            min_gain_percent: MIN_GAIN,
            runs: RUNS,
        }
    }

    fn old(&self) -> bool {
        old_rule_keeps(&self.reference, &self.trial, &self.baseline)
    }

    /// The rule with the full budget, then decide.
    fn full(&self) -> bool {
        matches!(decide(&self.evidence(&self.trial)).0, Decision::Keep(_))
    }

    /// The rule as it runs now: (kept, runs taken, decided early).
    fn early(&self) -> (bool, u32, bool) {
        for k in 1..=RUNS as usize {
            let so_far = [0, 1].map(|d| Series {
                samples: self.trial[d].samples[..k].to_vec(),
            });
            if let Some((d, _)) = decide_early(&self.evidence(&so_far)) {
                return (matches!(d, Decision::Keep(_)), k as u32, true);
            }
        }
        (self.full(), RUNS, false)
    }
}

#[test]
fn simulated_noise_measured_here_a_no_op_and_a_harmful_candidate_never_kept_in_20_trials() {
    for sigma in [SIGMA_MEASURED, SIGMA_WORST] {
        for reference_runs in [RUNS, 2] {
            let mut rng = Rng(0x7E57 + reference_runs as u64);
            for (what, level) in [("no-op", 1.0), ("harmful", 0.7), ("slightly harmful", 0.95)] {
                for trial in 0..20 {
                    let d = Draw::new(&mut rng, sigma, level, reference_runs);
                    let (kept, runs, _) = d.early();
                    assert!(
                        !kept,
                        "σ {sigma}, reference of {reference_runs} runs: the {what} candidate was kept in trial {trial} after {runs} runs"
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
                let d = Draw::new(&mut rng, sigma, level, RUNS);
                let (kept, _, early) = d.early();
                if early && !kept {
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
fn rates(rng: &mut Rng, sigma: f64, level: f64, reference_runs: u32, n: u32) -> [u32; 4] {
    let mut c = [0; 4];
    for _ in 0..n {
        let d = Draw::new(rng, sigma, level, reference_runs);
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
            for reference_runs in [RUNS, 2] {
                let [old, full, now, runs] = rates(&mut rng, sigma, level, reference_runs, n);
                eprintln!(
                    "σ {sigma}, level {level}, reference of {reference_runs} runs: kept {now} of {n} now ({full} with every run, {old} by the old rule), {runs} runs"
                );
                // The old rule's reference had the full budget, so compare with its count there.
                assert!(
                    now <= old,
                    "σ {sigma}, level {level}, reference of {reference_runs} runs: kept {now} of {n} now, {old} by the old rule"
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
fn simulated_noise_a_clear_gain_is_kept_as_often_and_sooner() {
    let n = 5_000;
    let mut rng = Rng(11);
    // The stricter gain rule costs power on moderate gains in this much
    // noise: at σ 18% a 1.6× gain is kept 35% of the time (the old rule: 93%,
    // at the price of 6% false keeps). Offloads back on over veth are a 6×
    // gain; a 3× gain is the smallest these tests ask to be kept as often.
    for (sigma, level) in [
        (SIGMA_MEASURED, 3.0),
        (SIGMA_MEASURED, 6.0),
        (SIGMA_WORST, 6.0),
    ] {
        {
            let [old, _, now, runs] = rates(&mut rng, sigma, level, RUNS, n);
            eprintln!(
                "σ {sigma}, level {level}: kept {now} of {n} now, {old} by the old rule, {runs} runs"
            );
            assert!(
                f64::from(now) >= 0.99 * f64::from(old),
                "σ {sigma}, level {level}: kept {now} of {n} now, {old} by the old rule"
            );
            assert!(
                runs < n * RUNS,
                "σ {sigma}: {runs} runs for {n} clear gains"
            );
        }
    }
}
