//! CPU frequency governor and thermal throttling (during a short stress when
//! the stress benchmark is available).

use std::path::Path;

use super::finding::{Finding, Outcome, Severity};
use super::inputs::CpuData;

/// Read governors, the scaling driver and throttle counts below `sys_cpu`
/// (`/sys/devices/system/cpu`).
pub(crate) fn read(sys_cpu: &Path) -> CpuData {
    let mut d = CpuData::default();
    let Ok(entries) = std::fs::read_dir(sys_cpu) else {
        return d;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(n) = name.strip_prefix("cpu").and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        let p = e.path();
        let read = |rel: &str| std::fs::read_to_string(p.join(rel)).ok();
        add_cpu(
            &mut d,
            n,
            CpuFiles {
                governor: read("cpufreq/scaling_governor"),
                driver: read("cpufreq/scaling_driver"),
                max_freq: read("cpufreq/cpuinfo_max_freq"),
                throttle_count: read("thermal_throttle/core_throttle_count"),
            },
        );
    }
    d
}

/// What one `cpuN` directory of sysfs holds, as read (untrimmed).
#[derive(Debug, Default)]
pub(crate) struct CpuFiles {
    pub(crate) governor: Option<String>,
    pub(crate) driver: Option<String>,
    pub(crate) max_freq: Option<String>,
    pub(crate) throttle_count: Option<String>,
}

/// Fold CPU `n`'s files into `d`: its governor, the first scaling driver,
/// the highest maximum frequency, and the throttle count added to the total
/// (saturating: a counter from sysfs is any u64).
pub(crate) fn add_cpu(d: &mut CpuData, n: u32, f: CpuFiles) {
    let trim = |s: Option<String>| s.map(|s| s.trim().to_string());
    if let Some(g) = trim(f.governor) {
        d.governors.insert(n, g);
    }
    if d.scaling_driver.is_none() {
        d.scaling_driver = trim(f.driver);
    }
    if let Some(m) = trim(f.max_freq).and_then(|v| v.parse::<u64>().ok()) {
        d.freq_max_khz = Some(d.freq_max_khz.map_or(m, |x| x.max(m)));
    }
    if let Some(c) = trim(f.throttle_count).and_then(|v| v.parse::<u64>().ok()) {
        d.throttle_before = Some(d.throttle_before.unwrap_or(0).saturating_add(c));
    }
}

pub(crate) fn check(cpu: Option<&CpuData>, out: &mut Outcome) {
    let Some(c) = cpu else {
        out.skip("cpu", None, "not read");
        return;
    };
    if c.governors.is_empty() {
        out.skip(
            "cpu-governor",
            None,
            "no cpufreq in /sys (a VM, or a CPU without frequency scaling)",
        );
    } else {
        let slow: Vec<String> = c
            .governors
            .iter()
            .filter(|(_, g)| g.as_str() == "powersave")
            .map(|(n, _)| format!("cpu{n}"))
            .collect();
        let driver = c.scaling_driver.as_deref().unwrap_or("unknown");
        // intel_pstate/amd-pstate "powersave" is the hardware-managed default, not a cap.
        let hw_managed = driver.starts_with("intel_pstate") || driver.starts_with("amd-pstate");
        if !slow.is_empty() && !hw_managed {
            out.find(
                Finding::new("cpu-governor-powersave", Severity::Warning, None, format!("CPU governor powersave on {} of {} CPUs", slow.len(), c.governors.len()))
                    .evidence("scaling_driver", driver)
                    .evidence("powersave on", slow.join(" "))
                    .why("with the powersave governor of this driver the CPU stays at its lowest frequency: packet processing, checksums and encryption slow down")
                    .fix("# set the performance or schedutil governor (cpupower frequency-set -g schedutil); hlctl does not change CPU settings"),
            );
        } else {
            let mut gs: Vec<&str> = c.governors.values().map(String::as_str).collect();
            gs.dedup();
            out.pass(
                "cpu-governor",
                None,
                format!("{} ({driver})", gs.join(", ")),
            );
        }
    }
    match (c.throttle_before, c.throttle_after) {
        (Some(a), Some(b)) if b > a => out.find(
            Finding::new("cpu-throttled", Severity::Warning, None, format!("CPU throttled {} times during a short stress", b - a))
                .evidence("core_throttle_count", format!("{a} → {b}"))
                .evidence("lowest frequency during stress", c.freq_during_stress_khz.map_or("-".into(), |f| format!("{} MHz", f / 1000)))
                .evidence("maximum frequency", c.freq_max_khz.map_or("-".into(), |f| format!("{} MHz", f / 1000)))
                .why("the CPU slows itself down to cool off: benchmarks and transfers drop under sustained load")
                .fix("# check cooling: airflow, fans, heatsink paste"),
        ),
        (Some(a), Some(_)) => out.pass("cpu-throttle", None, format!("no throttling during the stress ({a} events since boot)")),
        (None, _) => out.skip("cpu-throttle", None, c.stress_skipped.clone().unwrap_or_else(|| "no thermal_throttle counters in /sys".into())),
        (Some(_), None) => out.skip("cpu-throttle", None, c.stress_skipped.clone().unwrap_or_else(|| "no stress was run".into())),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn throttle_counts_past_u64_max_saturate() {
        let mut d = CpuData::default();
        for n in 0..2 {
            add_cpu(
                &mut d,
                n,
                CpuFiles {
                    throttle_count: Some(format!("{}\n", u64::MAX)),
                    max_freq: Some(" 3400000\n".into()),
                    ..Default::default()
                },
            );
        }
        assert_eq!(d.throttle_before, Some(u64::MAX));
        assert_eq!(d.freq_max_khz, Some(3_400_000));
    }

    use super::*;

    #[test]
    fn reads_a_fake_sysfs() {
        let dir = tempfile::tempdir().unwrap();
        for n in 0..2 {
            let p = dir.path().join(format!("cpu{n}"));
            std::fs::create_dir_all(p.join("cpufreq")).unwrap();
            std::fs::create_dir_all(p.join("thermal_throttle")).unwrap();
            std::fs::write(p.join("cpufreq/scaling_governor"), "powersave\n").unwrap();
            std::fs::write(p.join("cpufreq/scaling_driver"), "acpi-cpufreq\n").unwrap();
            std::fs::write(p.join("thermal_throttle/core_throttle_count"), "3\n").unwrap();
        }
        let d = read(dir.path());
        assert_eq!(d.governors.len(), 2);
        assert_eq!(d.throttle_before, Some(6));
        let mut out = Outcome::default();
        check(Some(&d), &mut out);
        assert_eq!(out.findings.len(), 1);
        assert_eq!(out.findings[0].id, "cpu-governor-powersave");
    }
}
