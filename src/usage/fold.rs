//! Counter readings → minute buckets. Each reading is compared with the
//! link's previous one; the bytes between them become a rate for that
//! interval, which counts towards the minute the interval ends in.
//!
//! A counter that goes down is a reset (the driver reloaded, the link was
//! deleted and created again: a new ifindex says so too) or a 32-bit
//! counter wrapping; a wrap is taken only when the bytes it implies fit the
//! link's speed over the interval, else the interval is skipped. Either way
//! no spike is made: an interval that cannot be trusted counts as nothing.

use std::collections::BTreeMap;

use super::{Bucket, Flow, THRESHOLDS};

/// One link's counters at one moment.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Reading {
    pub(crate) iface: String,
    pub(crate) ifindex: u32,
    pub(crate) rx_bytes: u64,
    pub(crate) tx_bytes: u64,
    /// The speed to judge against, bit/s.
    pub(crate) speed_bps: f64,
}

#[derive(Clone, Debug)]
struct Last {
    ifindex: u32,
    rx: u64,
    tx: u64,
    at_ms: i64,
}

/// The previous reading of every link and the minute each is filling.
#[derive(Debug, Default)]
pub(crate) struct Folder {
    last: BTreeMap<String, Last>,
    open: BTreeMap<String, Bucket>,
}

/// A 32-bit wrap is believed when the bytes it implies fit the link's speed
/// over the interval times this.
const SLACK: f64 = 1.5;

impl Folder {
    /// Fold the readings taken at `now_ms` (Unix ms); returns the minutes
    /// that ended before it.
    pub(crate) fn tick(&mut self, now_ms: i64, readings: &[Reading]) -> Vec<Bucket> {
        let minute = now_ms.div_euclid(60_000) * 60;
        let mut closed = self.close_before(minute);
        for r in readings {
            let before = self.last.insert(r.iface.clone(), last_of(r, now_ms));
            let Some(prev) = before.filter(|p| p.ifindex == r.ifindex && p.at_ms < now_ms) else {
                continue;
            };
            let ms = (now_ms - prev.at_ms) as u64;
            let most = r.speed_bps / 8.0 * ms as f64 / 1000.0 * SLACK;
            let (Some(rx), Some(tx)) = (
                advance(prev.rx, r.rx_bytes, most),
                advance(prev.tx, r.tx_bytes, most),
            ) else {
                continue;
            };
            let b = self
                .open
                .entry(r.iface.clone())
                .or_insert_with(|| Bucket::new(&r.iface, minute, 60, r.speed_bps));
            if b.start != minute {
                closed.push(std::mem::replace(
                    b,
                    Bucket::new(&r.iface, minute, 60, r.speed_bps),
                ));
            }
            b.speed_bps = r.speed_bps;
            b.covered_ms += ms;
            add(&mut b.rx, rx, ms, r.speed_bps);
            add(&mut b.tx, tx, ms, r.speed_bps);
        }
        let seen: Vec<&str> = readings.iter().map(|r| r.iface.as_str()).collect();
        self.last.retain(|k, _| seen.contains(&k.as_str()));
        closed
    }

    /// Every minute still filling (at shutdown: stored now, merged with the
    /// rest of its minute after the restart).
    pub(crate) fn flush(&mut self) -> Vec<Bucket> {
        std::mem::take(&mut self.open).into_values().collect()
    }

    fn close_before(&mut self, minute: i64) -> Vec<Bucket> {
        let done: Vec<String> = self
            .open
            .iter()
            .filter(|(_, b)| b.start < minute)
            .map(|(k, _)| k.clone())
            .collect();
        done.iter().filter_map(|k| self.open.remove(k)).collect()
    }
}

fn last_of(r: &Reading, at_ms: i64) -> Last {
    Last {
        ifindex: r.ifindex,
        rx: r.rx_bytes,
        tx: r.tx_bytes,
        at_ms,
    }
}

