//! Benchmark runs for the tuner: one run at a time in both directions, with
//! progress and the journal's deadline renewed before each; and what limits
//! each direction at the end.

use std::ops::Range;

use super::TuneError;
use super::checkpoint::Checkpoint;
use super::link;
use super::target::Target;
use crate::bench::progress::{Cancel, Progress, ProgressEvent};
use crate::doctor::Inputs;
use crate::path::limit::{self, LimitNote};
use crate::path::throughput::{self, Direction, Measure, MeasureError, Series};
use crate::sysctl::keys::triplet_max;

/// Both directions' runs (upload, download); a direction the tune does not
/// measure (`--direction`) stays empty.
pub(crate) type Pair = (Series, Series);

/// The runs a pair holds: those of its measured directions, which take their
/// runs together.
pub(crate) fn taken(p: &Pair) -> u32 {
    p.0.samples.len().max(p.1.samples.len()) as u32
}

pub(crate) fn say(p: &dyn Progress, fraction: f64, msg: String) {
    p.report(ProgressEvent {
        fraction,
        message: msg,
    });
}

/// Where the runs go and who watches them.
pub(crate) struct Bench<'a> {
    pub(crate) measure: &'a dyn Measure,
    pub(crate) progress: &'a dyn Progress,
    pub(crate) cancel: &'a Cancel,
    /// The directions measured (`--direction`).
    pub(crate) directions: &'a [Direction],
}

/// What a span of runs is for, in the progress messages.
pub(crate) struct Span<'a> {
    pub(crate) label: &'a str,
    /// The runs to take now, of `of` in all.
    pub(crate) runs: Range<u32>,
    pub(crate) of: u32,
    /// The progress fractions the whole budget of `of` runs spans.
    pub(crate) frac: (f64, f64),
}

impl Bench<'_> {
    /// Take the runs of `span` in both directions into `into`, renewing the
    /// checkpoint's deadline before each.
    pub(crate) fn take(
        &self,
        into: &mut Pair,
        span: &Span,
        mut cp: Option<&mut Checkpoint>,
    ) -> Result<(), TuneError> {
        let total = f64::from(span.of.max(1)) * self.directions.len().max(1) as f64;
        for run in span.runs.clone() {
            let mut renew_err = None;
            let mut k = f64::from(run) * self.directions.len() as f64;
            let r = throughput::series(
                self.measure,
                1,
                self.directions,
                self.progress,
                self.cancel,
                |d, _| {
                    if let Some(c) = cp.as_deref_mut()
                        && let Err(e) = c.renew()
                    {
                        renew_err = Some(e);
                        self.cancel.cancel();
                    }
                    say(
                        self.progress,
                        span.frac.0 + (span.frac.1 - span.frac.0) * k / total,
                        format!("{}: {d} run {}/{}", span.label, run + 1, span.of),
                    );
                    k += 1.0;
                },
            );
            if let Some(e) = renew_err {
                return Err(e);
            }
            let (up, down) = r.map_err(|e| match e {
                MeasureError::Cancelled => TuneError::Cancelled,
                MeasureError::Failed(m) => TuneError::Measure(m),
            })?;
            into.0.samples.extend(up.samples);
            into.1.samples.extend(down.samples);
        }
        Ok(())
    }
}

/// What limits each measured direction with the settings as they are now.
pub(crate) fn limits(target: &mut dyn Target, inp: &Inputs, after: &Pair) -> Vec<LimitNote> {
    let rtt = inp
        .peer
        .as_ref()
        .and_then(|p| p.rtt.as_ref().ok())
        .map(|r| r.ms);
    let link = link_speed_now(target, inp);
    throughput::measured(&after.0, &after.1)
        .map(|(d, s)| {
            let (key, _) = limit::keys(d);
            let buf = target.sysctl(key).as_deref().and_then(triplet_max);
            limit::of_series(d, s, rtt, link.clone(), buf)
        })
        .collect()
}

/// The link as it is now (a kept renegotiation changed its speed; a NIC
/// reset by a reverted candidate may still be renegotiating): the speed the
/// inputs read only when the driver reports no link settings.
fn link_speed_now(target: &mut dyn Target, inp: &Inputs) -> Option<crate::nic::speed::LinkSpeed> {
    match target.link() {
        Ok(Some(_)) => link::wait_for_carrier(target, None, link::CARRIER_WAIT)
            .ok()
            .and_then(|l| {
                let mut i = inp
                    .iface(target.interface())
                    .map(|s| s.now().clone())
                    .unwrap_or_default();
                i.link = Some(l);
                crate::nic::speed::link_speed(&i)
            }),
        _ => crate::doctor::tcp::peer_link_speed(inp),
    }
}
