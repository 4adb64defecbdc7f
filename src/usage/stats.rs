//! Figures over a span of buckets: per direction the peak, the 95th
//! percentile, the time above each threshold and the bytes; the busiest
//! hours of the day; and an hour row made of its minutes.
//!
//! The 95th percentile is taken of the minutes' highest rates (a minute
//! row is one value; an hour row, once its minutes are gone, stands for
//! its 60 minutes with its own 95th percentile, an estimate said so by
//! [`Span::p95_from_hours`]).

use serde::{Deserialize, Serialize};

use super::{Bucket, Flow, THRESHOLDS};

/// One direction over a span.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct DirStats {
    pub(crate) peak_bps: f64,
    /// The link's speed when the peak was seen (bit/s; 0 with no traffic):
    /// a link renegotiated down since is judged by the speed it ran at.
    #[serde(default)]
    pub(crate) peak_speed_bps: f64,
    pub(crate) p95_bps: f64,
    /// Seconds above each of [`THRESHOLDS`] of the link's speed.
    pub(crate) above_s: [f64; 3],
    pub(crate) bytes: u64,
}

/// An hour of the day (local time) and its traffic.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct HourOfDay {
    pub(crate) hour: u8,
    /// Both directions' bytes over the time sampled in that hour, bit/s.
    pub(crate) avg_bps: f64,
    /// Seconds the busier direction spent above 95 % in that hour.
    pub(crate) full_s: f64,
}

/// A link's traffic over a span of buckets.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Span {
    pub(crate) from: i64,
    pub(crate) to: i64,
    /// Seconds the samples covered.
    pub(crate) covered_s: f64,
    /// The speed of the newest bucket, bit/s.
    pub(crate) speed_bps: f64,
    pub(crate) rx: DirStats,
    pub(crate) tx: DirStats,
    /// Every hour of the day with traffic, busiest first.
    pub(crate) hours: Vec<HourOfDay>,
    /// Part of the span is hour rows (their minutes are past retention):
    /// its 95th percentile is an estimate from hourly figures.
    pub(crate) p95_from_hours: bool,
}

impl Span {
    /// The direction that spent longer above 95 % (then the higher peak):
    /// `("receive", stats)` or `("send", stats)`.
    pub(crate) fn busier(&self) -> (&'static str, &DirStats) {
        let key = |d: &DirStats| (d.above_s[2], d.above_s[1], d.peak_bps);
        if key(&self.tx) > key(&self.rx) {
            ("send", &self.tx)
        } else {
            ("receive", &self.rx)
        }
    }
}

/// The figures of `buckets` (one link's, in time order); `None` when empty.
/// `utc_offset_s` places the hours of the day in local time.
pub(crate) fn span(buckets: &[Bucket], utc_offset_s: i64) -> Option<Span> {
    let last = buckets.last()?;
    let first = buckets.first()?;
    Some(Span {
        from: first.start,
        to: last.start + last.len_s,
        covered_s: buckets.iter().map(|b| b.covered_ms as f64 / 1000.0).sum(),
        speed_bps: last.speed_bps,
        rx: dir(buckets, |b| &b.rx),
        tx: dir(buckets, |b| &b.tx),
        hours: hours_of_day(buckets, utc_offset_s),
        p95_from_hours: buckets.iter().any(|b| b.len_s > 60),
    })
}

fn dir(buckets: &[Bucket], f: impl Fn(&Bucket) -> &Flow) -> DirStats {
    let mut d = DirStats::default();
    let mut values = Vec::with_capacity(buckets.len());
    for b in buckets {
        let x = f(b);
        if x.max_bps > d.peak_bps {
            d.peak_bps = x.max_bps;
            d.peak_speed_bps = b.speed_bps;
        }
        d.bytes += x.bytes;
        for i in 0..THRESHOLDS.len() {
            d.above_s[i] += x.above_ms[i] as f64 / 1000.0;
        }
        values.push((x.p95_bps.unwrap_or(x.max_bps), (b.len_s / 60).max(1) as u64));
    }
    d.p95_bps = p95(&mut values);
    d
}

/// The 95th percentile (nearest rank) of weighted values.
pub(crate) fn p95(values: &mut [(f64, u64)]) -> f64 {
    values.sort_by(|a, b| a.0.total_cmp(&b.0));
    let total: u64 = values.iter().map(|v| v.1).sum();
    let rank = (total as f64 * 0.95).ceil() as u64;
    let mut seen = 0;
    for (v, w) in values.iter() {
        seen += w;
        if seen >= rank {
            return *v;
        }
    }
    values.last().map_or(0.0, |v| v.0)
}

