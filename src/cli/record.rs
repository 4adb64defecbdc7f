//! What the CLI says about a history row of work done in this process: a
//! failure to store warns on stderr and goes on (the result was printed); an
//! unprivileged user's run, whose state directory is not theirs to write,
//! stores nothing, silently. Rows of work hlctld did are hlctld's to write.

use crate::ops::bench::Ran;
use crate::ops::record::Stored;

fn warn(stored: &Stored) {
    if let Some(w) = stored.warning() {
        eprintln!("hlctl: warning: {w}");
    }
}

/// The report of an operation run in this process, after warning when its
/// row could not be stored.
pub(crate) fn warn_unstored<R>(ran: Ran<R>) -> R {
    warn(&ran.stored);
    ran.report
}
