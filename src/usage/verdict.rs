//! "Do I need a faster link?" answered in the owner's words, from a span's
//! figures and, when the history has one, a benchmark of the path beyond
//! the link (a 10 GbE NIC behind a server that delivers 110 MB/s gains
//! nothing from a faster link).

use serde::{Deserialize, Serialize};

use super::stats::Span;
use crate::units;

/// A figure the history holds for the path beyond the link.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct PathFigure {
    /// `net upload to nas.lan (bench, 2026-12-01 10:00:00)`.
    pub(crate) what: String,
    pub(crate) bps: f64,
}

/// The answer, with the figures it rests on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Verdict {
    pub(crate) faster_helps: bool,
    pub(crate) text: String,
    pub(crate) evidence: Vec<String>,
}

/// Time above 95 % a day from which the link is full often enough to feel.
pub(crate) const FULL_PER_DAY_S: f64 = 15.0 * 60.0;
/// A path that delivers less than this share of the link limits before it.
const PATH_LIMITS: f64 = 0.7;
/// Ethernet speeds, Mbit/s: the next one up is what an upgrade buys.
const LADDER: [u32; 12] = [
    10, 100, 1000, 2500, 5000, 10_000, 25_000, 40_000, 50_000, 100_000, 200_000, 400_000,
];

/// The verdict on `s`, with the path figures of the history.
pub(crate) fn judge(s: &Span, path: &[PathFigure]) -> Verdict {
    let speed_mbps = (s.speed_bps / 1e6).round() as u32;
    let (_, d) = s.busier();
    let days = s.covered_s / 86_400.0;
    let mut evidence = evidence(s);
    let limiting: Vec<&PathFigure> = path
        .iter()
        .filter(|p| p.bps < s.speed_bps * PATH_LIMITS)
        .collect();
    for p in path {
        let who = if p.bps < s.speed_bps * PATH_LIMITS {
            "the rest of the path limits before the link"
        } else {
            "the link, not the rest of that path, is the limit"
        };
        evidence.push(format!(
            "{} delivered {} = {:.0} % of the link: {who}",
            p.what,
            units::bps(p.bps),
            100.0 * p.bps / s.speed_bps
        ));
    }
    let per_day = d.above_s[2] / days.max(1.0);
    let faster_helps = per_day >= FULL_PER_DAY_S && limiting.is_empty();
    let mut text = if per_day >= FULL_PER_DAY_S {
        full_text(s, speed_mbps, per_day, days)
    } else {
        format!(
            "peak {}, above 80 % for {} in {}: a faster link would not change what you feel",
            peak_share(s, d),
            units::duration(d.above_s[1]),
            span_words(s.covered_s)
        )
    };
    if let Some(p) = limiting.first() {
        text += &format!(
            "; and the rest of the path limits first: {} delivered {} = {:.0} % of the link, so a faster link gains nothing until that does",
            p.what,
            units::bps(p.bps),
            100.0 * p.bps / s.speed_bps
        );
    }
    Verdict {
        faster_helps,
        text,
        evidence,
    }
}

/// "941 Mbit/s = 94 % of 1 Gbit/s", of the speed the link ran at when the
/// peak was seen, and that speed named when the link runs at another now
/// (forced down to 100 Mbit/s after a 728 Mbit/s peak at 1 Gbit/s).
fn peak_share(s: &Span, d: &super::stats::DirStats) -> String {
    let at = if d.peak_speed_bps > 0.0 {
        d.peak_speed_bps
    } else {
        s.speed_bps
    };
    let speed = |bps: f64| units::speed((bps / 1e6).round() as u32);
    let then = if (at - s.speed_bps).abs() >= 1e6 {
        format!(" (the speed then; {} now)", speed(s.speed_bps))
    } else {
        String::new()
    };
    format!(
        "{} = {:.0} % of {}{then}",
        units::bps(d.peak_bps),
        100.0 * d.peak_bps / at,
        speed(at)
    )
}

fn full_text(s: &Span, speed_mbps: u32, per_day: f64, days: f64) -> String {
    let when = windows(s);
    let when = if when.is_empty() {
        String::new()
    } else {
        format!(" ({when})")
    };
    let how_often = if days >= 1.0 {
        format!("{} a day", units::duration(per_day))
    } else {
        format!(
            "{} in the {} sampled",
            units::duration(per_day),
            units::duration(s.covered_s)
        )
    };
    let Some(next) = LADDER.iter().copied().find(|m| *m > speed_mbps) else {
        return format!(
            "above 95 % of {} for {how_often}{when}: the link is full then",
            units::speed(speed_mbps)
        );
    };
    format!(
        "above 95 % of {} for {how_often}{when}: at {} that traffic would take ~{} (an estimate: the same bytes at the faster rate)",
        units::speed(speed_mbps),
        units::speed(next),
        units::duration(per_day * f64::from(speed_mbps) / f64::from(next))
    )
}

/// `30 days` or `the 2 h sampled`.
fn span_words(covered_s: f64) -> String {
    if covered_s >= 86_400.0 {
        format!("{:.0} days", covered_s / 86_400.0)
    } else {
        format!("the {} sampled", units::duration(covered_s))
    }
}

/// The hours of the day that hold the time at full speed: `02:00–05:00`.
fn windows(s: &Span) -> String {
    let total: f64 = s.hours.iter().map(|h| h.full_s).sum();
    let mut hours: Vec<u8> = s
        .hours
        .iter()
        .filter(|h| total > 0.0 && h.full_s >= total * 0.1)
        .map(|h| h.hour)
        .collect();
    hours.sort_unstable();
    let mut ranges: Vec<(u8, u8)> = Vec::new();
    for h in hours {
        match ranges.last_mut() {
            Some(r) if r.1 == h => r.1 = h + 1,
            _ => ranges.push((h, h + 1)),
        }
    }
    ranges
        .iter()
        .map(|(a, b)| format!("{a:02}:00–{:02}:00", b % 24))
        .collect::<Vec<_>>()
        .join(", ")
}

