//! Samples taken during a stress run, and the final report.

use std::time::{Duration, Instant};

use serde::Serialize;

use super::StressConfig;
use super::memory::MemoryWorker;
use super::sensors::{CpuCooling, Inventory, Reading, TempSensor, ThrottleTotals};
use super::verdict::{Verdict, max_khz};

/// One interval's observations. Sensor fields are `null` when the machine lacks them.
#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct Sample {
    pub t_s: f64,
    pub max_temp_c: Option<f64>,
    pub max_freq_mhz: Option<f64>,
    pub(crate) min_freq_mhz: Option<f64>,
    /// Throttle counter increase (core + package counts) since the start.
    pub throttle_events: Option<u64>,
    /// Highest state of any CPU cooling device.
    pub(crate) cooling_state: Option<u64>,
    pub(crate) cpu_events_per_second: f64,
    pub(crate) memory_mib_per_second: f64,
}

impl Sample {
    /// A one-line summary for the progress display.
    pub(crate) fn line(&self) -> String {
        let mut s = format!(
            "{:.0} s: cpu {:.0} events/s, memory {:.0} MiB/s",
            self.t_s, self.cpu_events_per_second, self.memory_mib_per_second
        );
        if let Some(t) = self.max_temp_c {
            s.push_str(&format!(", {t:.1} °C"));
        }
        if let Some(f) = self.max_freq_mhz {
            s.push_str(&format!(", {f:.0} MHz"));
        }
        s
    }
}

/// Takes one [`Sample`] per interval and keeps the raw readings for the verdict.
pub(crate) struct Sampler<'a> {
    inv: &'a Inventory,
    first: &'a Reading,
    start: Instant,
    last: (Instant, u64, u64),
    readings: Vec<Reading>,
    samples: Vec<Sample>,
}

fn max_f(v: impl Iterator<Item = f64>) -> Option<f64> {
    v.fold(None, |m, x| Some(m.map_or(x, |m: f64| m.max(x))))
}

impl<'a> Sampler<'a> {
    pub(crate) fn new(inv: &'a Inventory, first: &'a Reading, start: Instant) -> Self {
        Self {
            inv,
            first,
            start,
            last: (start, 0, 0),
            readings: Vec::new(),
            samples: Vec::new(),
        }
    }

    pub(crate) fn take(&mut self, now: Instant, cpu_events: u64, mem_bytes: u64) -> &Sample {
        let r = self.inv.read();
        let dt = now.duration_since(self.last.0).as_secs_f64().max(1e-9);
        let throttle = match (self.first.throttle, r.throttle) {
            (Some(a), Some(b)) => Some(
                b.core_count.saturating_sub(a.core_count)
                    + b.package_count.saturating_sub(a.package_count),
            ),
            _ => None,
        };
        let sample = Sample {
            t_s: now.duration_since(self.start).as_secs_f64(),
            max_temp_c: max_f(r.temps_c.iter().flatten().copied()),
            max_freq_mhz: max_khz(&r).map(|k| k as f64 / 1000.0),
            min_freq_mhz: r.cur_khz.iter().flatten().min().map(|&k| k as f64 / 1000.0),
            throttle_events: throttle,
            cooling_state: r.cooling_states.iter().flatten().max().copied(),
            cpu_events_per_second: cpu_events.saturating_sub(self.last.1) as f64 / dt,
            memory_mib_per_second: mem_bytes.saturating_sub(self.last.2) as f64
                / dt
                / (1024.0 * 1024.0),
        };
        self.last = (now, cpu_events, mem_bytes);
        self.readings.push(r);
        self.samples.push(sample);
        self.samples.last().expect("just pushed")
    }

    pub(crate) fn finish(self) -> (Vec<Reading>, Vec<Sample>) {
        (self.readings, self.samples)
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct SensorSummary {
    pub temperatures: Vec<TempSensor>,
    pub(crate) cooling_devices: Vec<CpuCooling>,
    pub(crate) cpufreq_cpus: usize,
    pub thermal_throttle_cpus: usize,
}

/// Hottest sensor at the start, at its peak, and at the end (°C).
#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct TempSummary {
    pub start: Option<f64>,
    pub max: Option<f64>,
    pub end: Option<f64>,
}

/// Highest CPU frequency per sample (MHz), and the nominal maximum.
#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct FreqSummary {
    pub nominal: f64,
    pub(crate) start: Option<f64>,
    pub min: Option<f64>,
    pub max: Option<f64>,
    pub(crate) end: Option<f64>,
}

