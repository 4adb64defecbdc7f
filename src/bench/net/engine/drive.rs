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
    /// Server: drop the test if no data moves on its streams (either way) for this long.
    pub(crate) stall: Option<Duration>,
    /// Server: end the test when its streams move more bit/s than this.
    pub(crate) max_rate_bps: Option<u64>,
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
        let mut at = self.timeline(spec);
        loop {
            if cancel.is_cancelled() {
                return Err(NetError::Cancelled);
            }
            let now = Instant::now();
            if self.omitting && now >= at.omit_end {
                self.end_omit(progress);
                at.schedule(self);
                continue;
            }
            if at.deadline.is_some_and(|d| now >= d) {
                return Ok(());
            }
            if now >= at.next_tick {
                self.tick_due(&mut at, progress);
            }
            match spec.side {
                Side::Client => self.check_client(ctrl)?,
                Side::Server => self.check_server(spec, &mut at, now)?,
            }
            if watch_control(ctrl, spec.side, at.wait(self.omitting, now))? {
                return Ok(());
            }
        }
    }

    /// The instants `drive` starts with.
    fn timeline(&self, spec: &DriveSpec) -> Timeline {
        let omit = Duration::from_secs(self.params.omit_s as u64);
        let run_for = omit + Duration::from_secs(self.params.time_s as u64);
        let mut at = Timeline {
            deadline: (spec.side == Side::Client).then_some(self.started + run_for),
            safety: spec.safety.map(|s| self.started + s),
            last_moved: (self.moved_total(), Instant::now()),
            omit_end: self.started + omit,
            next_tick: self.started,
        };
        at.schedule(self);
        at
    }

    /// An interval tick is due: sample it, unless it falls in the last tenth
    /// of an interval before the client's deadline (left to `end_test`).
    fn tick_due(&mut self, at: &mut Timeline, progress: &dyn Progress) {
        match at.deadline {
            Some(d) if at.next_tick + self.tick / 10 >= d => at.next_tick = d + self.tick,
            _ => {
                self.sample(progress);
                at.schedule(self);
            }
        }
    }

    /// Client: a stream that ended on its own ends the test.
    fn check_client(&mut self, ctrl: &TcpStream) -> Result<(), NetError> {
        let Some(e) = self.early_failure() else {
            return Ok(());
        };
        // A server that stops closes its streams right after telling
        // us why; prefer its message to the broken stream.
        if control::wait_readable(ctrl, Duration::from_millis(200)) {
            let mut b = [0u8; 1];
            if let Ok(1) = (&*ctrl).read(&mut b) {
                control::check_peer_failure(ctrl, b[0], Instant::now() + Duration::from_secs(1))?;
            }
        }
        Err(e)
    }

    /// Server: give up when TEST_END is overdue or the streams stall.
    fn check_server(
        &self,
        spec: &DriveSpec,
        at: &mut Timeline,
        now: Instant,
    ) -> Result<(), NetError> {
        if at.safety.is_some_and(|s| now >= s) {
            return Err(NetError::Timeout {
                what: "the client's TEST_END".into(),
                after: now.duration_since(self.started),
            });
        }
        if let Some(e) = spec.max_rate_bps.and_then(|limit| {
            super::super::limits::over_rate(
                limit,
                self.moved_total(),
                now.duration_since(self.started),
            )
        }) {
            return Err(e);
        }
        if let Some(stall) = spec.stall {
            // Data moving either way: a client that neither sends nor reads
            // (and sends no control message) holds no server past `stall`.
            let moved = self.moved_total();
            if moved != at.last_moved.0 {
                at.last_moved = (moved, now);
            } else if now.duration_since(at.last_moved.1) >= stall {
                return Err(NetError::Timeout {
                    what: if self.has_role(Role::Recv) {
                        "data from the client".into()
                    } else {
                        "the client reading our data".into()
                    },
                    after: stall,
                });
            }
        }
        Ok(())
    }
}

/// The instants `drive` waits for.
struct Timeline {
    /// Client: the end of the test.
    deadline: Option<Instant>,
    /// Server: drop the test if TEST_END has not come by then.
    safety: Option<Instant>,
    /// Server: the moved total (sent and received), and when it last changed.
    last_moved: (u64, Instant),
    omit_end: Instant,
    next_tick: Instant,
}

impl Timeline {
    /// The next interval tick (cut short at the end of the omit period).
    fn schedule(&mut self, e: &Engine) {
        let t = e.last_tick + e.tick;
        self.next_tick = if e.omitting { t.min(self.omit_end) } else { t };
    }

    /// How long to watch the control connection before the next thing to do.
    fn wait(&self, omitting: bool, now: Instant) -> Duration {
        let mut wake = self.next_tick.min(now + WATCH_EVERY);
        if let Some(d) = self.deadline {
            wake = wake.min(d);
        }
        if omitting {
            wake = wake.min(self.omit_end);
        }
        wake.saturating_duration_since(now)
    }
}

/// Watch the control connection for up to `wait`. True when the test ended
/// (the server got TEST_END); an error for anything else the peer sent or did.
fn watch_control(ctrl: &TcpStream, side: Side, wait: Duration) -> Result<bool, NetError> {
    if !control::wait_readable(ctrl, wait) {
        return Ok(false);
    }
    ctrl.set_read_timeout(Some(Duration::from_millis(100)))
        .map_err(|e| NetError::io("waiting on the control connection", e))?;
    let mut b = [0u8; 1];
    match (&*ctrl).read(&mut b) {
        Ok(0) => Err(NetError::ControlClosed {
            during: "the test".into(),
        }),
        Ok(_) => peer_message(ctrl, side, b[0]).map(|()| true),
        Err(e) if is_timeout(&e) || e.kind() == std::io::ErrorKind::Interrupted => Ok(false),
        Err(e) if is_reset(&e) => Err(NetError::ControlClosed {
            during: "the test".into(),
        }),
        Err(e) => Err(NetError::io("waiting on the control connection", e)),
    }
}

/// A control message while the test runs: the server's TEST_END is the end;
/// anything else is an error.
fn peer_message(ctrl: &TcpStream, side: Side, byte: u8) -> Result<(), NetError> {
    match side {
        Side::Client => {
            control::check_peer_failure(ctrl, byte, Instant::now() + Duration::from_secs(5))?;
            Err(NetError::Protocol {
                expected: "no control message while the test runs".into(),
                received: control::describe_byte(byte),
            })
        }
        Side::Server => match State::from_byte(byte) {
            Some(State::TestEnd) => Ok(()),
            Some(State::ClientTerminate) => Err(NetError::ClientTerminated),
            _ => Err(NetError::Protocol {
                expected: State::TestEnd.describe(),
                received: control::describe_byte(byte),
            }),
        },
    }
}
