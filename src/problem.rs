//! One problem with one requested setting: what, which value, and what is allowed.
//! Validation collects every problem before anything is changed.

use serde::Serialize;

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Problem {
    /// The setting as the user names it (`ring rx`, `net.ipv4.tcp_rmem`).
    pub(crate) setting: String,
    pub(crate) value: Option<String>,
    /// What is wrong and what is allowed.
    pub(crate) message: String,
}

impl Problem {
    pub(crate) fn new(
        setting: impl Into<String>,
        value: Option<&str>,
        message: impl Into<String>,
    ) -> Self {
        Self {
            setting: setting.into(),
            value: value.map(str::to_string),
            message: message.into(),
        }
    }
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.value {
            Some(v) => write!(f, "{} {}: {}", self.setting, v, self.message),
            None => write!(f, "{}: {}", self.setting, self.message),
        }
    }
}

/// Join problems for an error message, one per line.
pub(crate) fn join(problems: &[Problem]) -> String {
    problems
        .iter()
        .map(|p| format!("  - {p}"))
        .collect::<Vec<_>>()
        .join("\n")
}
