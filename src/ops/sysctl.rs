//! The operations on the network sysctls: `sysctl [KEY...]` and
//! `sysctl KEY=VALUE...` (validate all, write, read back, restore on
//! failure; persist to sysctl.d when asked).

use crate::paths::Paths;
use crate::sysctl::{self, Entry, SysctlError};

/// The given keys, or the tuning set.
pub(crate) fn show(paths: &Paths, keys: &[String]) -> Result<Vec<Entry>, SysctlError> {
    sysctl::show(paths, keys)
}

/// Set every assignment, or none.
pub(crate) fn set(
    paths: &Paths,
    assignments: &[(String, String)],
    dry_run: bool,
    persist: bool,
) -> Result<sysctl::set::SysctlReply, SysctlError> {
    sysctl::set::set(paths, assignments, dry_run, persist)
}
