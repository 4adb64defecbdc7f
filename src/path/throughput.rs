//! Throughput to the peer, behind a small trait so the tuner and the doctor
//! do not depend on how it is measured. [`net`](crate::bench::net) provides
//! the real one (an iperf3-protocol client); tests may count or script samples.

use serde::{Deserialize, Serialize};

use crate::bench::progress::{Cancel, Progress};

/// Which way the data flows, seen from this host.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Direction {
    /// This host sends to the peer.
    Upload,
    /// The peer sends to this host.
    Download,
}

impl Direction {
    pub(crate) const BOTH: [Direction; 2] = [Direction::Upload, Direction::Download];

    /// The directions `word` names: "both", "upload" or "download"; the
    /// message names the word and what is allowed.
    pub(crate) fn parse_set(word: &str) -> Result<&'static [Direction], String> {
        match word {
            "both" => Ok(&Direction::BOTH),
            "upload" => Ok(&Direction::BOTH[..1]),
            "download" => Ok(&Direction::BOTH[1..]),
            _ => Err(format!(
                "invalid direction {word:?}: allowed both, upload, download"
            )),
        }
    }
}

impl std::fmt::Display for Direction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Direction::Upload => "upload",
            Direction::Download => "download",
        })
    }
}

/// One throughput measurement.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Sample {
    pub(crate) bps: f64,
    /// Round-trip time while the data flowed (echo probes during the test).
    pub(crate) rtt_loaded_ms: Option<f64>,
    pub(crate) retransmits: Option<u64>,
    /// CPU use in percent of one CPU, this host and the peer.
    pub(crate) local_cpu_percent: Option<f64>,
    pub(crate) remote_cpu_percent: Option<f64>,
    /// This host's cores during the transfer (`crate::cpu`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) cores: Option<crate::cpu::report::CoreReport>,
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum MeasureError {
    #[error("cancelled")]
    Cancelled,
    #[error("{0}")]
    Failed(String),
}

/// Something that measures throughput to one peer.
pub(crate) trait Measure: Send + Sync {
    /// One run; a wait (a busy peer) is said through `progress`.
    fn sample(
        &self,
        dir: Direction,
        progress: &dyn Progress,
        cancel: &Cancel,
    ) -> Result<Sample, MeasureError>;
    /// What is measured, for reports (`hlctl bench net 10.0.0.2:5201, 2 s`).
    fn describe(&self) -> String;
}

/// Several samples of one direction and their summary.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Series {
    pub(crate) samples: Vec<Sample>,
}

impl Series {
    fn sorted_bps(&self) -> Vec<f64> {
        let mut v: Vec<f64> = self.samples.iter().map(|s| s.bps).collect();
        v.sort_by(|a, b| a.total_cmp(b));
        v
    }

    pub(crate) fn median(&self) -> f64 {
        median(&self.sorted_bps())
    }

    /// Run-to-run spread: (max − min) / median, as a fraction.
    pub(crate) fn spread(&self) -> f64 {
        let v = self.sorted_bps();
        let m = median(&v);
        match (v.first(), v.last()) {
            (Some(lo), Some(hi)) if m > 0.0 => (hi - lo) / m,
            _ => 0.0,
        }
    }

    /// The median of the loaded RTTs that were measured.
    pub(crate) fn rtt_loaded_ms(&self) -> Option<f64> {
        let mut v: Vec<f64> = self
            .samples
            .iter()
            .filter_map(|s| s.rtt_loaded_ms)
            .collect();
        v.sort_by(|a, b| a.total_cmp(b));
        (!v.is_empty()).then(|| median(&v))
    }

    /// The per-core report of the last run that sampled the cores.
    pub(crate) fn last_cores(&self) -> Option<&crate::cpu::report::CoreReport> {
        self.samples.iter().rev().find_map(|s| s.cores.as_ref())
    }

    /// The compact per-core line of the last run that sampled the cores.
    pub(crate) fn cores_line(&self, dir: Direction) -> Option<String> {
        Some(crate::cpu::text::line(&dir.to_string(), self.last_cores()?))
    }

    /// The highest CPU use seen on either side.
    pub(crate) fn max_cpu_percent(&self) -> Option<f64> {
        self.samples
            .iter()
            .flat_map(|s| [s.local_cpu_percent, s.remote_cpu_percent])
            .flatten()
            .reduce(f64::max)
    }
}

/// Median of sorted values (0 for none).
pub(crate) fn median(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    match n {
        0 => 0.0,
        _ if n % 2 == 1 => sorted[n / 2],
        _ => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}

/// The measured directions of an (upload, download) pair of series,
/// upload first: a direction without a run (not measured, as by a tune's
/// `--direction`) is left out.
pub(crate) fn measured<'a>(
    upload: &'a Series,
    download: &'a Series,
) -> impl Iterator<Item = (Direction, &'a Series)> {
    [(Direction::Upload, upload), (Direction::Download, download)]
        .into_iter()
        .filter(|(_, s)| !s.samples.is_empty())
}

/// Take `runs` samples of each direction of `dirs` (upload first,
/// alternating; a direction not in `dirs` stays an empty series); the
/// measure says its waits (a busy peer) through `progress`.
pub(crate) fn series(
    m: &dyn Measure,
    runs: u32,
    dirs: &[Direction],
    progress: &dyn Progress,
    cancel: &Cancel,
    mut each: impl FnMut(Direction, u32),
) -> Result<(Series, Series), MeasureError> {
    let (mut up, mut down) = (Series::default(), Series::default());
    for i in 0..runs.max(1) {
        for &dir in dirs {
            if cancel.is_cancelled() {
                return Err(MeasureError::Cancelled);
            }
            each(dir, i);
            let s = m.sample(dir, progress, cancel)?;
            match dir {
                Direction::Upload => up.samples.push(s),
                Direction::Download => down.samples.push(s),
            }
        }
    }
    Ok((up, down))
}

/// The name the path and its readers know [`crate::units::bps`] by.
pub(crate) use crate::units::bps as format_bps;

#[cfg(test)]
mod tests {
    use super::*;

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
    fn direction_sets_parse_and_refuse_with_the_allowed_words() {
        assert_eq!(Direction::parse_set("both").unwrap(), Direction::BOTH);
        assert_eq!(Direction::parse_set("upload").unwrap(), [Direction::Upload]);
        assert_eq!(
            Direction::parse_set("download").unwrap(),
            [Direction::Download]
        );
        let e = Direction::parse_set("down").unwrap_err();
        assert!(
            e.contains("\"down\"") && e.contains("both, upload, download"),
            "{e}"
        );
    }

    #[test]
    fn median_and_spread() {
        assert_eq!(s(&[3.0, 1.0, 2.0]).median(), 2.0);
        assert_eq!(s(&[4.0, 1.0, 2.0, 3.0]).median(), 2.5);
        assert!((s(&[90.0, 100.0, 110.0]).spread() - 0.2).abs() < 1e-9);
        assert_eq!(s(&[]).spread(), 0.0);
    }
}