fn hours_of_day(buckets: &[Bucket], utc_offset_s: i64) -> Vec<HourOfDay> {
    let mut acc = [(0u64, 0u64, 0u64, 0u64); 24]; // bytes, covered ms, rx a95, tx a95
    for b in buckets {
        let h = (b.start + utc_offset_s).rem_euclid(86_400) / 3600;
        let a = &mut acc[h as usize];
        a.0 += b.rx.bytes + b.tx.bytes;
        a.1 += b.covered_ms;
        a.2 += b.rx.above_ms[2];
        a.3 += b.tx.above_ms[2];
    }
    let tx_busier = acc.iter().map(|a| a.3).sum::<u64>() > acc.iter().map(|a| a.2).sum::<u64>();
    let mut out: Vec<HourOfDay> = acc
        .iter()
        .enumerate()
        .filter(|(_, a)| a.1 > 0)
        .map(|(h, a)| HourOfDay {
            hour: h as u8,
            avg_bps: a.0 as f64 * 8.0 * 1000.0 / a.1 as f64,
            full_s: if tx_busier { a.3 } else { a.2 } as f64 / 1000.0,
        })
        .collect();
    out.sort_by(|a, b| b.avg_bps.total_cmp(&a.avg_bps));
    out
}

/// The highest rate of each hour (received, sent), oldest first: what a
/// chart of a month draws.
pub(crate) fn hourly_peaks(buckets: &[Bucket]) -> Vec<(i64, f64, f64)> {
    let mut out: Vec<(i64, f64, f64)> = Vec::new();
    for b in buckets {
        let hour = b.start.div_euclid(3600) * 3600;
        match out.last_mut() {
            Some(h) if h.0 == hour => {
                h.1 = h.1.max(b.rx.max_bps);
                h.2 = h.2.max(b.tx.max_bps);
            }
            _ => out.push((hour, b.rx.max_bps, b.tx.max_bps)),
        }
    }
    out
}

/// The hour row of `minutes` (all within the hour at `start`).
pub(crate) fn hour_of(iface: &str, start: i64, minutes: &[Bucket]) -> Option<Bucket> {
    let last = minutes.last()?;
    let mut h = Bucket::new(iface, start, 3600, last.speed_bps);
    for m in minutes {
        h.covered_ms += m.covered_ms;
        for (to, from) in [(&mut h.rx, &m.rx), (&mut h.tx, &m.tx)] {
            to.max_bps = to.max_bps.max(from.max_bps);
            to.bytes += from.bytes;
            for i in 0..THRESHOLDS.len() {
                to.above_ms[i] += from.above_ms[i];
            }
        }
    }
    let mut rx: Vec<(f64, u64)> = minutes.iter().map(|m| (m.rx.max_bps, 1)).collect();
    let mut tx: Vec<(f64, u64)> = minutes.iter().map(|m| (m.tx.max_bps, 1)).collect();
    h.rx.p95_bps = Some(p95(&mut rx));
    h.tx.p95_bps = Some(p95(&mut tx));
    Some(h)
}

/// This host's offset from UTC now, in seconds (local time of the hours).
pub(crate) fn local_offset_s() -> i64 {
    let now: libc::time_t = crate::host::now_unix() as libc::time_t;
    // SAFETY: localtime_r writes only into the tm we pass; both live here.
    unsafe {
        let mut tm: libc::tm = std::mem::zeroed();
        if libc::localtime_r(&now, &mut tm).is_null() {
            0
        } else {
            tm.tm_gmtoff
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn minute(start: i64, rx_max: f64) -> Bucket {
        let mut b = Bucket::new("eth0", start, 60, 1e9);
        b.covered_ms = 60_000;
        b.rx.max_bps = rx_max;
        b.rx.bytes = (rx_max / 8.0 * 60.0) as u64;
        b
    }

    #[test]
    fn the_95th_percentile_ignores_the_top_twentieth() {
        // 95 quiet minutes and 5 at line rate: p95 is the quiet figure.
        let mut b: Vec<Bucket> = (0..95).map(|i| minute(i * 60, 10e6)).collect();
        b.extend((95..100).map(|i| minute(i * 60, 1e9)));
        let s = span(&b, 0).unwrap();
        assert_eq!(s.rx.peak_bps, 1e9);
        assert_eq!(s.rx.p95_bps, 10e6);
        assert!(!s.p95_from_hours);
        let h = hour_of("eth0", 0, &b[..60]).unwrap();
        assert_eq!(h.rx.p95_bps, Some(10e6));
        assert_eq!(h.covered_ms, 3_600_000);
    }

    #[test]
    fn the_busiest_hour_is_in_local_time() {
        let b = vec![minute(3 * 3600, 500e6), minute(9 * 3600, 5e6)];
        let s = span(&b, 3600).unwrap();
        assert_eq!(s.hours[0].hour, 4, "03:00 UTC is 04:00 at UTC+1");
    }
}
