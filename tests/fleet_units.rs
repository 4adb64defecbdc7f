//! The shipped fleet files: the systemd units pass `systemd-analyze verify`,
//! the generator turns hlctl.toml into the timer's schedule and the enabled
//! units, hlctl-serve's socket activation works (`systemd-socket-activate`
//! hands the socket over; one test at a time; it exits when idle), and the
//! Prometheus alert rules pass `promtool check rules` and `promtool test rules`.

mod common;

use common::run;

use common::output_text as text;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::NetNs;
use common::lab::{ChildGuard, HLCTL};

fn file(rel: &str) -> String {
    format!("{}/{rel}", env!("CARGO_MANIFEST_DIR"))
}

const UNITS: [&str; 5] = [
    "hlctl-check.service",
    "hlctl-check.timer",
    "hlctl-check-boot.service",
    "hlctl-serve.socket",
    "hlctl-serve.service",
];

#[test]
fn units_verify_and_say_what_the_issue_asks() {
    let dir = tempfile::tempdir().unwrap();
    let mut copies = Vec::new();
    for u in UNITS {
        let t = std::fs::read_to_string(file(&format!("systemd/{u}"))).unwrap();
        let p = dir.path().join(u);
        // `verify` checks that ExecStart= exists: point the copies at the build.
        std::fs::write(&p, t.replace("/usr/bin/hlctl", HLCTL)).unwrap();
        copies.push(p.display().to_string());
    }
    let mut args = vec!["verify", "--man=no"];
    args.extend(copies.iter().map(String::as_str));
    let o = run("systemd-analyze", &args);
    assert!(o.status.success() && o.stderr.is_empty(), "{}", text(&o));
    let timer = std::fs::read_to_string(file("systemd/hlctl-check.timer")).unwrap();
    for l in [
        "OnCalendar=weekly",
        "Persistent=yes",
        "RandomizedDelaySec=3600",
    ] {
        assert!(timer.lines().any(|x| x == l), "{l}");
    }
    let socket = std::fs::read_to_string(file("systemd/hlctl-serve.socket")).unwrap();
    assert!(socket.lines().any(|x| x == "ListenStream=5201"));
    assert!(socket.lines().any(|x| x == "Accept=no"));
    // A broken unit is caught.
    std::fs::write(
        &copies[1],
        timer.replace("Persistent=yes", "Persistent=maybe"),
    )
    .unwrap();
    let o = run("systemd-analyze", &["verify", "--man=no", &copies[1]]);
    assert!(!o.stderr.is_empty(), "a bad Persistent= went unnoticed");
}

