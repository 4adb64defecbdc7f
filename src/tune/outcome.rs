//! The tune report: each candidate's before/after figures and verdict, the
//! outcome, kept steps; serialized as JSON (`cli::tune_text` draws the text).

use serde::{Deserialize, Serialize};

use super::decide::DirDelta;
use super::plan::Candidate;
use crate::doctor::Finding;
use crate::host::HostInfo;
pub(crate) use crate::path::limit::LimitNote;
use crate::path::throughput::{Direction, Series};

/// The median and spread of one direction's runs.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Summary {
    pub(crate) median_bps: f64,
    pub(crate) spread_percent: f64,
    pub(crate) runs_bps: Vec<f64>,
    pub(crate) rtt_loaded_ms: Option<f64>,
}

impl From<&Series> for Summary {
    fn from(s: &Series) -> Self {
        Summary {
            median_bps: s.median(),
            spread_percent: s.spread() * 100.0,
            runs_bps: s.samples.iter().map(|x| x.bps).collect(),
            rtt_loaded_ms: s.rtt_loaded_ms(),
        }
    }
}

/// Each direction's summary; a direction the tune did not measure
/// (`--direction`) is absent.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Both {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) upload: Option<Summary>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) download: Option<Summary>,
}

impl Both {
    /// The measured directions' summaries, upload first.
    pub(crate) fn each(&self) -> impl Iterator<Item = (Direction, &Summary)> {
        [
            (Direction::Upload, self.upload.as_ref()),
            (Direction::Download, self.download.as_ref()),
        ]
        .into_iter()
        .filter_map(|(d, s)| Some((d, s?)))
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum StepStatus {
    Kept,
    Reverted,
    /// Could not be applied (validation or the kernel refused); nothing changed.
    Failed,
    /// Not tried (dry run, or cancelled before its turn).
    Skipped,
}

/// One setting of a step: before → after.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct SettingRow {
    pub(crate) setting: String,
    pub(crate) before: String,
    pub(crate) tried: String,
}

/// One candidate as tried.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Step {
    pub(crate) candidate: String,
    pub(crate) title: String,
    pub(crate) settings: Vec<SettingRow>,
    pub(crate) status: StepStatus,
    /// Why it was kept or reverted.
    pub(crate) reason: String,
    pub(crate) deltas: Vec<DirDelta>,
    /// Benchmark runs per direction the decision took (0: not measured);
    /// fewer than the report's `runs` when the first runs already decided it.
    #[serde(default)]
    pub(crate) runs: u32,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Outcome {
    /// The plan only (`--dry-run`).
    DryRun,
    /// Finished; kept changes confirmed.
    Done,
    /// Cancelled: everything restored.
    Cancelled,
    /// Not confirmed in time, or a check failed: everything restored.
    RolledBack,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Persisted {
    pub(crate) sysctl_file: Option<String>,
    pub(crate) nic_state_file: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct TuneReport {
    #[serde(flatten)]
    pub(crate) host: HostInfo,
    pub(crate) timestamp: i64,
    pub(crate) interface: String,
    pub(crate) peer: String,
    pub(crate) method: String,
    pub(crate) runs: u32,
    pub(crate) min_gain_percent: f64,
    pub(crate) rtt_ms: Option<f64>,
    pub(crate) findings: Vec<Finding>,
    pub(crate) plan: Vec<Candidate>,
    pub(crate) plan_notes: Vec<String>,
    pub(crate) baseline: Option<Both>,
    pub(crate) steps: Vec<Step>,
    /// After the kept changes (the last kept candidate's runs, else the baseline).
    pub(crate) after: Option<Both>,
    /// What limits each direction at the end.
    pub(crate) limits: Vec<LimitNote>,
    /// The kept changes (what is persisted).
    pub(crate) kept: super::change::Change,
    pub(crate) persisted: Option<Persisted>,
    pub(crate) outcome: Outcome,
    pub(crate) notes: Vec<String>,
}

impl TuneReport {
    pub(crate) fn kept_steps(&self) -> impl Iterator<Item = &Step> {
        self.steps.iter().filter(|s| s.status == StepStatus::Kept)
    }
}
