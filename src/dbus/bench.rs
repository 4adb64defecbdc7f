//! Benchmarks the daemon runs as jobs: parameter decoding and the work closure
//! for each kind.

use super::error::{Error, Result};
use super::job::Work;

/// The benchmark kinds this daemon runs.
pub const KINDS: &[&str] = &[];

/// Decode `params` (a JSON object) for `kind` and return the work to run.
pub fn prepare(kind: &str, params: &str) -> Result<Work> {
    let _ = params;
    Err(Error::NotSupported(format!(
        "benchmark {kind:?} is not offered by this daemon (offered: {})",
        if KINDS.is_empty() {
            "none".to_string()
        } else {
            KINDS.join(", ")
        }
    )))
}
