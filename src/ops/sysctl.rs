//! The operations on the network sysctls: `sysctl [KEY...]` and
//! `sysctl KEY=VALUE...` (validate all, write, read back, restore on
//! failure; persist to sysctl.d when asked).
//!
//! Several keys changed at once are one change set: journalled like a NIC
//! change set ([`crate::ops::nic`]), the values they overwrite written to
//! `journal-set:sysctl.json` before the first write and the journal removed
//! once the writes are done, so that a crash between two writes (the
//! namespace half changed) is put back by whoever starts next (hlctld,
//! `hlctl reapply`). One key needs none: its write is whole or not at all.

use tracing::warn;

use crate::ops::nic::SET_PREFIX;
use crate::paths::Paths;
use crate::sysctl::set::{Guard, Unguarded};
use crate::sysctl::{self, Entry, SysctlError};
use crate::tune::change::Change;
use crate::tune::checkpoint::{Checkpoint, Journal, Phase};

/// The key of the journal's file (`journal-set:sysctl.json`).
const JOURNAL_KEY: &str = "set:sysctl";
/// Long enough for any set of writes; a running hlctld's watchdog restores
/// the journal of a dead `hlctl --local sysctl` once it passes.
const JOURNAL_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(300);

/// The given keys, or the tuning set.
pub(crate) fn show(paths: &Paths, keys: &[String]) -> Result<Vec<Entry>, SysctlError> {
    sysctl::show(paths, keys)
}

/// Set every assignment, or none; journalled when two or more keys change.
pub(crate) fn set(
    paths: &Paths,
    assignments: &[(String, String)],
    dry_run: bool,
    persist: bool,
) -> Result<sysctl::set::SysctlReply, SysctlError> {
    let mut journal = SetJournal { paths, open: None };
    sysctl::set::set(paths, assignments, dry_run, persist, &mut journal)
}

/// [`set`] inside a try's journal, which already holds the snapshot (and
/// whose lock it runs under): no journal of its own.
pub(crate) fn set_in_try(
    paths: &Paths,
    assignments: &[(String, String)],
) -> Result<sysctl::set::SysctlReply, SysctlError> {
    sysctl::set::set(paths, assignments, false, false, &mut Unguarded)
}

/// The journal of a set's writes, when two or more keys change. One that
/// cannot be written (a full or read-only disk) does not stop the change:
/// it runs as it did before there was one, and says so.
struct SetJournal<'a> {
    paths: &'a Paths,
    open: Option<Checkpoint>,
}

impl Guard for SetJournal<'_> {
    fn begin(&mut self, plan: &[sysctl::Change]) {
        let changing: std::collections::BTreeMap<String, String> = plan
            .iter()
            .filter(|c| c.before != c.requested)
            .map(|c| (c.key.clone(), c.before.clone()))
            .collect();
        if changing.len() < 2 {
            return;
        }
        let first = Journal {
            phase: Phase::Trying {
                candidate: "sysctl".into(),
            },
            original: Change {
                sysctl: changing,
                ..Default::default()
            },
            ..Checkpoint::fresh("sysctl", None, JOURNAL_TIMEOUT, SET_PREFIX)
        };
        match Checkpoint::begin_keyed(self.paths, JOURNAL_KEY, JOURNAL_TIMEOUT, first) {
            Ok(cp) => self.open = Some(cp),
            Err(e) => warn!(
                "the sysctl change set is not journalled (a crash half-way would leave it half applied): {e}"
            ),
        }
    }

    fn end(&mut self) {
        if let Some(cp) = self.open.take()
            && let Err(e) = cp.finish()
        {
            warn!("the sysctl change set's journal: {e}");
        }
    }
}