fn evidence(s: &Span) -> Vec<String> {
    let mut out = Vec::new();
    for (name, d) in [("receive", &s.rx), ("send", &s.tx)] {
        out.push(format!(
            "{name}: peak {}, 95th percentile {}, above 50/80/95 %: {} / {} / {}, moved {}",
            units::bps(d.peak_bps),
            units::bps(d.p95_bps),
            units::duration(d.above_s[0]),
            units::duration(d.above_s[1]),
            units::duration(d.above_s[2]),
            units::bytes(d.bytes)
        ));
    }
    let busiest: Vec<String> = s
        .hours
        .iter()
        .take(3)
        .map(|h| format!("{:02}:00 ({} on average)", h.hour, units::bps(h.avg_bps)))
        .collect();
    if !busiest.is_empty() {
        out.push(format!("busiest hours: {}", busiest.join(", ")));
    }
    if s.p95_from_hours {
        out.push("the 95th percentile of the older days is estimated from hourly figures".into());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::usage::Bucket;
    use crate::usage::stats::span;

    /// `days` days of a 1 Gbit/s link: every day one busy minute per hour
    /// at `peak`, and `full_min` minutes at line rate from 02:00.
    fn history(days: i64, peak: f64, full_min: i64) -> Span {
        let mut b = Vec::new();
        for day in 0..days {
            for hour in 0..24 {
                let start = day * 86_400 + hour * 3600;
                let mut m = Bucket::new("eth0", start, 60, 1e9);
                m.covered_ms = 60_000;
                m.rx.max_bps = peak;
                m.rx.bytes = (peak / 8.0 * 60.0) as u64;
                b.push(m);
            }
            for i in 0..full_min {
                let mut m = Bucket::new("eth0", day * 86_400 + 2 * 3600 + 60 + i * 60, 60, 1e9);
                m.covered_ms = 60_000;
                m.rx.max_bps = 0.99e9;
                m.rx.bytes = (0.99e9 / 8.0 * 60.0) as u64;
                m.rx.above_ms = [60_000; 3];
                b.push(m);
            }
        }
        b.sort_by_key(|m| m.start);
        let mut s = span(&b, 0).unwrap();
        s.covered_s = days as f64 * 86_400.0;
        s
    }

    #[test]
    fn a_link_that_is_never_full_needs_nothing_faster() {
        let v = judge(&history(30, 280e6, 0), &[]);
        assert!(!v.faster_helps);
        assert_eq!(
            v.text,
            "peak 280 Mbit/s = 28 % of 1 Gbit/s, above 80 % for 0 min in 30 days: a faster link would not change what you feel"
        );
        assert!(v.evidence[0].starts_with("receive: peak 280 Mbit/s, 95th percentile 280 Mbit/s"));
    }

    /// A peak seen at 1 Gbit/s on a link forced down to 100 Mbit/s since is
    /// a share of the 1 Gbit/s it ran at, not "728 % of 100 Mbit/s".
    #[test]
    fn a_peak_is_judged_by_the_speed_the_link_ran_at() {
        let mut b = Vec::new();
        for (i, (speed, peak)) in [(1e9, 728e6), (1e9, 50e6), (100e6, 2e6)]
            .into_iter()
            .enumerate()
        {
            let mut m = Bucket::new("eth0", i as i64 * 60, 60, speed);
            m.covered_ms = 60_000;
            m.tx.max_bps = peak;
            b.push(m);
        }
        let v = judge(&span(&b, 0).unwrap(), &[]);
        assert_eq!(
            v.text,
            "peak 728 Mbit/s = 73 % of 1 Gbit/s (the speed then; 100 Mbit/s now), above 80 % for 0 min in the 3 min sampled: a faster link would not change what you feel"
        );
    }

    #[test]
    fn a_link_full_for_hours_a_day_says_what_faster_would_give() {
        let v = judge(&history(7, 100e6, 200), &[]);
        assert!(v.faster_helps, "{}", v.text);
        assert_eq!(
            v.text,
            "above 95 % of 1 Gbit/s for 3 h 20 min a day (02:00–06:00): at 2.5 Gbit/s that traffic would take ~1 h 20 min (an estimate: the same bytes at the faster rate)"
        );
    }

    #[test]
    fn a_slow_path_beyond_the_link_is_named_as_the_limit() {
        let path = [PathFigure {
            what: "disk seq-read of /mnt/media".into(),
            bps: 110e6 * 8.0,
        }];
        // 880 Mbit/s is 88 % of 1 Gbit/s: the link is the limit of that path.
        let v = judge(&history(7, 100e6, 200), &path);
        assert!(v.faster_helps, "{}", v.text);
        assert!(v.evidence.contains(
            &"disk seq-read of /mnt/media delivered 880 Mbit/s = 88 % of the link: the link, not the rest of that path, is the limit".to_string()
        ));
        let mut ten_g = history(7, 100e6, 0);
        ten_g.speed_bps = 10e9;
        let v = judge(&ten_g, &path);
        assert!(!v.faster_helps);
        assert!(v.text.contains("the rest of the path limits first: disk seq-read of /mnt/media delivered 880 Mbit/s = 9 % of the link"), "{}", v.text);
    }
}
