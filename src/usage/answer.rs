//! `hlctl usage [IFACE] [--days N]`: every sampled link's figures over the
//! last N days and the verdict on them.

use serde::{Deserialize, Serialize};

use super::stats::{self, Span};
use super::store;
use super::verdict::{self, Verdict};
use crate::history::{History, HistoryError};

/// Longest span a question may ask for, in days (the longest retention).
pub(crate) const MAX_DAYS: u32 = 3660;

/// One link's answer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct LinkUsage {
    pub(crate) iface: String,
    pub(crate) span: Span,
    pub(crate) verdict: Verdict,
    /// The highest rate of each hour, oldest first: what a chart draws.
    #[serde(default)]
    pub(crate) hourly_peaks: Vec<HourPeak>,
}

/// The highest received and sent rate (bit/s) of the hour at `start`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct HourPeak {
    pub(crate) start: i64,
    pub(crate) rx_bps: f64,
    pub(crate) tx_bps: f64,
}

/// The answer for every link asked about.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct UsageAnswer {
    pub(crate) days: u32,
    pub(crate) links: Vec<LinkUsage>,
}

/// The links' figures over the `days` before `now` (Unix s); an `iface`
/// without a single sample is an error naming the links that have some.
pub(crate) fn answer(
    h: &mut History,
    iface: Option<&str>,
    days: u32,
    now: i64,
) -> Result<UsageAnswer, HistoryError> {
    let since = now - i64::from(days) * 86_400;
    let names = match iface {
        Some(i) => vec![i.to_string()],
        None => store::ifaces(h)?,
    };
    let offset = stats::local_offset_s();
    let mut links = Vec::new();
    for name in names {
        let buckets = store::buckets(h, Some(&name), since)?;
        links.extend(link_usage(h, name, &buckets, since, offset)?);
    }
    if let (Some(i), true) = (iface, links.is_empty()) {
        let have = store::ifaces(h)?;
        return Err(HistoryError::Invalid {
            what: "interface",
            value: i.to_string(),
            why: if have.is_empty() {
                "no usage has been recorded yet: hlctld samples every physical link every 10 s once it runs ([usage] in hlctl.toml adds virtual ones)".into()
            } else {
                format!(
                    "no usage recorded for it in the last {days} days; links with usage: {}",
                    have.join(", ")
                )
            },
        });
    }
    Ok(UsageAnswer { days, links })
}

/// Every sampled link over each of `windows` (days before `now`), its rows
/// read once for the longest window and cut for the shorter ones: what
/// `hlctl.prom` gives after every minute hlctld stores.
pub(crate) fn answers(
    h: &mut History,
    windows: &[u32],
    now: i64,
) -> Result<Vec<UsageAnswer>, HistoryError> {
    let since_of = |days: u32| now - i64::from(days) * 86_400;
    let longest = since_of(windows.iter().copied().max().unwrap_or(0));
    let offset = stats::local_offset_s();
    let mut out: Vec<UsageAnswer> = windows
        .iter()
        .map(|&days| UsageAnswer {
            days,
            links: Vec::new(),
        })
        .collect();
    for name in store::ifaces(h)? {
        let all = store::buckets(h, Some(&name), longest)?;
        for u in out.iter_mut() {
            let since = since_of(u.days);
            // As store::buckets(since) selects: minutes from `since`, hour
            // rows from its hour.
            let hour = since.div_euclid(3600) * 3600;
            let cut: Vec<_> = all
                .iter()
                .filter(|b| b.start >= if b.len_s > 60 { hour } else { since })
                .cloned()
                .collect();
            u.links
                .extend(link_usage(h, name.clone(), &cut, since, offset)?);
        }
    }
    Ok(out)
}

/// One link's answer from its buckets since `since`; `None` without any.
fn link_usage(
    h: &mut History,
    iface: String,
    buckets: &[super::Bucket],
    since: i64,
    offset: i64,
) -> Result<Option<LinkUsage>, HistoryError> {
    let Some(span) = stats::span(buckets, offset) else {
        return Ok(None);
    };
    let path = store::path_figures(h, &iface, since)?;
    let hourly_peaks = stats::hourly_peaks(buckets)
        .into_iter()
        .map(|(start, rx_bps, tx_bps)| HourPeak {
            start,
            rx_bps,
            tx_bps,
        })
        .collect();
    Ok(Some(LinkUsage {
        verdict: verdict::judge(&span, &path),
        iface,
        span,
        hourly_peaks,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::usage::{Bucket, stats};

    /// The windows cut from one read equal each window read on its own.
    #[test]
    fn windows_cut_from_one_read_equal_their_own_reads() {
        let dir = tempfile::tempdir().unwrap();
        let mut h = History::open(dir.path()).unwrap();
        let now = 1_800_000_000 / 3600 * 3600;
        let bucket = |start: i64, len_s: i64, bps: f64| {
            let mut b = Bucket::new("eth0", start, len_s, 1e9);
            b.covered_ms = len_s as u64 * 1000;
            b.rx.max_bps = bps;
            b.rx.bytes = (bps / 8.0 * len_s as f64) as u64;
            b
        };
        let hours: Vec<Bucket> = (2..20 * 24)
            .map(|i| {
                let m = bucket(now - i * 3600, 60, 1e6 * (i % 97) as f64);
                stats::hour_of("eth0", now - i * 3600, &[m]).unwrap()
            })
            .collect();
        store::add_hours(&mut h, &hours).unwrap();
        let minutes: Vec<Bucket> = (1..100)
            .map(|i| bucket(now - i * 60, 60, 3e6 * i as f64))
            .collect();
        store::add_minutes(&mut h, &minutes).unwrap();
        let both = answers(&mut h, &[1, 30], now).unwrap();
        for (u, days) in both.iter().zip([1, 30]) {
            assert_eq!(u, &answer(&mut h, None, days, now).unwrap(), "{days} days");
            assert_eq!(u.links.len(), 1);
        }
        assert_ne!(both[0].links[0].span, both[1].links[0].span);
        // The chart's points: one per hour, oldest first, each the hour's
        // highest rate; the month has every hour of the day's and more.
        let (day, month) = (
            &both[0].links[0].hourly_peaks,
            &both[1].links[0].hourly_peaks,
        );
        for peaks in [day, month] {
            assert!(peaks.windows(2).all(|w| w[0].start < w[1].start));
            assert!(peaks.iter().all(|p| p.start % 3600 == 0));
        }
        let want: std::collections::BTreeSet<i64> = hours
            .iter()
            .chain(&minutes)
            .map(|b| b.start.div_euclid(3600) * 3600)
            .collect();
        assert_eq!(month.len(), want.len());
        assert!(month.iter().map(|p| p.start).eq(want.iter().copied()));
        assert_eq!(month.last(), day.last());
        // The newest hour's minutes are i = 1 to 60 at 3 Mbit/s × i.
        assert_eq!(month.last().unwrap().rx_bps, 3e6 * 60.0);
    }
}
