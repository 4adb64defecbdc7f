//! Storing an operation's result in the history, under the uid of whoever
//! asked for it.

use crate::history::{History, HistoryError, NewResult};
use crate::paths::Paths;

/// Who asked for an operation, and whether its result goes into the
/// shared history.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Requester {
    /// The uid that asked: hlctld's caller, or this process's user.
    pub(crate) uid: u32,
    /// Store the result. hlctld stores only what an authorized caller
    /// started; see `dbus::daemon::manager`.
    pub(crate) record: bool,
}

impl Requester {
    /// This process's user, recording (an in-process run).
    pub(crate) fn this_process() -> Requester {
        Requester {
            uid: nix::unistd::getuid().as_raw(),
            record: true,
        }
    }
}

/// What became of a result's history row.
#[derive(Debug)]
pub(crate) enum Stored {
    /// Stored.
    Written,
    /// Not asked to store it.
    NotAsked,
    /// The state directory is not ours to write (an unprivileged user in
    /// process): nothing stored, nothing to warn about.
    NotWritable,
    /// Storing failed.
    Failed(HistoryError),
}

/// The key of a job's result that carries [`Stored::warning`] from hlctld
/// to its client, which says it and exits 1 as an in-process run does.
pub(crate) const NOT_STORED_KEY: &str = "not_stored";

impl Stored {
    /// `result` (a job's JSON object) with the warning under
    /// [`NOT_STORED_KEY`] when the row could not be stored.
    pub(crate) fn marked(&self, mut result: serde_json::Value) -> serde_json::Value {
        if let (Some(w), Some(o)) = (self.warning(), result.as_object_mut()) {
            o.insert(NOT_STORED_KEY.into(), w.into());
        }
        result
    }

    /// The warning a front end shows, when there is one.
    pub(crate) fn warning(&self) -> Option<String> {
        match self {
            Stored::Failed(e) => Some(format!(
                "the result could not be stored in the history: {e}"
            )),
            _ => None,
        }
    }
}

/// Store `row` as asked by `who`.
pub(crate) fn store(paths: &Paths, who: Requester, mut row: NewResult) -> Stored {
    if !who.record {
        return Stored::NotAsked;
    }
    row.uid = Some(who.uid);
    match History::open(&paths.state_dir).and_then(|mut h| h.add(&row)) {
        Ok(_) => Stored::Written,
        Err(HistoryError::Open { .. }) if !nix::unistd::Uid::effective().is_root() => {
            Stored::NotWritable
        }
        Err(e) => Stored::Failed(e.into_write()),
    }
}
