//! The stress test: real load and the real /sys of this machine, plus sysfs trees built
//! by the test to check that throttling is recognised when sensors do show it.

mod common;

use common::hlctl;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use hlctl::bench::progress::{Cancel, NoProgress};
use hlctl::bench::stress::{self, MemAmount, StressConfig, Verdict, memory};

fn cfg(secs: f64, cpu: usize, vm_mib: u64) -> StressConfig {
    let mut c = StressConfig::new();
    c.time = Duration::from_secs_f64(secs);
    c.cpu_workers = cpu;
    c.vm_workers = usize::from(vm_mib > 0);
    c.vm_bytes = MemAmount::Bytes(vm_mib << 20);
    c.interval = Duration::from_millis(500);
    c
}

/// Whether any readable sensor of the kinds the stress test watches exists under /sys,
/// found with plain globbing here (independently of the library).
fn sys_has_sensors() -> bool {
    let readable = |p: &Path| {
        std::fs::read_to_string(p)
            .map(|s| !s.trim().is_empty())
            .unwrap_or(false)
    };
    let entries = |d: &str| -> Vec<std::path::PathBuf> {
        std::fs::read_dir(d)
            .map(|r| r.flatten().map(|e| e.path()).collect())
            .unwrap_or_default()
    };
    let hwmon = entries("/sys/class/hwmon").iter().any(|h| {
        entries(h.to_str().unwrap()).iter().any(|f| {
            let n = f.file_name().unwrap().to_string_lossy().to_string();
            n.starts_with("temp") && n.ends_with("_input") && readable(f)
        })
    });
    let thermal = entries("/sys/class/thermal").iter().any(|z| {
        let n = z.file_name().unwrap().to_string_lossy().to_string();
        (n.starts_with("thermal_zone") && readable(&z.join("temp")))
            || (n.starts_with("cooling_device") && {
                let t = std::fs::read_to_string(z.join("type")).unwrap_or_default();
                let t = t.trim();
                t == "Processor" || t.starts_with("cpufreq") || t == "intel_powerclamp"
            })
    });
    let cpus = entries("/sys/devices/system/cpu").into_iter().filter(|c| {
        let n = c.file_name().unwrap().to_string_lossy().to_string();
        n.strip_prefix("cpu")
            .is_some_and(|d| d.parse::<u32>().is_ok())
    });
    let cpu_sensors = cpus.into_iter().any(|c| {
        (readable(&c.join("cpufreq/scaling_cur_freq"))
            && readable(&c.join("cpufreq/cpuinfo_max_freq")))
            || readable(&c.join("thermal_throttle/core_throttle_count"))
    });
    hwmon || thermal || cpu_sensors
}

#[test]
fn short_run_on_this_machine() {
    let r = stress::run(&cfg(2.0, 1, 32), &NoProgress, Cancel::new()).expect("run");
    if sys_has_sensors() {
        assert_ne!(
            r.verdict,
            Verdict::NotObservable,
            "sensors exist: {:?}",
            r.sensors
        );
    } else {
        assert_eq!(r.verdict, Verdict::NotObservable);
        assert!(
            r.temperature_c.is_none() && r.frequency_mhz.is_none() && r.throttle_delta.is_none()
        );
        assert!(
            r.samples
                .iter()
                .all(|s| s.max_temp_c.is_none() && s.max_freq_mhz.is_none())
        );
    }
    assert!(r.samples.len() >= 3, "{} samples", r.samples.len());
    assert!(r.samples.windows(2).all(|w| w[0].t_s < w[1].t_s));
    assert!(r.cpu.events > 0);
    let m = &r.memory;
    assert_eq!(m.bytes, 32 << 20);
    assert!(m.bytes_verified > 0, "nothing verified: {m:?}");
    assert!(m.bytes_verified <= m.bytes_written);
    assert_eq!(m.mismatches, 0);
    assert!(m.verified);
    let v = serde_json::to_value(&r).unwrap();
    let verdict = v["verdict"].as_str().unwrap();
    assert!(
        [
            "throttling observed",
            "none observed",
            "not observable on this machine"
        ]
        .contains(&verdict)
    );
}

