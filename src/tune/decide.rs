//! Keep or revert: a candidate stays only if the median of some direction
//! improved by more than both `--min-gain` and the baseline's run-to-run
//! spread, with every trial run above every reference run; and no direction
//! got worse beyond that threshold with every trial run below the
//! reference's median.

use serde::{Deserialize, Serialize};

use crate::path::measure::{Direction, Series, format_bps};

/// One direction before and after a candidate.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DirDelta {
    pub direction: Direction,
    pub before_bps: f64,
    pub after_bps: f64,
    pub change_percent: f64,
    /// The gain it needed to count: max(min-gain, baseline spread).
    pub threshold_percent: f64,
}

impl DirDelta {
    pub fn text(&self) -> String {
        format!(
            "{} {} → {} ({}{:.1}%, needed {:.1}%)",
            self.direction,
            format_bps(self.before_bps),
            format_bps(self.after_bps),
            if self.change_percent >= 0.0 {
                "+"
            } else {
                "−"
            },
            self.change_percent.abs(),
            self.threshold_percent
        )
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Decision {
    Keep(String),
    Revert(String),
}

/// Compare `trial` with `reference` (the current state's series); `baseline`
/// gives the run-to-run spread.
pub fn decide(
    reference: [&Series; 2],
    trial: [&Series; 2],
    baseline: [&Series; 2],
    min_gain_percent: f64,
) -> (Decision, Vec<DirDelta>) {
    let mut deltas = Vec::new();
    let mut gained = Vec::new();
    let mut lost = Vec::new();
    for (i, dir) in Direction::BOTH.iter().enumerate() {
        let before = reference[i].median();
        let after = trial[i].median();
        let change = if before > 0.0 {
            (after - before) / before * 100.0
        } else if after > 0.0 {
            100.0
        } else {
            0.0
        };
        let threshold = min_gain_percent.max(baseline[i].spread() * 100.0);
        // Worse only when beyond the noise and every trial run fell below the reference's median.
        let best_trial = trial[i].samples.iter().map(|x| x.bps).fold(0.0, f64::max);
        // Better only when every trial run beats every reference run, too:
        // a noisy baseline cannot hand a candidate a lucky median.
        let worst_trial = trial[i]
            .samples
            .iter()
            .map(|x| x.bps)
            .fold(f64::INFINITY, f64::min);
        let best_reference = reference[i]
            .samples
            .iter()
            .map(|x| x.bps)
            .fold(0.0, f64::max);
        let d = DirDelta {
            direction: *dir,
            before_bps: before,
            after_bps: after,
            change_percent: change,
            threshold_percent: threshold,
        };
        if change > threshold && worst_trial > best_reference {
            gained.push(d.text());
        } else if change < -threshold && best_trial < before {
            lost.push(d.text());
        }
        deltas.push(d);
    }
    let decision = if !lost.is_empty() {
        Decision::Revert(format!("worse: {}", lost.join("; ")))
    } else if !gained.is_empty() {
        Decision::Keep(format!("better: {}", gained.join("; ")))
    } else {
        let all: Vec<String> = deltas.iter().map(DirDelta::text).collect();
        Decision::Revert(format!("no gain above the noise: {}", all.join("; ")))
    };
    (decision, deltas)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::path::measure::Sample;

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

    #[test]
    fn keep_only_above_min_gain_and_spread() {
        let base_up = s(&[100.0, 100.0, 100.0]);
        let base_down = s(&[100.0, 90.0, 110.0]); // 20% spread
        let b = [&base_up, &base_down];
        // +10% upload: above 3%; download flat.
        let (d, _) = decide(b, [&s(&[110.0; 3]), &s(&[100.0; 3])], b, 3.0);
        assert!(matches!(d, Decision::Keep(_)), "{d:?}");
        // +2% upload: below min-gain.
        let (d, _) = decide(b, [&s(&[102.0; 3]), &s(&[100.0; 3])], b, 3.0);
        assert!(
            matches!(d, Decision::Revert(ref r) if r.starts_with("no gain")),
            "{d:?}"
        );
        // +15% download is inside its 20% spread: not a gain.
        let (d, _) = decide(b, [&s(&[100.0; 3]), &s(&[115.0; 3])], b, 3.0);
        assert!(matches!(d, Decision::Revert(_)), "{d:?}");
        // Upload +50% but download −40%: worse.
        let (d, deltas) = decide(b, [&s(&[150.0; 3]), &s(&[60.0; 3])], b, 3.0);
        assert!(
            matches!(d, Decision::Revert(ref r) if r.starts_with("worse")),
            "{d:?}"
        );
        assert_eq!(deltas.len(), 2);
        // A median gain whose runs overlap the reference's is not a gain.
        let base = s(&[95.0, 100.0, 105.0]);
        let (d, _) = decide(
            [&base, &base],
            [&s(&[100.0, 120.0, 130.0]), &base],
            [&base, &base],
            3.0,
        );
        assert!(matches!(d, Decision::Revert(_)), "{d:?}");
        // 3× in both directions.
        let (d, _) = decide(b, [&s(&[300.0; 3]), &s(&[300.0; 3])], b, 3.0);
        assert!(matches!(d, Decision::Keep(_)));
    }
}
