//! What the kernel exposes about temperature, frequency and throttling, read from sysfs.
//! Nothing here invents a value: a sensor that is absent or
//! unreadable is `None`, and a machine with none of them is "not observable".
//!
//! - hwmon: `class/hwmon/hwmonN/{name, tempK_input, tempK_max, tempK_crit, tempK_label}` (m°C)
//! - thermal zones: `class/thermal/thermal_zoneN/{type, temp, trip_point_K_{temp,type}}`
//! - cooling devices: `class/thermal/cooling_deviceN/{type, cur_state, max_state}`
//! - cpufreq: `devices/system/cpu/cpuN/cpufreq/{scaling_cur_freq, cpuinfo_max_freq, scaling_max_freq}` (kHz)
//! - Intel throttle counters: `devices/system/cpu/cpuN/thermal_throttle/{core,package}_throttle_{count,total_time_ms}`
//!   (cumulative since boot; package ones counted once per `topology/physical_package_id`)

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde::Serialize;

/// One temperature sensor, with the limits the kernel gives for it (°C).
#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct TempSensor {
    /// `hwmon:<name>/<label>` or `zone:<type>`.
    pub(crate) name: String,
    #[serde(skip)]
    pub(crate) input: PathBuf,
    /// The lowest of max/crit (hwmon) or passive/hot/critical trip points (zones).
    pub limit_c: Option<f64>,
}

/// A cooling device that throttles the CPU when its state is above 0.
#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
pub(crate) struct CpuCooling {
    pub(crate) kind: String,
    #[serde(skip)]
    pub(crate) cur_state: PathBuf,
}

/// One CPU's cpufreq files.
#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
pub(crate) struct CpuFreq {
    pub(crate) cpu: u32,
    pub(crate) max_khz: u64,
    #[serde(skip)]
    pub(crate) dir: PathBuf,
}

/// Everything found under the sysfs root at the start of a run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, serde::Deserialize)]
pub(crate) struct Inventory {
    pub(crate) temperatures: Vec<TempSensor>,
    pub(crate) cooling_devices: Vec<CpuCooling>,
    pub(crate) cpufreq: Vec<CpuFreq>,
    /// `cpuN/thermal_throttle` directories; `bool` = counts the package counters.
    #[serde(skip)]
    pub(crate) throttle_dirs: Vec<(PathBuf, bool)>,
    pub(crate) thermal_throttle_cpus: usize,
}

/// One reading of every sensor in an [`Inventory`], in the same order.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Reading {
    pub(crate) temps_c: Vec<Option<f64>>,
    pub(crate) cooling_states: Vec<Option<u64>>,
    pub(crate) cur_khz: Vec<Option<u64>>,
    pub(crate) scaling_max_khz: Vec<Option<u64>>,
    /// Sums of the throttle counters (None without thermal_throttle directories).
    pub(crate) throttle: Option<ThrottleTotals>,
}

/// Throttle counters summed over CPUs (package counters once per package).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct ThrottleTotals {
    pub core_count: u64,
    pub core_time_ms: u64,
    pub package_count: u64,
    pub(crate) package_time_ms: u64,
}

fn read_trim(p: &Path) -> Option<String> {
    std::fs::read_to_string(p)
        .ok()
        .map(|s| s.trim().to_string())
}

fn read_u64(p: &Path) -> Option<u64> {
    read_trim(p)?.parse().ok()
}

fn read_milli_c(p: &Path) -> Option<f64> {
    parse_milli_c(&read_trim(p)?)
}

/// A hwmon/thermal temperature file's text (millidegrees Celsius) in °C.
pub(crate) fn parse_milli_c(text: &str) -> Option<f64> {
    let v: i64 = text.trim().parse().ok()?;
    Some(v as f64 / 1000.0)
}

impl ThrottleTotals {
    /// Add one CPU's counters (saturating: sysfs counters are any u64).
    pub(crate) fn add(&mut self, core: (u64, u64), package: Option<(u64, u64)>) {
        self.core_count = self.core_count.saturating_add(core.0);
        self.core_time_ms = self.core_time_ms.saturating_add(core.1);
        if let Some((count, time_ms)) = package {
            self.package_count = self.package_count.saturating_add(count);
            self.package_time_ms = self.package_time_ms.saturating_add(time_ms);
        }
    }
}

/// Directory entries of `dir` whose name is `prefix` followed by a number, sorted by it.
fn numbered(dir: &Path, prefix: &str) -> Vec<(u32, PathBuf)> {
    let mut v: Vec<(u32, PathBuf)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let n = name.strip_prefix(prefix)?.parse().ok()?;
            Some((n, e.path()))
        })
        .collect();
    v.sort();
    v
}

fn min_opt(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, None) => x,
        (None, y) => y,
    }
}

