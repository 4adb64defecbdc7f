//! Waiting for a busy peer: the one bounded back-off every client of a peer
//! uses (`check`, `bench net`, `doctor` and `tune`). A peer that answers
//! ACCESS_DENIED serves someone else (or measures itself); it is tried again
//! after a random wait until the window closes, and each wait is said
//! through the caller's progress. A figure is only ever one whose test the
//! peer accepted alone.

use std::time::{Duration, Instant};

use crate::bench::progress::{Cancel, Progress, ProgressEvent};

use super::client::{ClientConfig, run_client_then};
use super::error::NetError;
use super::summary::NetReport;

/// How long to wait before trying a busy peer again.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Backoff {
    pub(crate) min: Duration,
    pub(crate) max: Duration,
    /// Give up when the next try would start after this.
    pub(crate) window: Duration,
}

impl Backoff {
    pub(crate) fn for_window(window_s: u64) -> Backoff {
        Backoff {
            min: Duration::from_millis(500),
            max: Duration::from_secs(window_s.clamp(2, 60) / 2).max(Duration::from_secs(1)),
            window: Duration::from_secs(window_s),
        }
    }

    /// A random wait in `[min, max]`.
    fn pick(&self) -> Duration {
        let mut b = [0u8; 8];
        // SAFETY: getrandom writes at most the buffer's length.
        let n = unsafe { libc::getrandom(b.as_mut_ptr().cast(), b.len(), 0) };
        let r = if n == 8 {
            u64::from_ne_bytes(b)
        } else {
            u64::from(std::process::id()) ^ crate::host::now_unix() as u64
        };
        let span = self.max.saturating_sub(self.min).as_millis() as u64;
        self.min + Duration::from_millis(if span == 0 { 0 } else { r % (span + 1) })
    }
}

/// One client's waiting: when it started, how often the peer was busy.
#[derive(Debug)]
pub(crate) struct BusyWait {
    backoff: Backoff,
    start: Instant,
    /// Times the peer was busy and was tried again.
    pub(crate) retries: u32,
}

impl BusyWait {
    pub(crate) fn new(backoff: Backoff) -> BusyWait {
        BusyWait {
            backoff,
            start: Instant::now(),
            retries: 0,
        }
    }

    /// After a busy answer from `peer`: say so through `progress` and wait a
    /// random back-off; [`NetError::BusyTooLong`] when the next try would
    /// start after the window, [`NetError::Cancelled`] when cancelled.
    pub(crate) fn wait(
        &mut self,
        peer: &str,
        progress: &dyn Progress,
        cancel: &Cancel,
    ) -> Result<(), NetError> {
        let wait = self.backoff.pick();
        let window = self.backoff.window;
        if self.start.elapsed() + wait > window {
            return Err(NetError::BusyTooLong {
                peer: peer.to_string(),
                window_s: window.as_secs(),
                tries: self.retries + 1,
            });
        }
        self.retries += 1;
        let left = window.saturating_sub(self.start.elapsed());
        progress.report(ProgressEvent {
            fraction: 0.0,
            message: format!(
                "{peer} is busy running another test; waiting {:.1} s to try again \
                 (try {}, giving up in {} s)",
                wait.as_secs_f64(),
                self.retries + 1,
                left.as_secs()
            ),
        });
        let until = Instant::now() + wait;
        while Instant::now() < until {
            if cancel.is_cancelled() {
                return Err(NetError::Cancelled);
            }
            std::thread::sleep(until.saturating_duration_since(Instant::now()).min(STEP));
        }
        Ok(())
    }
}

/// How often a wait looks at its cancel token.
const STEP: Duration = Duration::from_millis(100);

/// [`run_client_then`], trying a busy peer again within `cfg.busy_window`
/// (none: a busy peer fails at once, as [`NetError::ServerBusy`]); returns
/// the report and the number of busy retries.
pub fn run_client_waiting(
    cfg: &ClientConfig,
    progress: &dyn Progress,
    cancel: &Cancel,
    accepted: &mut dyn FnMut(),
) -> Result<(NetReport, u32), NetError> {
    let mut busy = BusyWait::new(Backoff::for_window(cfg.busy_window.as_secs()));
    loop {
        match run_client_then(cfg, progress, cancel, accepted) {
            Ok(r) => return Ok((r, busy.retries)),
            Err(NetError::ServerBusy) if !cfg.busy_window.is_zero() => {
                busy.wait(&cfg.peer_label(), progress, cancel)?
            }
            Err(e) => return Err(e),
        }
    }
}
