//! What the CLI says about a history row of work done in this process: a
//! failure to store warns on stderr and goes on (the result was printed); an
//! unprivileged user's run, whose state directory is not theirs to write,
//! stores nothing, silently. Rows of work hlctld did are hlctld's to write.

use crate::history::NewResult;
use crate::ops::bench::Ran;
use crate::ops::record::{Requester, Stored, store as store_as};
use crate::paths::Paths;

fn warn(stored: &Stored) {
    if let Some(w) = stored.warning() {
        eprintln!("hlctl: warning: {w}");
    }
}

/// Store `row` of work done in this process, for this process's user.
pub(crate) fn store(paths: &Paths, row: NewResult) {
    warn(&store_as(paths, Requester::this_process(), row));
}

/// The report of an operation run in this process, after warning when its
/// row could not be stored.
pub(crate) fn warn_unstored<R>(ran: Ran<R>) -> R {
    warn(&ran.stored);
    ran.report
}