#[test]
fn memory_verify_catches_a_flipped_bit() {
    let mut buf = vec![0u64; 4096];
    memory::fill(&mut buf, 100, 7);
    assert_eq!(memory::verify(&buf, 100, 7).0, 0);
    buf[1234] ^= 1 << 40;
    let (bad, first) = memory::verify(&buf, 100, 7);
    assert_eq!(bad, 1);
    let (idx, expected, found) = first.unwrap();
    assert_eq!(idx, 1234);
    assert_eq!(expected ^ found, 1 << 40);
    // And a pattern checked against the wrong pass fails everywhere.
    assert_eq!(memory::verify(&buf, 100, 8).0, 4096);
}

/// A fake sysfs tree: two CPUs in one package with throttle counters, cpufreq and an hwmon sensor.
fn fake_sysfs(root: &Path, khz: u64) {
    let w = |p: &str, v: &str| {
        let p = root.join(p);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, format!("{v}\n")).unwrap();
    };
    for cpu in 0..2 {
        let d = format!("devices/system/cpu/cpu{cpu}");
        w(&format!("{d}/thermal_throttle/core_throttle_count"), "5");
        w(
            &format!("{d}/thermal_throttle/core_throttle_total_time_ms"),
            "100",
        );
        w(&format!("{d}/thermal_throttle/package_throttle_count"), "9");
        w(
            &format!("{d}/thermal_throttle/package_throttle_total_time_ms"),
            "300",
        );
        w(&format!("{d}/topology/physical_package_id"), "0");
        w(&format!("{d}/cpufreq/scaling_cur_freq"), &khz.to_string());
        w(&format!("{d}/cpufreq/cpuinfo_max_freq"), "3000000");
        w(&format!("{d}/cpufreq/scaling_max_freq"), "3000000");
    }
    w("class/hwmon/hwmon0/name", "k10temp");
    w("class/hwmon/hwmon0/temp1_input", "45000");
    w("class/hwmon/hwmon0/temp1_label", "Tctl");
    w("class/hwmon/hwmon0/temp1_crit", "95000");
}

fn fake_cfg(root: &Path) -> StressConfig {
    let mut c = cfg(1.6, 0, 0);
    c.interval = Duration::from_millis(100);
    c.sysfs_root = root.to_path_buf();
    c
}

#[test]
fn steady_sensors_give_none_observed_with_real_figures() {
    let root = tempfile::tempdir().unwrap();
    fake_sysfs(root.path(), 3_000_000);
    let r = stress::run(&fake_cfg(root.path()), &NoProgress, Cancel::new()).expect("run");
    assert_eq!(r.verdict, Verdict::NoneObserved, "{:?}", r.reasons);
    let t = r.temperature_c.expect("temperature");
    assert_eq!(
        (t.start, t.max, t.end),
        (Some(45.0), Some(45.0), Some(45.0))
    );
    let f = r.frequency_mhz.expect("frequency");
    assert_eq!(
        (f.nominal, f.min, f.max),
        (3000.0, Some(3000.0), Some(3000.0))
    );
    assert_eq!(r.sensors.thermal_throttle_cpus, 2);
    assert_eq!(r.sensors.temperatures[0].limit_c, Some(95.0));
    assert_eq!(r.throttle_delta.map(|d| d.core_count), Some(0));
}

