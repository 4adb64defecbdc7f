//! What the doctor reports: findings backed by evidence, checks that passed,
//! and checks that could not be made here (with the reason).

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Severity {
    /// Worth knowing; may cost performance in some workloads.
    Info,
    /// Costs performance or reliability.
    Warning,
    /// Broken: the link or path cannot perform as it should.
    Critical,
}

impl std::fmt::Display for Severity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Critical => "critical",
        })
    }
}

/// One value read from the machine that a finding rests on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Evidence {
    pub(crate) name: String,
    pub(crate) value: String,
}

/// A problem the data shows.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Finding {
    /// Stable identifier (`link-half-duplex`, `offload-off`, ...).
    pub(crate) id: String,
    pub(crate) severity: Severity,
    /// The interface concerned; `None` for host-wide findings (sysctls, CPU, mounts).
    pub(crate) interface: Option<String>,
    /// One line: what is wrong.
    pub(crate) title: String,
    /// The values read that show it.
    pub(crate) evidence: Vec<Evidence>,
    /// Why it matters.
    pub(crate) why: String,
    /// Exact lines that fix it (`hlctl set ...`, `hlctl sysctl ...`); lines
    /// starting with `#` are actions hlctl cannot take (cables, the peer).
    pub(crate) fix: Vec<String>,
}

impl Finding {
    pub(crate) fn new(
        id: &str,
        severity: Severity,
        interface: Option<&str>,
        title: String,
    ) -> Self {
        Finding {
            id: id.to_string(),
            severity,
            interface: interface.map(str::to_string),
            title,
            evidence: Vec::new(),
            why: String::new(),
            fix: Vec::new(),
        }
    }

    pub(crate) fn evidence(mut self, name: &str, value: impl ToString) -> Self {
        self.evidence.push(Evidence {
            name: name.to_string(),
            value: value.to_string(),
        });
        self
    }

    pub(crate) fn why(mut self, why: &str) -> Self {
        self.why = why.to_string();
        self
    }

    pub(crate) fn fix(mut self, line: impl Into<String>) -> Self {
        self.fix.push(line.into());
        self
    }
}

/// A check that passed, or one that could not be made.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Check {
    pub(crate) check: String,
    pub(crate) interface: Option<String>,
    /// Passed: what was seen. Not checked: why not.
    pub(crate) detail: String,
}

/// Everything the checks produced.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Outcome {
    pub(crate) findings: Vec<Finding>,
    pub(crate) passed: Vec<Check>,
    pub(crate) not_checked: Vec<Check>,
}

impl Outcome {
    pub(crate) fn find(&mut self, f: Finding) {
        self.findings.push(f);
    }

    pub(crate) fn pass(&mut self, check: &str, iface: Option<&str>, detail: impl Into<String>) {
        self.passed.push(Check {
            check: check.to_string(),
            interface: iface.map(str::to_string),
            detail: detail.into(),
        });
    }

    pub(crate) fn skip(&mut self, check: &str, iface: Option<&str>, why: impl Into<String>) {
        self.not_checked.push(Check {
            check: check.to_string(),
            interface: iface.map(str::to_string),
            detail: why.into(),
        });
    }

    /// Findings first by severity (worst first), then in check order.
    pub(crate) fn sort(&mut self) {
        self.findings.sort_by_key(|f| std::cmp::Reverse(f.severity));
    }
}
