//! `--json-stream`'s live events: the test's `start` and each interval, in
//! iperf3 3.21's layout, told to a progress sink that takes events.

use crate::bench::progress::Progress;

use super::super::figures::{IntervalSample, StartInfo};
use super::super::iperf3_json::{self, Test, Version};
use super::Engine;

impl Engine {
    /// The test has started as `start` says: tell `progress` so (the
    /// `start` event), and each interval from now on, when it takes events.
    pub(crate) fn announce(&mut self, start: &StartInfo, progress: &dyn Progress) {
        if !progress.wants_events() {
            return;
        }
        let test = Test::of_params(self.side, &self.params, start, Version::V3_21);
        progress.event("start", iperf3_json::start(&test));
        self.announced = Some(start.clone());
    }

    /// An interval has ended: its event, when the test was announced.
    pub(super) fn tell_interval(&self, progress: &dyn Progress, sample: &IntervalSample) {
        if let Some(start) = &self.announced {
            let test = Test::of_params(self.side, &self.params, start, Version::V3_21);
            progress.event("interval", iperf3_json::interval(&test, sample));
        }
    }
}
