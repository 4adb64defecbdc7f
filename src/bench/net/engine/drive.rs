//! The loop that runs while data flows: interval ticks, the omit period, the
//! client's deadline, and the peer's messages on the control connection.

use std::io::Read;
use std::net::TcpStream;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crate::bench::progress::{Cancel, Progress};

use super::super::control::{self, State, is_reset, is_timeout};
use super::super::error::NetError;
use super::super::figures::{IntervalText, Side};
use super::super::stream::{Role, WorkerEnd};
use super::{Engine, SAMPLE_EVERY, WATCH_EVERY};

/// How the driver waits for the end of the test.
pub(crate) struct DriveSpec {
    pub(crate) side: Side,
    /// Interval progress every `tick`, as `lines` formats it; `None`: none.
    pub(crate) tick: Option<Duration>,
    pub(crate) lines: IntervalText,
    /// Server: drop the test if TEST_END has not come by then.
    pub(crate) safety: Option<Duration>,
    /// Server: drop the test if nothing arrives on the receiving streams for this long.
    pub(crate) stall: Option<Duration>,
}

impl Engine {
    /// A stream that ended on its own while the test runs (client side check).
    pub(super) fn early_failure(&mut self) -> Option<NetError> {
        for t in &mut self.streams {
            let stopped = match t.role {
                Role::Send => {
                    self.flags.stop_send.load(Ordering::Relaxed) || self.flags.limit_reached()
                }
                Role::Recv => self.flags.stop_recv.load(Ordering::Relaxed),
            };
            if stopped || !t.handle.as_ref().is_some_and(|h| h.is_finished()) {
                continue;
            }
            let end = t.handle.take().map(|h| h.join());
            let source = match end {
                Some(Ok(WorkerEnd::Failed(e))) => e,
                Some(Ok(WorkerEnd::PeerClosed)) => std::io::Error::new(
                    std::io::ErrorKind::ConnectionReset,
                    "the peer closed the stream before the end of the test",
                ),
                Some(Ok(WorkerEnd::Stopped)) | None => continue,
                Some(Err(_)) => std::io::Error::other("the stream's thread panicked"),
            };
            return Some(NetError::Stream {
                stream: t.id,
                source,
            });
        }
        None
    }

    /// Run until the end of the test: the client's timer (omit + time), or the
    /// server's TEST_END. Reports intervals on the way; watches the control
    /// connection for the peer's messages.
    pub(crate) fn drive(
        &mut self,
        ctrl: &TcpStream,
        spec: &DriveSpec,
        progress: &dyn Progress,
        cancel: &Cancel,
    ) -> Result<(), NetError> {
        self.lines = spec.tick.map(|_| spec.lines);
        self.tick = spec.tick.unwrap_or(SAMPLE_EVERY);
        let omit = Duration::from_secs(self.params.omit_s as u64);
        let run_for = omit + Duration::from_secs(self.params.time_s as u64);
        let deadline = (spec.side == Side::Client).then_some(self.started + run_for);
        let safety = spec.safety.map(|s| self.started + s);
        let mut last_rx = (self.received_total(), Instant::now());
        let omit_end = self.started + omit;
        let schedule = |e: &Engine| -> Instant {
            let t = e.last_tick + e.tick;
            if e.omitting { t.min(omit_end) } else { t }
        };
        let mut next_tick = schedule(self);
        loop {
            if cancel.is_cancelled() {
                return Err(NetError::Cancelled);
            }
            let now = Instant::now();
            if self.omitting && now >= omit_end {
                self.end_omit(progress);
                next_tick = schedule(self);
                continue;
            }
            if deadline.is_some_and(|d| now >= d) {
                return Ok(());
            }
            if now >= next_tick {
                match deadline {
                    // A tick in the last tenth of an interval: leave it to `end_test`.
                    Some(d) if next_tick + self.tick / 10 >= d => next_tick = d + self.tick,
                    _ => {
                        self.sample(progress);
                        next_tick = schedule(self);
                    }
                }
            }
            if spec.side == Side::Client {
                if let Some(e) = self.early_failure() {
                    // A server that stops closes its streams right after telling
                    // us why; prefer its message to the broken stream.
                    if control::wait_readable(ctrl, Duration::from_millis(200)) {
                        let mut b = [0u8; 1];
                        if let Ok(1) = (&*ctrl).read(&mut b) {
                            control::check_peer_failure(
                                ctrl,
                                b[0],
                                Instant::now() + Duration::from_secs(1),
                            )?;
                        }
                    }
                    return Err(e);
                }
            } else {
                if safety.is_some_and(|s| now >= s) {
                    return Err(NetError::Timeout {
                        what: "the client's TEST_END".into(),
                        after: now.duration_since(self.started),
                    });
                }
                if let Some(stall) = spec.stall {
                    let rx = self.received_total();
                    if rx != last_rx.0 {
                        last_rx = (rx, now);
                    } else if self.has_role(Role::Recv) && now.duration_since(last_rx.1) >= stall {
                        return Err(NetError::Timeout {
                            what: "data from the client".into(),
                            after: stall,
                        });
                    }
                }
            }
            let mut wake = next_tick.min(now + WATCH_EVERY);
            if let Some(d) = deadline {
                wake = wake.min(d);
            }
            if self.omitting {
                wake = wake.min(omit_end);
            }
            let wait = wake.saturating_duration_since(now);
            if !control::wait_readable(ctrl, wait) {
                continue;
            }
            ctrl.set_read_timeout(Some(Duration::from_millis(100)))
                .map_err(|e| NetError::io("waiting on the control connection", e))?;
            let mut b = [0u8; 1];
            match (&*ctrl).read(&mut b) {
                Ok(0) => {
                    return Err(NetError::ControlClosed {
                        during: "the test".into(),
                    });
                }
                Ok(_) => match spec.side {
                    Side::Client => {
                        control::check_peer_failure(
                            ctrl,
                            b[0],
                            Instant::now() + Duration::from_secs(5),
                        )?;
                        return Err(NetError::Protocol {
                            expected: "no control message while the test runs".into(),
                            received: control::describe_byte(b[0]),
                        });
                    }
                    Side::Server => {
                        return match State::from_byte(b[0]) {
                            Some(State::TestEnd) => Ok(()),
                            Some(State::ClientTerminate) => Err(NetError::ClientTerminated),
                            _ => Err(NetError::Protocol {
                                expected: State::TestEnd.describe(),
                                received: control::describe_byte(b[0]),
                            }),
                        };
                    }
                },
                Err(e) if is_timeout(&e) || e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) if is_reset(&e) => {
                    return Err(NetError::ControlClosed {
                        during: "the test".into(),
                    });
                }
                Err(e) => return Err(NetError::io("waiting on the control connection", e)),
            }
        }
    }
}