#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct CpuLoad {
    pub events: u64,
    pub(crate) events_per_second: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct MemorySummary {
    pub bytes: u64,
    pub bytes_written: u64,
    pub bytes_verified: u64,
    pub mismatches: u64,
    /// True when something was verified and every word read back as written.
    pub verified: bool,
    pub(crate) workers: Vec<MemoryWorker>,
}

#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct StressReport {
    pub(crate) duration_s: f64,
    pub(crate) cpu_workers: usize,
    pub(crate) vm_workers: usize,
    pub(crate) vm_bytes: u64,
    pub verdict: Verdict,
    pub reasons: Vec<String>,
    pub sensors: SensorSummary,
    pub temperature_c: Option<TempSummary>,
    pub frequency_mhz: Option<FreqSummary>,
    pub throttle_delta: Option<ThrottleTotals>,
    pub cpu: CpuLoad,
    pub memory: MemorySummary,
    pub samples: Vec<Sample>,
    pub cancelled: bool,
}

pub(crate) struct Parts<'a> {
    pub(crate) cfg: &'a StressConfig,
    pub(crate) vm_bytes: u64,
    pub(crate) elapsed: Duration,
    pub(crate) inv: &'a Inventory,
    pub(crate) first: &'a Reading,
    pub(crate) readings: &'a [Reading],
    pub(crate) samples: Vec<Sample>,
    pub(crate) verdict: Verdict,
    pub(crate) reasons: Vec<String>,
    pub(crate) cpu_events: u64,
    pub(crate) memory: Vec<MemoryWorker>,
    pub(crate) cancelled: bool,
}

pub(crate) fn build(p: Parts<'_>) -> StressReport {
    let hottest = |r: &Reading| max_f(r.temps_c.iter().flatten().copied());
    let temperature_c = (!p.inv.temperatures.is_empty()).then(|| TempSummary {
        start: hottest(p.first),
        max: max_f(p.readings.iter().filter_map(hottest)),
        end: p.readings.last().and_then(hottest),
    });
    let mhz = |r: &Reading| max_khz(r).map(|k| k as f64 / 1000.0);
    let per_sample: Vec<f64> = p.readings.iter().filter_map(mhz).collect();
    let frequency_mhz = p
        .inv
        .cpufreq
        .iter()
        .map(|f| f.max_khz)
        .max()
        .map(|nominal| FreqSummary {
            nominal: nominal as f64 / 1000.0,
            start: mhz(p.first),
            min: per_sample.iter().copied().reduce(f64::min),
            max: per_sample.iter().copied().reduce(f64::max),
            end: p.readings.last().and_then(mhz),
        });
    let throttle_delta = match (p.first.throttle, p.readings.last().and_then(|r| r.throttle)) {
        (Some(a), Some(b)) => Some(ThrottleTotals {
            core_count: b.core_count.saturating_sub(a.core_count),
            core_time_ms: b.core_time_ms.saturating_sub(a.core_time_ms),
            package_count: b.package_count.saturating_sub(a.package_count),
            package_time_ms: b.package_time_ms.saturating_sub(a.package_time_ms),
        }),
        _ => None,
    };
    let secs = p.elapsed.as_secs_f64();
    let sum = |f: fn(&MemoryWorker) -> u64| p.memory.iter().map(f).sum::<u64>();
    let (verified_bytes, mismatches) = (sum(|w| w.bytes_verified), sum(|w| w.mismatches));
    StressReport {
        duration_s: secs,
        cpu_workers: p.cfg.cpu_workers,
        vm_workers: p.memory.len(),
        vm_bytes: p.vm_bytes,
        verdict: p.verdict,
        reasons: p.reasons,
        sensors: SensorSummary {
            temperatures: p.inv.temperatures.clone(),
            cooling_devices: p.inv.cooling_devices.clone(),
            cpufreq_cpus: p.inv.cpufreq.len(),
            thermal_throttle_cpus: p.inv.thermal_throttle_cpus,
        },
        temperature_c,
        frequency_mhz,
        throttle_delta,
        cpu: CpuLoad {
            events: p.cpu_events,
            events_per_second: if secs > 0.0 {
                p.cpu_events as f64 / secs
            } else {
                0.0
            },
        },
        memory: MemorySummary {
            bytes: p.vm_bytes,
            bytes_written: sum(|w| w.bytes_written),
            bytes_verified: verified_bytes,
            mismatches,
            verified: verified_bytes > 0 && mismatches == 0,
            workers: p.memory,
        },
        samples: p.samples,
        cancelled: p.cancelled,
    }
}
