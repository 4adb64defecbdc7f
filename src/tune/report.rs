//! The tune report: a before/after table per candidate, in text and JSON.

use serde::{Deserialize, Serialize};

use super::decide::DirDelta;
use super::plan::Candidate;
use crate::doctor::Finding;
use crate::host::HostInfo;
pub use crate::path::limit::LimitNote;
use crate::path::measure::Series;

/// The median and spread of one direction's runs.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub median_bps: f64,
    pub spread_percent: f64,
    pub runs_bps: Vec<f64>,
    pub rtt_loaded_ms: Option<f64>,
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

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Both {
    pub upload: Summary,
    pub download: Summary,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepStatus {
    Kept,
    Reverted,
    /// Could not be applied (validation or the kernel refused); nothing changed.
    Failed,
    /// Not tried (dry run, or cancelled before its turn).
    Skipped,
}

/// One setting of a step: before → after.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SettingRow {
    pub setting: String,
    pub before: String,
    pub tried: String,
}

/// One candidate as tried.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Step {
    pub candidate: String,
    pub title: String,
    pub settings: Vec<SettingRow>,
    pub status: StepStatus,
    /// Why it was kept or reverted.
    pub reason: String,
    pub deltas: Vec<DirDelta>,
    /// Benchmark runs per direction the decision took (0: not measured);
    /// fewer than the report's `runs` when the first runs already decided it.
    #[serde(default)]
    pub runs: u32,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
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
pub struct Persisted {
    pub sysctl_file: Option<String>,
    pub nic_state_file: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TuneReport {
    #[serde(flatten)]
    pub host: HostInfo,
    pub timestamp: i64,
    pub interface: String,
    pub peer: String,
    pub method: String,
    pub runs: u32,
    pub min_gain_percent: f64,
    pub rtt_ms: Option<f64>,
    pub findings: Vec<Finding>,
    pub plan: Vec<Candidate>,
    pub plan_notes: Vec<String>,
    pub baseline: Option<Both>,
    pub steps: Vec<Step>,
    /// After the kept changes (the last kept candidate's runs, else the baseline).
    pub after: Option<Both>,
    /// What limits each direction at the end.
    pub limits: Vec<LimitNote>,
    /// The kept changes (what is persisted).
    pub kept: super::change::Change,
    pub persisted: Option<Persisted>,
    pub outcome: Outcome,
    pub notes: Vec<String>,
}

impl TuneReport {
    pub fn kept_steps(&self) -> impl Iterator<Item = &Step> {
        self.steps.iter().filter(|s| s.status == StepStatus::Kept)
    }
}
