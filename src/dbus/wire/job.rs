//! A job on the bus, as both sides see it: where job objects live and the
//! states a job goes through (its `State` property and the first argument of
//! its `Finished` signal).

use std::fmt;

use serde::{Deserialize, Serialize};

/// Every job object is under this path: `/org/hlctl/Daemon1/job/<n>`.
pub(crate) const JOBS_PATH: &str = "/org/hlctl/Daemon1/job";

/// The object path of job `id`.
pub(crate) fn job_path(id: u64) -> String {
    format!("{JOBS_PATH}/{id}")
}

/// A job's life: `running` (→ `awaiting-confirmation` → `running`)* →
/// `succeeded` | `failed` | `cancelled`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum JobStatus {
    Running,
    /// A tune's kept changes wait for `Job.Confirm` (commit-confirm); without
    /// it before the deadline they are rolled back.
    AwaitingConfirmation,
    Succeeded,
    Failed,
    Cancelled,
}

impl JobStatus {
    pub(crate) const ALL: [JobStatus; 5] = [
        JobStatus::Running,
        JobStatus::AwaitingConfirmation,
        JobStatus::Succeeded,
        JobStatus::Failed,
        JobStatus::Cancelled,
    ];

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            JobStatus::Running => "running",
            JobStatus::AwaitingConfirmation => "awaiting-confirmation",
            JobStatus::Succeeded => "succeeded",
            JobStatus::Failed => "failed",
            JobStatus::Cancelled => "cancelled",
        }
    }

    /// The state named `s`; `None` for a name this hlctl does not know.
    pub(crate) fn parse(s: &str) -> Option<JobStatus> {
        JobStatus::ALL.into_iter().find(|j| j.as_str() == s)
    }

    /// Still working (running or waiting for confirmation): it can be cancelled.
    pub(crate) fn is_active(self) -> bool {
        matches!(self, JobStatus::Running | JobStatus::AwaitingConfirmation)
    }
}

impl fmt::Display for JobStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_match_serde() {
        for s in JobStatus::ALL {
            assert_eq!(JobStatus::parse(s.as_str()), Some(s));
            assert_eq!(
                serde_json::to_value(s).unwrap(),
                serde_json::Value::from(s.as_str())
            );
        }
        assert_eq!(JobStatus::parse("awaiting confirmation"), None);
        assert!(JobStatus::AwaitingConfirmation.is_active());
        assert!(!JobStatus::Cancelled.is_active());
    }
}