#[test]
fn generator_writes_the_schedule_and_enables_what_the_file_says() {
    let dir = tempfile::tempdir().unwrap();
    let conf = dir.path().join("hlctl.toml");
    std::fs::write(
        &conf,
        "[check]\npeers = [\"nas.lan\"]\nschedule = \"Sun *-*-* 03:00\"\nrandomized_delay_s = 900\n\n[serve]\nenable = true\n",
    )
    .unwrap();
    let out = dir.path().join("gen");
    let o = run(
        HLCTL,
        &[
            "--config",
            conf.to_str().unwrap(),
            "config",
            "systemd-generator",
            out.to_str().unwrap(),
            "/tmp/early",
            "/tmp/late",
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    let dropin =
        std::fs::read_to_string(out.join("hlctl-check.timer.d/50-hlctl-config.conf")).unwrap();
    assert!(
        dropin
            .contains("[Timer]\nOnCalendar=\nOnCalendar=Sun *-*-* 03:00\nRandomizedDelaySec=900\n"),
        "{dropin}"
    );
    let o = run("systemd-analyze", &["calendar", "Sun *-*-* 03:00"]);
    assert!(o.status.success(), "{}", text(&o));
    for (link, unit) in [
        ("timers.target.wants/hlctl-check.timer", "hlctl-check.timer"),
        (
            "multi-user.target.wants/hlctl-check-boot.service",
            "hlctl-check-boot.service",
        ),
        (
            "sockets.target.wants/hlctl-serve.socket",
            "hlctl-serve.socket",
        ),
    ] {
        let t = std::fs::read_link(out.join(link)).unwrap_or_else(|e| panic!("{link}: {e}"));
        assert_eq!(
            t,
            std::path::Path::new("/usr/lib/systemd/system").join(unit)
        );
    }
    // Serve is off by default: no socket link.
    std::fs::write(&conf, "[check]\ncpu = true\n").unwrap();
    let out2 = dir.path().join("gen2");
    let o = run(
        HLCTL,
        &[
            "--config",
            conf.to_str().unwrap(),
            "config",
            "systemd-generator",
            out2.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    assert!(!out2.join("sockets.target.wants").exists());
    assert!(std::fs::symlink_metadata(out2.join("timers.target.wants/hlctl-check.timer")).is_ok());
}

#[test]
fn serve_socket_activation_one_test_at_a_time_and_exit_when_idle() {
    common::require_root("this test");
    let ns = NetNs::new();
    let state = tempfile::tempdir().unwrap();
    let log = state.path().join("activate.log");
    let f = std::fs::File::create(&log).unwrap();
    // What hlctl-serve.socket + hlctl-serve.service do, without PID 1 systemd.
    let unit = std::fs::read_to_string(file("systemd/hlctl-serve.service")).unwrap();
    let exec = unit
        .lines()
        .find_map(|l| l.strip_prefix("ExecStart="))
        .unwrap()
        .replace("/usr/bin/hlctl", HLCTL)
        .replace("--idle-timeout 60", "--idle-timeout 3");
    let mut argv = vec![
        "netns",
        "exec",
        &ns.name,
        "systemd-socket-activate",
        "-l",
        "127.0.0.1:5201",
        "-E",
        "HLCTL_STATE_DIR",
    ];
    argv.extend(exec.split_whitespace());
    let mut act = ChildGuard(
        Command::new("ip")
            .args(&argv)
            .env("HLCTL_STATE_DIR", state.path())
            .stdout(f.try_clone().unwrap())
            .stderr(f)
            .spawn()
            .unwrap(),
    );
    std::thread::sleep(Duration::from_millis(500));
    let iperf =
        |secs: &str| ns.exec_raw(&["iperf3", "-c", "127.0.0.1", "-p", "5201", "-t", secs, "-J"]);
    // A long test, and a second client while it runs: told busy.
    let ns_name = ns.name.clone();
    let long = std::thread::spawn(move || {
        Command::new("ip")
            .args([
                "netns",
                "exec",
                &ns_name,
                "iperf3",
                "-c",
                "127.0.0.1",
                "-p",
                "5201",
                "-t",
                "3",
                "-J",
            ])
            .output()
            .unwrap()
    });
    std::thread::sleep(Duration::from_millis(1500));
    let busy = iperf("1");
    let first = long.join().unwrap();
    let log_text = || std::fs::read_to_string(&log).unwrap_or_default();
    assert!(first.status.success(), "{}\n{}", text(&first), log_text());
    let v: serde_json::Value = serde_json::from_slice(&first.stdout).unwrap();
    let bps = v["end"]["sum_received"]["bits_per_second"]
        .as_f64()
        .unwrap();
    assert!(bps > 0.0, "{v}");
    // iperf3 -J reports the refusal in its JSON.
    let b: serde_json::Value = serde_json::from_slice(&busy.stdout).unwrap();
    assert!(
        b["error"].as_str().unwrap_or("").contains("busy"),
        "{b}\n{}",
        log_text()
    );
    // Idle for 3 s: the activated server exits by itself, successfully.
    let t0 = Instant::now();
    let status = loop {
        if let Some(s) = act.0.try_wait().unwrap() {
            break s;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "still running after 20 s:\n{}",
            log_text()
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    let l = log_text();
    assert!(status.success(), "{status}\n{l}");
    assert!(l.contains("Server listening on 127.0.0.1:5201"), "{l}");
    assert!(l.contains("a test is running (sent ACCESS_DENIED)"), "{l}");
    assert!(
        l.contains("idle timeout reached; 1 test(s) completed, 0 failed, 1 busy refusal(s)"),
        "{l}"
    );
    println!("{l}");
}

#[test]
fn alert_rules_check_and_fire_only_on_planted_series() {
    let o = run(
        "promtool",
        &["check", "rules", &file("packaging/fleet/hlctl-alerts.yml")],
    );
    assert!(o.status.success(), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("SUCCESS: 4 rules found"));
    let o = Command::new("promtool")
        .args(["test", "rules", "hlctl-alerts.test.yml"])
        .current_dir(file("packaging/fleet"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    println!("{}", text(&o));
    assert!(o.status.success(), "{}", text(&o));
    // The test file covers every alert of the rules file.
    let rules = std::fs::read_to_string(file("packaging/fleet/hlctl-alerts.yml")).unwrap();
    let tests = std::fs::read_to_string(file("packaging/fleet/hlctl-alerts.test.yml")).unwrap();
    for a in [
        "HlctlLinkBelowSupported",
        "HlctlLinkHalfDuplex",
        "HlctlRegression",
        "HlctlCheckStale",
    ] {
        assert!(rules.contains(&format!("alert: {a}")), "{a}");
        assert!(tests.contains(&format!("alertname: {a}")), "{a}");
    }
}
