//! Progress reporting and cancellation shared by every long-running operation.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// A cancellation token: cheap to clone, checked by workers between units of work.
#[derive(Clone, Debug, Default)]
pub struct Cancel(Arc<AtomicBool>);

impl Cancel {
    pub fn new() -> Self {
        Self::default()
    }
    /// Ask every holder of this token to stop as soon as it can.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::SeqCst);
    }
    pub(crate) fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

/// One progress report: how far along (0.0–1.0) and a short human message.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct ProgressEvent {
    pub(crate) fraction: f64,
    pub message: String,
}

/// A sink for progress reports. Implemented for any `Fn(ProgressEvent)`.
pub trait Progress: Send + Sync {
    fn report(&self, event: ProgressEvent);

    /// Whether this sink takes a run's structured events ([`Progress::event`]);
    /// for one that does not (the default), none is built.
    fn wants_events(&self) -> bool {
        false
    }

    /// One structured event, as the run reaches it: `bench net`'s `start`
    /// when the test starts and each `interval` as it ends, each in iperf3's
    /// JSON layout (`--json-stream` prints them). Dropped by default.
    fn event(&self, _name: &str, _data: serde_json::Value) {}
}

impl<F: Fn(ProgressEvent) + Send + Sync> Progress for F {
    fn report(&self, event: ProgressEvent) {
        self(event)
    }
}

/// A progress sink that drops every report.
pub struct NoProgress;

impl Progress for NoProgress {
    fn report(&self, _event: ProgressEvent) {}
}
