//! Ctrl-C → [`Cancel`]: the first SIGINT asks the running benchmark to stop cleanly
//! (it removes its files and prints a summary); a second one kills the process as usual.

use std::sync::OnceLock;

use nix::sys::signal::{SaFlags, SigAction, SigHandler, SigSet, Signal, sigaction};

use crate::bench::progress::Cancel;

static TOKEN: OnceLock<Cancel> = OnceLock::new();

extern "C" fn on_sigint(_: libc::c_int) {
    // Only an atomic load and an atomic store: async-signal-safe.
    if let Some(token) = TOKEN.get() {
        token.cancel();
    }
}

/// Install the SIGINT handler (once per process) and return the token it cancels.
pub fn cancel_on_sigint() -> Cancel {
    let token = TOKEN.get_or_init(Cancel::new).clone();
    let action = SigAction::new(
        SigHandler::Handler(on_sigint),
        SaFlags::SA_RESETHAND | SaFlags::SA_RESTART,
        SigSet::empty(),
    );
    // SAFETY: the handler only touches an atomic through a fully initialised OnceLock.
    if let Err(e) = unsafe { sigaction(Signal::SIGINT, &action) } {
        tracing::warn!("cannot install the Ctrl-C handler: {e}");
    }
    token
}