impl Inventory {
    /// Look for every sensor under `root` (normally `/sys`). Only sensors that can be
    /// read right now are kept.
    pub(crate) fn discover(root: &Path) -> Self {
        let mut inv = Inventory::default();
        for (_, hw) in numbered(&root.join("class/hwmon"), "hwmon") {
            let chip = read_trim(&hw.join("name")).unwrap_or_else(|| "hwmon".into());
            for k in numbered_files(&hw, "temp", "_input") {
                let input = hw.join(format!("temp{k}_input"));
                if read_milli_c(&input).is_none() {
                    continue;
                }
                let label = read_trim(&hw.join(format!("temp{k}_label")))
                    .unwrap_or_else(|| format!("temp{k}"));
                let limit = min_opt(
                    read_milli_c(&hw.join(format!("temp{k}_max"))),
                    read_milli_c(&hw.join(format!("temp{k}_crit"))),
                );
                inv.temperatures.push(TempSensor {
                    name: format!("hwmon:{chip}/{label}"),
                    input,
                    limit_c: limit,
                });
            }
        }
        let thermal = root.join("class/thermal");
        for (_, zone) in numbered(&thermal, "thermal_zone") {
            let input = zone.join("temp");
            if read_milli_c(&input).is_none() {
                continue;
            }
            let kind = read_trim(&zone.join("type")).unwrap_or_else(|| "zone".into());
            let mut limit = None;
            for k in numbered_files(&zone, "trip_point_", "_type") {
                let t = read_trim(&zone.join(format!("trip_point_{k}_type")));
                if matches!(t.as_deref(), Some("passive" | "hot" | "critical")) {
                    limit = min_opt(
                        limit,
                        read_milli_c(&zone.join(format!("trip_point_{k}_temp"))),
                    );
                }
            }
            inv.temperatures.push(TempSensor {
                name: format!("zone:{kind}"),
                input,
                limit_c: limit,
            });
        }
        for (_, dev) in numbered(&thermal, "cooling_device") {
            let kind = read_trim(&dev.join("type")).unwrap_or_default();
            let cpu_kind =
                kind == "Processor" || kind.starts_with("cpufreq") || kind == "intel_powerclamp";
            let cur_state = dev.join("cur_state");
            if cpu_kind && read_u64(&cur_state).is_some() {
                inv.cooling_devices.push(CpuCooling { kind, cur_state });
            }
        }
        let mut packages = BTreeSet::new();
        for (cpu, dir) in numbered(&root.join("devices/system/cpu"), "cpu") {
            let freq = dir.join("cpufreq");
            if let Some(max_khz) = read_u64(&freq.join("cpuinfo_max_freq"))
                && read_u64(&freq.join("scaling_cur_freq")).is_some()
            {
                inv.cpufreq.push(CpuFreq {
                    cpu,
                    max_khz,
                    dir: freq,
                });
            }
            let tt = dir.join("thermal_throttle");
            if read_u64(&tt.join("core_throttle_count")).is_some() {
                let pkg = read_trim(&dir.join("topology/physical_package_id")).unwrap_or_default();
                let first_of_package = packages.insert(pkg);
                inv.throttle_dirs.push((tt, first_of_package));
            }
        }
        inv.thermal_throttle_cpus = inv.throttle_dirs.len();
        inv
    }

    /// Whether anything at all can show throttling on this machine.
    pub(crate) fn observable(&self) -> bool {
        !(self.temperatures.is_empty()
            && self.cooling_devices.is_empty()
            && self.cpufreq.is_empty()
            && self.throttle_dirs.is_empty())
    }

    /// Read every sensor now.
    pub(crate) fn read(&self) -> Reading {
        let throttle = (!self.throttle_dirs.is_empty()).then(|| {
            let mut t = ThrottleTotals::default();
            for (dir, with_package) in &self.throttle_dirs {
                let r = |f: &str| read_u64(&dir.join(f)).unwrap_or(0);
                let core = (r("core_throttle_count"), r("core_throttle_total_time_ms"));
                let package = with_package.then(|| {
                    (
                        r("package_throttle_count"),
                        r("package_throttle_total_time_ms"),
                    )
                });
                t.add(core, package);
            }
            t
        });
        Reading {
            temps_c: self
                .temperatures
                .iter()
                .map(|s| read_milli_c(&s.input))
                .collect(),
            cooling_states: self
                .cooling_devices
                .iter()
                .map(|c| read_u64(&c.cur_state))
                .collect(),
            cur_khz: self
                .cpufreq
                .iter()
                .map(|f| read_u64(&f.dir.join("scaling_cur_freq")))
                .collect(),
            scaling_max_khz: self
                .cpufreq
                .iter()
                .map(|f| read_u64(&f.dir.join("scaling_max_freq")))
                .collect(),
            throttle,
        }
    }
}

/// Numbers `k` of files named `<prefix>k<suffix>` in `dir`, sorted.
fn numbered_files(dir: &Path, prefix: &str, suffix: &str) -> Vec<u32> {
    let mut v: Vec<u32> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            name.strip_prefix(prefix)?
                .strip_suffix(suffix)?
                .parse()
                .ok()
        })
        .collect();
    v.sort();
    v.dedup();
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn throttle_totals_saturate_and_temperatures_parse() {
        let mut t = ThrottleTotals::default();
        t.add((u64::MAX, 1), Some((u64::MAX - 1, 2)));
        t.add((5, 1), Some((5, 2)));
        assert_eq!((t.core_count, t.core_time_ms), (u64::MAX, 2));
        assert_eq!((t.package_count, t.package_time_ms), (u64::MAX, 4));
        assert_eq!(parse_milli_c(" 45500\n"), Some(45.5));
        assert_eq!(parse_milli_c("hot"), None);
    }
}
