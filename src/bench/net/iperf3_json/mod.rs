//! iperf3's JSON, in two layouts built by the same functions:
//!
//! - `bench net -J`: a report in iperf3 3.12's layout (`start`,
//!   `intervals`, `end`, with the keys iperf3 writes for TCP, UDP, `-R`,
//!   `-P` and `--bidir`), so that programs reading iperf3's JSON read ours;
//!   hlctl's own report (RTT, per-direction totals, …) goes under the one
//!   extra key `hlctl`. `start` also has the keys later iperf3 versions
//!   added there (`timestamp.timemillisecs`; `test_start`'s `bidir`,
//!   `fqrate`, `interval`, `gso`, `gro`), so that scripts written against
//!   3.21 read ours.
//! - `--json-stream` (iperf3 3.17+): one `{"event":…,"data":…}` object a
//!   line in iperf3 3.21's layout, written as the test reaches it: `start`
//!   when the test starts, each `interval` as it ends (both from the engine,
//!   through [`crate::bench::progress::Progress::event`]), then `end`, or
//!   `error` and an empty `end`. 3.21's data has three keys 3.12's has not:
//!   `start.fq_rate`, and `reorder` in a TCP sender's interval and end.

use serde_json::{Value, json};

use super::figures::{Side, StartInfo};
use super::params::{Protocol, TestDirection, TestParams};
use super::stream::Role;
use super::summary::NetReport;

mod end;
mod interval;
mod start;

pub(crate) use end::end;
pub(crate) use interval::interval;
pub(crate) use start::start;

/// The key that holds hlctl's own report.
pub(crate) const HLCTL_KEY: &str = "hlctl";

/// Whose keys the data has: iperf3 3.12's (`-J`) or 3.21's (`--json-stream`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Version {
    V3_12,
    V3_21,
}

/// What the layout of a test's `start` and intervals reads: the same for a
/// finished report (`-J`, and the stream's `end`) and for a test under way
/// (the stream's `start` and intervals).
pub(crate) struct Test<'a> {
    pub(crate) side: Side,
    pub(crate) protocol: Protocol,
    pub(crate) direction: TestDirection,
    /// Parallel streams (per direction for `--bidir`).
    pub(crate) streams: u32,
    pub(crate) block_len: u32,
    pub(crate) target_bps: Option<u64>,
    pub(crate) start: &'a StartInfo,
    pub(crate) version: Version,
}

impl<'a> Test<'a> {
    /// A finished test, from its report.
    pub(crate) fn of_report(r: &'a NetReport, version: Version) -> Test<'a> {
        Test {
            side: if r.side == "client" {
                Side::Client
            } else {
                Side::Server
            },
            protocol: r.protocol,
            direction: r.direction,
            streams: r.streams,
            block_len: r.block_len,
            target_bps: r.target_bps,
            start: &r.start,
            version,
        }
    }

    /// A test under way, from its parameters and how it started.
    pub(crate) fn of_params(
        side: Side,
        p: &TestParams,
        start: &'a StartInfo,
        version: Version,
    ) -> Test<'a> {
        Test {
            side,
            protocol: p.protocol,
            direction: p.direction,
            streams: p.parallel,
            block_len: p.len,
            target_bps: p.target_bps(),
            start,
            version,
        }
    }

    fn udp(&self) -> bool {
        self.protocol == Protocol::Udp
    }

    /// This side's role in the main direction ("sum") of the test.
    fn main_role(&self) -> Role {
        self.side.primary_role(self.direction)
    }

    /// A stream's socket descriptor (its id when it is not known).
    fn socket(&self, id: u32) -> i64 {
        self.start
            .connected
            .iter()
            .find(|c| c.id == id)
            .map_or(id as i64, |c| c.socket as i64)
    }

    /// Whether this side sent a stream's data ("client_to_server" or "server_to_client").
    fn sends(&self, direction: &str) -> bool {
        (direction == "client_to_server") == (self.side == Side::Client)
    }

    /// 3.20's `reorder`, in 3.21's layout only.
    fn has_reorder(&self) -> bool {
        self.version == Version::V3_21
    }
}

/// The whole `-J` document for a client's report.
pub(crate) fn layout(r: &NetReport) -> Value {
    let mut own = serde_json::to_value(r).unwrap_or_default();
    if let Some(m) = own.as_object_mut() {
        m.remove("start");
        m.remove("samples");
    }
    let t = Test::of_report(r, Version::V3_12);
    json!({
        "start": start(&t),
        "intervals": r.samples.iter().map(|s| interval(&t, s)).collect::<Vec<_>>(),
        "end": end(r, Version::V3_12),
        HLCTL_KEY: own,
    })
}

/// One line of `--json-stream`, unformatted, `event` first as iperf3 writes it.
pub(crate) fn event(name: &str, data: Value) -> String {
    format!(r#"{{"event":{},"data":{data}}}"#, Value::from(name))
}

/// The stream's last lines after `start` and the intervals: `end`.
pub(crate) fn stream_end(r: &NetReport) -> String {
    event("end", end(r, Version::V3_21))
}

/// The stream's last lines when the test failed: `error`, then an empty
/// `end`, as iperf3 3.21 ends it.
pub(crate) fn stream_error(message: &str) -> [String; 2] {
    [
        event("error", message.into()),
        event("end", Value::Object(Default::default())),
    ]
}

fn per_second(bytes: u64, secs: f64) -> f64 {
    if secs > 0.0 {
        bytes as f64 * 8.0 / secs
    } else {
        0.0
    }
}

fn lost_percent(lost: i64, packets: u64) -> f64 {
    if packets > 0 {
        100.0 * lost.max(0) as f64 / packets as f64
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests;
