//! A result that could not be stored: said once it is known (here or by
//! hlctld), and the verb then exits 1, as a change that was applied but
//! could not be persisted does.

use std::sync::atomic::{AtomicBool, Ordering};

use super::exit;

/// Set once a result of this process could not be stored.
static UNSTORED: AtomicBool = AtomicBool::new(false);

/// Say that a result could not be stored; the verb then exits 1.
pub(crate) fn say(warning: &str) {
    eprintln!("hlctl: {warning}");
    UNSTORED.store(true, Ordering::Relaxed);
}

/// The exit code of a verb that returned `code`: one that did its work but
/// could not store its result failed.
pub(crate) fn exit_code(code: i32) -> i32 {
    if code == exit::OK && UNSTORED.load(Ordering::Relaxed) {
        exit::FAILED
    } else {
        code
    }
}
