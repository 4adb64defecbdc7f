//! Ctrl-C / SIGTERM → a [`Cancel`] token, so a benchmark stops cleanly and
//! still tells its peer; a second Ctrl-C exits at once.

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use nix::sys::signal::{SaFlags, SigAction, SigHandler, SigSet, Signal, sigaction};

use crate::bench::progress::Cancel;

static HITS: AtomicU32 = AtomicU32::new(0);

extern "C" fn on_signal(_: libc::c_int) {
    if HITS.fetch_add(1, Ordering::SeqCst) >= 1 {
        // SAFETY: _exit is async-signal-safe.
        unsafe { libc::_exit(130) };
    }
}

/// Install the handlers and return a token cancelled by the first signal.
pub fn cancel_on_interrupt() -> Cancel {
    let action = SigAction::new(
        SigHandler::Handler(on_signal),
        SaFlags::SA_RESTART,
        SigSet::empty(),
    );
    for sig in [Signal::SIGINT, Signal::SIGTERM] {
        // SAFETY: the handler only touches an atomic and calls _exit.
        let _ = unsafe { sigaction(sig, &action) };
    }
    let cancel = Cancel::new();
    let token = cancel.clone();
    std::thread::spawn(move || {
        while HITS.load(Ordering::SeqCst) == 0 {
            std::thread::sleep(Duration::from_millis(50));
        }
        token.cancel();
    });
    cancel
}
