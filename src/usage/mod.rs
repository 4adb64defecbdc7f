//! The owner's other question, "do I need a faster link?": how busy each
//! link really is between benchmarks. hlctld reads every physical link's
//! byte counters at a fixed interval (10 s; virtual links only when the
//! configuration asks) and keeps a compact history in the history database:
//! per-minute rows (the highest rate of the minute, the bytes, the time
//! above 50/80/95 % of the link's speed) for recent days, rolled up into
//! per-hour rows (the same, plus the 95th percentile of the minutes) for the
//! long term.
//!
//! - [`fold`]: counter readings → minute rows; counter resets and 32-bit
//!   wraps never make a spike;
//! - [`store`]: the two tables, the hourly roll-up and the retention;
//! - [`stats`]: peak, 95th percentile, time above, busiest hours over a span;
//! - [`verdict`]: the answer in the owner's words, with its evidence.

pub(crate) mod answer;
pub(crate) mod fold;
pub(crate) mod stats;
pub(crate) mod store;
pub(crate) mod verdict;

use serde::{Deserialize, Serialize};

/// The shares of the link's speed that the time above is counted for (%).
pub(crate) const THRESHOLDS: [u8; 3] = [50, 80, 95];

/// One direction of one bucket (a minute or an hour).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Flow {
    /// The highest rate of one sample interval, bit/s.
    pub(crate) max_bps: f64,
    /// Bytes moved.
    pub(crate) bytes: u64,
    /// Milliseconds spent above each of [`THRESHOLDS`].
    pub(crate) above_ms: [u64; 3],
    /// An hour's 95th percentile of its minutes' highest rates (hour rows only).
    pub(crate) p95_bps: Option<f64>,
}

/// A minute or an hour of one link's traffic.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Bucket {
    pub(crate) iface: String,
    /// Unix seconds of the bucket's start (a whole minute or hour).
    pub(crate) start: i64,
    /// 60 or 3600.
    pub(crate) len_s: i64,
    /// The speed the thresholds were taken of, bit/s.
    pub(crate) speed_bps: f64,
    /// Milliseconds the samples covered.
    pub(crate) covered_ms: u64,
    pub(crate) rx: Flow,
    pub(crate) tx: Flow,
}

impl Bucket {
    pub(crate) fn new(iface: &str, start: i64, len_s: i64, speed_bps: f64) -> Bucket {
        Bucket {
            iface: iface.to_string(),
            start,
            len_s,
            speed_bps,
            covered_ms: 0,
            rx: Flow::default(),
            tx: Flow::default(),
        }
    }
}
