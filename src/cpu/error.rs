//! A `/proc` file that does not parse: which file, which line, what was wrong.

/// A line of a `/proc` file that is not what the kernel prints.
#[derive(Debug, thiserror::Error, PartialEq)]
#[error("{file}: line {line}: {what}")]
pub(crate) struct ProcError {
    pub(crate) file: &'static str,
    /// 1-based.
    pub(crate) line: usize,
    pub(crate) what: String,
}

impl ProcError {
    pub(crate) fn new(file: &'static str, line: usize, what: impl Into<String>) -> Self {
        ProcError {
            file,
            line,
            what: what.into(),
        }
    }
}

/// The CPU ids of a `CPU0 CPU1 ... CPUn` header line (`/proc/interrupts`,
/// `/proc/softirqs`): with CPUs offline the ids skip (`CPU0 CPU2`).
pub(crate) fn cpu_header(file: &'static str, line: &str) -> Result<Vec<u32>, ProcError> {
    let ids: Result<Vec<u32>, _> = line
        .split_whitespace()
        .map(|w| {
            w.strip_prefix("CPU")
                .and_then(|n| n.parse::<u32>().ok())
                .ok_or_else(|| ProcError::new(file, 1, format!("{w:?} is not CPUn in the header")))
        })
        .collect();
    let ids = ids?;
    if ids.is_empty() {
        return Err(ProcError::new(file, 1, "no CPU in the header"));
    }
    Ok(ids)
}