/// The bytes between two readings of one counter, or `None` when they
/// cannot be trusted. A counter that went up moved that many bytes, however
/// many (a virtual link, or an emulated NIC, runs above the speed it is
/// judged against). One that went down is a reset, unless it is a 32-bit
/// counter wrapping: taken only when the bytes that implies are at most
/// `most` (what the link could move in the interval, with slack).
pub(crate) fn advance(prev: u64, now: u64, most: f64) -> Option<u64> {
    if now >= prev {
        return Some(now - prev);
    }
    if prev > u64::from(u32::MAX) {
        return None;
    }
    let d = (1u64 << 32) - prev + now;
    (d as f64 <= most.max(0.0)).then_some(d)
}

fn add(f: &mut Flow, bytes: u64, ms: u64, speed_bps: f64) {
    let bps = bytes as f64 * 8.0 * 1000.0 / ms as f64;
    f.bytes += bytes;
    f.max_bps = f.max_bps.max(bps);
    for (i, t) in THRESHOLDS.iter().enumerate() {
        if speed_bps > 0.0 && bps >= speed_bps * f64::from(*t) / 100.0 {
            f.above_ms[i] += ms;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const G: f64 = 1e9;

    fn r(ifindex: u32, rx: u64, tx: u64) -> Reading {
        Reading {
            iface: "eth0".into(),
            ifindex,
            rx_bytes: rx,
            tx_bytes: tx,
            speed_bps: G,
        }
    }

    #[test]
    fn rates_fold_into_the_minute_they_end_in() {
        let mut f = Folder::default();
        let t0 = 1_800_000_000_000; // a whole minute
        assert!(f.tick(t0, &[r(2, 0, 0)]).is_empty());
        // 10 s at 900 Mbit/s received, 100 Mbit/s sent.
        f.tick(t0 + 10_000, &[r(2, 1_125_000_000, 125_000_000)]);
        f.tick(t0 + 20_000, &[r(2, 1_125_000_000, 250_000_000)]);
        let closed = f.tick(t0 + 60_000, &[r(2, 1_125_000_000, 250_000_000)]);
        assert_eq!(closed.len(), 1);
        let b = &closed[0];
        assert_eq!(b.start, t0 / 1000);
        assert!((b.rx.max_bps - 900e6).abs() < 1.0);
        assert_eq!(b.rx.above_ms, [10_000, 10_000, 0]);
        assert_eq!(b.tx.above_ms, [0, 0, 0]);
        assert_eq!(b.rx.bytes, 1_125_000_000);
        assert_eq!(b.covered_ms, 20_000);
    }

    #[test]
    fn a_reset_or_a_new_ifindex_makes_no_spike() {
        let mut f = Folder::default();
        let t0 = 1_800_000_000_000;
        f.tick(t0, &[r(2, 5_000_000_000_000, 0)]);
        // The counter went back to nearly 0: a reset, not 5 TB in 10 s.
        f.tick(t0 + 10_000, &[r(2, 1000, 0)]);
        // The link came back under another ifindex with fresh counters.
        f.tick(t0 + 20_000, &[r(7, 2000, 0)]);
        f.tick(t0 + 30_000, &[r(7, 12_502_000, 0)]);
        let b = f.flush().remove(0);
        assert_eq!(b.rx.bytes, 12_500_000, "only the trusted interval counts");
        assert!((b.rx.max_bps - 10e6).abs() < 1.0);
    }

    #[test]
    fn a_simulated_32_bit_wrap_is_followed_not_a_spike() {
        // No counter here wraps at 32 bits (IFLA_STATS64); the numbers are
        // those a driver with 32-bit counters would give.
        let before = u64::from(u32::MAX) - 1_000_000;
        assert_eq!(advance(before, 24_000_000, 1e9), Some(25_000_001));
        // A wrap that would mean more than the link can carry is a reset.
        assert_eq!(advance(before, 24_000_000, 1e6), None);
        // A 64-bit counter going down is a reset.
        assert_eq!(advance(1 << 40, 5, f64::MAX), None);
        // Going up is real traffic, even above the speed judged against
        // (fleet_lab's veth, judged at 1 Gbit/s, moves several).
        assert_eq!(advance(1000, 5_000_000_000, 1e6), Some(4_999_999_000));
    }
}