#[test]
fn rising_throttle_counter_is_throttling() {
    let root = tempfile::tempdir().unwrap();
    fake_sysfs(root.path(), 3_000_000);
    let p = root.path().to_path_buf();
    let bump = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(500));
        let cpu0 = p.join("devices/system/cpu/cpu0/thermal_throttle");
        std::fs::write(cpu0.join("core_throttle_count"), "7\n").unwrap();
        // Package counters are per package: the copy on cpu1 must not be counted twice.
        for cpu in ["cpu0", "cpu1"] {
            let d = p
                .join("devices/system/cpu")
                .join(cpu)
                .join("thermal_throttle");
            std::fs::write(d.join("package_throttle_count"), "10\n").unwrap();
        }
    });
    let r = stress::run(&fake_cfg(root.path()), &NoProgress, Cancel::new()).expect("run");
    bump.join().unwrap();
    assert_eq!(r.verdict, Verdict::ThrottlingObserved);
    assert!(
        r.reasons
            .iter()
            .any(|x| x.contains("core_throttle_count rose by 2")),
        "{:?}",
        r.reasons
    );
    let d = r.throttle_delta.unwrap();
    assert_eq!((d.core_count, d.package_count, d.core_time_ms), (2, 1, 0));
    assert_eq!(r.samples.last().unwrap().throttle_events, Some(3));
}

#[test]
fn sustained_frequency_drop_is_throttling() {
    let root = tempfile::tempdir().unwrap();
    fake_sysfs(root.path(), 3_000_000);
    let p = root.path().to_path_buf();
    let slow = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(550));
        for cpu in ["cpu0", "cpu1"] {
            let f = p
                .join("devices/system/cpu")
                .join(cpu)
                .join("cpufreq/scaling_cur_freq");
            std::fs::write(f, "2000000\n").unwrap();
        }
    });
    let r = stress::run(&fake_cfg(root.path()), &NoProgress, Cancel::new()).expect("run");
    slow.join().unwrap();
    assert_eq!(r.verdict, Verdict::ThrottlingObserved, "{:?}", r.reasons);
    assert!(
        r.reasons.iter().any(|x| x.contains("3000 to 2000 MHz")),
        "{:?}",
        r.reasons
    );
    assert_eq!(r.frequency_mhz.unwrap().min, Some(2000.0));
}

#[test]
fn cancel_returns_a_summary() {
    let cancel = Cancel::new();
    let c2 = cancel.clone();
    let t0 = Instant::now();
    let h = std::thread::spawn(move || stress::run(&cfg(60.0, 1, 16), &NoProgress, c2));
    std::thread::sleep(Duration::from_millis(1200));
    cancel.cancel();
    let r = h.join().unwrap().expect("report");
    assert!(r.cancelled);
    assert!(t0.elapsed() < Duration::from_secs(10));
    assert!(r.memory.verified, "{:?}", r.memory);
}

#[test]
fn cli_json_and_bad_input() {
    let out = hlctl(&[
        "--json",
        "bench",
        "stress",
        "--time",
        "1.2",
        "--cpu",
        "1",
        "--vm-bytes",
        "16M",
        "--interval",
        "0.4",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    for k in [
        "verdict",
        "reasons",
        "samples",
        "memory",
        "cpu",
        "sensors",
        "duration_s",
    ] {
        assert!(v.get(k).is_some(), "missing {k}");
    }
    assert_eq!(v["memory"]["verified"], true);
    assert_eq!(v["memory"]["bytes"], 16 << 20);
    for (args, flag) in [
        (&["--vm-bytes", "95%"][..], "--vm-bytes"),
        (&["--cpu", "x"][..], "--cpu"),
        (&["--time", "never"][..], "--time"),
    ] {
        let mut a = vec!["bench", "stress"];
        a.extend_from_slice(args);
        let out = hlctl(&a);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(flag), "{args:?}: {err}");
    }
}

#[test]
fn cli_ctrl_c_prints_the_summary() {
    let child = Command::new(env!("CARGO_BIN_EXE_hlctl"))
        .args([
            "bench",
            "stress",
            "--time",
            "60",
            "--cpu",
            "1",
            "--vm-bytes",
            "16M",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start hlctl");
    std::thread::sleep(Duration::from_millis(1500));
    let t0 = Instant::now();
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT)
        .expect("send SIGINT to our child");
    let out = child.wait_with_output().expect("wait");
    assert!(
        t0.elapsed() < Duration::from_secs(10),
        "Ctrl-C was not prompt"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("verdict"), "{stdout}");
    assert!(stdout.contains("cancelled before the end"), "{stdout}");
    assert!(
        stdout.contains("every word read back as written"),
        "{stdout}"
    );
}
