//! From sensor readings to "throttling observed" / "none observed" / "not observable".
//!
//! Throttling is reported when any of these is seen during the run:
//! - a thermal_throttle counter (count or total time, core or package) went up;
//! - a CPU cooling device (Processor, cpufreq-*, intel_powerclamp) had a state above 0;
//! - some CPU's `scaling_max_freq` was lowered below its value at the start;
//! - the highest CPU frequency stayed more than 10 % below its level in the first
//!   samples for 3 samples in a row;
//! - the highest CPU frequency was more than 10 % below `cpuinfo_max_freq` while a
//!   temperature was within 5 °C of its limit (trip point, max or crit).
//!
//! With none of these sensors present the answer is "not observable on this machine".

use serde::Serialize;

use super::sensors::{Inventory, Reading};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub enum Verdict {
    #[serde(rename = "throttling observed")]
    ThrottlingObserved,
    #[serde(rename = "none observed")]
    NoneObserved,
    #[serde(rename = "not observable on this machine")]
    NotObservable,
}

impl Verdict {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Verdict::ThrottlingObserved => "throttling observed",
            Verdict::NoneObserved => "none observed",
            Verdict::NotObservable => "not observable on this machine",
        }
    }
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The highest current frequency over all CPUs in one reading (kHz).
pub(crate) fn max_khz(r: &Reading) -> Option<u64> {
    r.cur_khz.iter().flatten().copied().max()
}

/// Judge a run: `start` was read before the load began, `during` once per interval.
pub(crate) fn judge(
    inv: &Inventory,
    start: &Reading,
    during: &[Reading],
) -> (Verdict, Vec<String>) {
    if !inv.observable() {
        let why = "this machine exposes no hwmon temperatures, thermal zones, CPU cooling devices, \
                   cpufreq or thermal_throttle counters (usual for VMs and containers)";
        return (Verdict::NotObservable, vec![why.to_string()]);
    }
    let mut reasons = Vec::new();
    if let (Some(a), Some(b)) = (start.throttle, during.last().and_then(|r| r.throttle)) {
        let deltas = [
            ("core_throttle_count", a.core_count, b.core_count),
            (
                "core_throttle_total_time_ms",
                a.core_time_ms,
                b.core_time_ms,
            ),
            ("package_throttle_count", a.package_count, b.package_count),
            (
                "package_throttle_total_time_ms",
                a.package_time_ms,
                b.package_time_ms,
            ),
        ];
        for (name, before, after) in deltas {
            if after > before {
                reasons.push(format!(
                    "thermal_throttle {name} rose by {}",
                    after - before
                ));
            }
        }
    }
    for (i, dev) in inv.cooling_devices.iter().enumerate() {
        let peak = during
            .iter()
            .filter_map(|r| r.cooling_states.get(i).copied().flatten())
            .max();
        if let Some(s) = peak.filter(|&s| s > 0) {
            reasons.push(format!("cooling device {} reached state {s}", dev.kind));
        }
    }
    for (i, f) in inv.cpufreq.iter().enumerate() {
        let at_start = start.scaling_max_khz.get(i).copied().flatten();
        let lowest = during
            .iter()
            .filter_map(|r| r.scaling_max_khz.get(i).copied().flatten())
            .min();
        if let (Some(a), Some(l)) = (at_start, lowest)
            && l < a
        {
            reasons.push(format!(
                "cpu{} scaling_max_freq lowered from {} to {} MHz",
                f.cpu,
                a / 1000,
                l / 1000
            ));
        }
    }
    let freqs: Vec<Option<u64>> = during.iter().map(max_khz).collect();
    if let Some(r) = sustained_drop(&freqs) {
        reasons.push(r);
    }
    if let Some(r) = hot_and_slow(inv, during) {
        reasons.push(r);
    }
    if reasons.is_empty() {
        (
            Verdict::NoneObserved,
            vec![format!("watched: {}", watched(inv))],
        )
    } else {
        (Verdict::ThrottlingObserved, reasons)
    }
}

/// Three samples in a row more than 10 % below the best of the first three.
fn sustained_drop(freqs: &[Option<u64>]) -> Option<String> {
    let base = freqs.iter().take(3).flatten().copied().max()?;
    let limit = base as f64 * 0.9;
    let mut run = 0;
    for (i, f) in freqs.iter().enumerate().skip(3) {
        match f {
            Some(f) if (*f as f64) < limit => {
                run += 1;
                if run >= 3 {
                    return Some(format!(
                        "highest CPU frequency fell from {} to {} MHz and stayed there (sample {})",
                        base / 1000,
                        f / 1000,
                        i + 1
                    ));
                }
            }
            _ => run = 0,
        }
    }
    None
}

/// Frequency well below nominal while a temperature is near its limit.
fn hot_and_slow(inv: &Inventory, during: &[Reading]) -> Option<String> {
    let nominal = inv.cpufreq.iter().map(|f| f.max_khz).max()?;
    for r in during {
        let Some(cur) = max_khz(r) else { continue };
        if (cur as f64) >= nominal as f64 * 0.9 {
            continue;
        }
        for (s, t) in inv.temperatures.iter().zip(&r.temps_c) {
            if let (Some(limit), Some(t)) = (s.limit_c, t)
                && *t >= limit - 5.0
            {
                return Some(format!(
                    "CPU at {} MHz (nominal {}) while {} was {t:.1} °C (limit {limit:.1} °C)",
                    cur / 1000,
                    nominal / 1000,
                    s.name
                ));
            }
        }
    }
    None
}

fn watched(inv: &Inventory) -> String {
    let mut parts = Vec::new();
    if !inv.temperatures.is_empty() {
        parts.push(format!("{} temperature sensor(s)", inv.temperatures.len()));
    }
    if !inv.cooling_devices.is_empty() {
        parts.push(format!(
            "{} CPU cooling device(s)",
            inv.cooling_devices.len()
        ));
    }
    if !inv.cpufreq.is_empty() {
        parts.push(format!("cpufreq on {} CPU(s)", inv.cpufreq.len()));
    }
    if inv.thermal_throttle_cpus > 0 {
        parts.push(format!(
            "thermal_throttle counters on {} CPU(s)",
            inv.thermal_throttle_cpus
        ));
    }
    parts.join(", ")
}
