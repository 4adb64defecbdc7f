//! Ctrl-C / SIGTERM → [`Cancel`]: the first signal asks the running work to
//! stop cleanly (a benchmark removes its files, tells its peer and prints a
//! summary); a second one ends the process as usual (the handler resets itself).

use std::sync::OnceLock;

use nix::sys::signal::{SaFlags, SigAction, SigHandler, SigSet, Signal, sigaction};

use crate::bench::progress::Cancel;

static TOKEN: OnceLock<Cancel> = OnceLock::new();

extern "C" fn on_signal(_: libc::c_int) {
    // Only an atomic load and an atomic store: async-signal-safe.
    if let Some(token) = TOKEN.get() {
        token.cancel();
    }
}

/// Install the SIGINT and SIGTERM handlers (once per process) and return the token they cancel.
pub(crate) fn cancel_on_interrupt() -> Cancel {
    cancel_on(&[Signal::SIGINT, Signal::SIGTERM])
}

/// As [`cancel_on_interrupt`], and SIGHUP too (a closed terminal must not
/// keep a change nobody confirmed: `set --try`).
pub(crate) fn cancel_on_interrupt_or_hangup() -> Cancel {
    cancel_on(&[Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP])
}

fn cancel_on(signals: &[Signal]) -> Cancel {
    let token = TOKEN.get_or_init(Cancel::new).clone();
    let action = SigAction::new(
        SigHandler::Handler(on_signal),
        SaFlags::SA_RESETHAND | SaFlags::SA_RESTART,
        SigSet::empty(),
    );
    for &sig in signals {
        // SAFETY: the handler only touches an atomic through a fully initialised OnceLock.
        if let Err(e) = unsafe { sigaction(sig, &action) } {
            tracing::warn!("cannot install the {sig} handler: {e}");
        }
    }
    token
}
