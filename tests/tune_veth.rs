//! `hlctl tune` end to end in network namespaces against a real `iperf3 -s`:
//! offloads off on a CPU-bound path (found, fixed, gain measured), a peer that
//! carries only MTU 1500 (9000 never kept), a candidate that makes things worse
//! (measured, reverted — before the full budget unless the other direction
//! stands above the noise — and reported), one that changes
//! nothing measurable (never kept), a 100 Mbit/s bottleneck (doctor says so,
//! tune keeps nothing), and a tuner killed mid-change (the journal is restored).
//!
//! These run `hlctl --local`-style in-process tuning (the CLI's default
//! without a daemon); short runs keep the suite fast: 1 s per run.

mod common;

use std::time::{Duration, Instant};

use common::lab::{Lab, step};
use serde_json::Value;

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// A step's before/after figures for one direction ("upload" or "download").
fn delta<'a>(step: &'a Value, direction: &str) -> &'a Value {
    step["deltas"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["direction"] == direction)
        .unwrap_or_else(|| panic!("no {direction} delta in {step}"))
}

#[test]
fn offloads_off_found_fixed_and_gain_measured() {
    let _serial = common::lab::serial();
    let lab = Lab::new();
    lab.here.exec(&[
        "ethtool", "-K", &lab.a, "gso", "off", "tso", "off", "sg", "off",
    ]);
    assert!(!lab.feature_on("tx-generic-segmentation"));
    let srv = lab.iperf3_server();
    let peer = lab.peer_arg(&srv);
    let r = lab.tune_until_kept(
        &[
            "tune", &lab.a, "--peer", &peer, "--yes", "--runs", "3", "--time", "1",
        ],
        "offloads-on",
        |s| {
            assert!(
                !lab.feature_on("tx-generic-segmentation"),
                "a candidate that was not kept must be reverted: {s}"
            )
        },
    );

    // Found by the doctor...
    let ids: Vec<&str> = r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap())
        .collect();
    assert!(ids.contains(&"offload-off"), "{ids:?}");
    // ...fixed by the tuner, with the gain measured.
    let s = step(&r, "offloads-on");
    assert_eq!(s["status"], "kept", "{s}");
    let up = delta(s, "upload");
    assert!(f(&up["after_bps"]) > 1.5 * f(&up["before_bps"]), "{up}");
    assert!(lab.feature_on("tx-generic-segmentation") && lab.feature_on("tx-tcp-segmentation"));
    assert_eq!(r["outcome"], "done");
    // Persisted in the NIC state file, journal closed, recorded for rollback.
    let state: Value = serde_json::from_str(
        &std::fs::read_to_string(lab.state_dir().join("nic-settings.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        state["interfaces"][0]["settings"]["features"]["tx-generic-segmentation"], true,
        "{state}"
    );
    let st = lab.json(&["status"]);
    assert_eq!(st["pending"].as_array().unwrap().len(), 0);
    assert_eq!(st["last_tunes"][0]["interface"], lab.a.as_str());

    // `hlctl rollback` puts the offloads back off and empties the state file.
    let rb = lab.json(&["rollback", &lab.a]);
    assert_eq!(rb["undone"].as_array().unwrap().len(), 1, "{rb}");
    assert!(!lab.feature_on("tx-generic-segmentation"));
    let state: Value = serde_json::from_str(
        &std::fs::read_to_string(lab.state_dir().join("nic-settings.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(state["interfaces"].as_array().unwrap().len(), 0, "{state}");
}

#[test]
fn jumbo_frames_never_kept_when_the_peer_carries_1500_and_a_worse_candidate_is_reverted() {
    let _serial = common::lab::serial();
    let lab = Lab::new();
    let srv = lab.iperf3_server();
    let peer = lab.peer_arg(&srv);
    let r = lab.json(&[
        "tune",
        &lab.a,
        "--peer",
        &peer,
        "--yes",
        "--runs",
        "3",
        "--time",
        "1",
        "--try",
        "feature tso off gso off sg off",
        "--try",
        "net.ipv4.tcp_keepalive_time=7201",
    ]);
    let mtu = step(&r, "mtu-jumbo");
    assert_eq!(mtu["status"], "reverted", "{mtu}");
    assert!(
        mtu["reason"]
            .as_str()
            .unwrap()
            .contains("does not reach the peer"),
        "{mtu}"
    );
    assert_eq!(lab.mtu(), 1500);

    let worse = step(&r, "try-1");
    assert_eq!(worse["status"], "reverted", "{worse}");
    let up = delta(worse, "upload");
    assert!(f(&up["after_bps"]) < f(&up["before_bps"]), "{up}");
    // "worse" when the loss stands out of the noise; on a host whose runs
    // spread wider than the loss (seen in CI: upload −68 % against a 93 %
    // threshold) the honest verdict is "no gain above the noise", and then
    // the loss must indeed be within the threshold the report names.
    let reason = worse["reason"].as_str().unwrap();
    if !reason.starts_with("worse") {
        assert!(reason.starts_with("no gain above the noise"), "{worse}");
        assert!(
            -f(&up["change_percent"]) <= f(&up["threshold_percent"]),
            "a loss beyond the threshold was not called worse: {worse}"
        );
    }
    assert!(
        lab.feature_on("tx-tcp-segmentation"),
        "the worse candidate was not reverted"
    );
    // Decided before the full budget: a keep was impossible after the first
    // run each way, unless the unaffected direction leapt above every
    // reference run by more than the noise; only then may the runs go on, and
    // the full budget is taken only if it still stood above after the runs
    // before the last (a keep there is still possible, so the full rule
    // decides). Seen in CI: download +21.5 % against a 16.4 % threshold.
    let runs = worse["runs"].as_u64().unwrap();
    if runs < 3 {
        assert!(runs >= 1, "{worse}");
        assert!(
            worse["reason"]
                .as_str()
                .unwrap()
                .contains(&format!("decided after {runs} of 3 runs")),
            "{worse}"
        );
    } else {
        let down = delta(worse, "download");
        assert!(
            f(&down["change_percent"]) > f(&down["threshold_percent"]),
            "the full budget was spent though no direction could still gain: {worse}"
        );
    }
    // A setting that changes nothing measurable is never kept.
    let noop = step(&r, "try-2");
    assert_eq!(noop["status"], "reverted", "{noop}");
    assert!((1..=3).contains(&noop["runs"].as_u64().unwrap()), "{noop}");
    assert_eq!(r["kept"], serde_json::json!({}));
    // Nothing kept: nothing persisted.
    assert!(!lab.sysctl_dir().join("90-hlctl.conf").exists());
    assert!(!lab.state_dir().join("nic-settings.json").exists());
    // The text report names both as reverted.
    let out = lab.hlctl(&["history", "--kind", "tune", "--json"]);
    let h: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(h["results"].as_array().unwrap().len(), 1);
}

/// Off a terminal (`hlctl tune … | tee log`, cron) a tune prints one plain
/// line per step on stderr: elapsed time and percent, never going back.
#[test]
fn off_a_terminal_a_tune_prints_a_line_per_step() {
    let _serial = common::lab::serial();
    let lab = Lab::new();
    let srv = lab.iperf3_server();
    let peer = lab.peer_arg(&srv);
    let out = lab.hlctl(&[
        "tune", &lab.a, "--peer", &peer, "--yes", "--runs", "2", "--time", "1", "--no-mtu",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    // "hlctl:    3.1 s  40 %  baseline …"
    let steps: Vec<(f64, u32, &str)> = err
        .lines()
        .filter_map(|l| {
            let rest = l.strip_prefix("hlctl:")?;
            let (secs, rest) = rest.trim_start().split_once(" s ")?;
            let (pct, what) = rest.trim_start().split_once(" %  ")?;
            Some((secs.parse().ok()?, pct.trim().parse().ok()?, what))
        })
        .collect();
    assert!(steps.len() >= 3, "too few step lines: {err}");
    for w in steps.windows(2) {
        assert!(
            w[0].0 <= w[1].0 && w[0].1 <= w[1].1,
            "went back: {w:?}\n{err}"
        );
        assert_ne!(w[0].2, w[1].2, "a line printed twice: {err}");
    }
    assert!(steps.last().unwrap().0 > 1.0, "{err}");
    println!("{err}");
}

#[test]
fn slow_bottleneck_is_named_and_nothing_is_kept() {
    let _serial = common::lab::serial();
    let lab = Lab::new();
    lab.shape_both("100mbit");
    let srv = lab.iperf3_server();
    let peer = lab.peer_arg(&srv);
    let d = lab.json(&[
        "doctor", "--peer", &peer, "--runs", "1", "--time", "2", "--stress", "0",
    ]);
    let b = d["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"] == "path-bottleneck")
        .unwrap_or_else(|| {
            panic!(
                "no path-bottleneck finding: {}",
                serde_json::to_string_pretty(&d).unwrap()
            )
        });
    let title = b["title"].as_str().unwrap();
    assert!(
        title.contains("while the link claims 10.00 Gbit/s"),
        "{title}"
    );
    // "~9x Mbit/s"
    let mbit: f64 = title
        .split('~')
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!((60.0..=105.0).contains(&mbit), "{title}");

    let r = lab.json(&[
        "tune", &lab.a, "--peer", &peer, "--yes", "--runs", "2", "--time", "1",
    ]);
    assert_eq!(
        r["kept"],
        serde_json::json!({}),
        "{}",
        serde_json::to_string_pretty(&r["steps"]).unwrap()
    );
    let limits = r["limits"].as_array().unwrap();
    assert!(
        limits.iter().all(|l| l["limit"]["kind"] == "bottleneck"),
        "{limits:?}"
    );
    assert!(
        limits[0]["text"]
            .as_str()
            .unwrap()
            .contains("no setting on this host raises it")
    );
}

#[test]
fn tuner_killed_mid_change_leaves_a_journal_that_rollback_restores() {
    let _serial = common::lab::serial();
    let lab = Lab::new();
    lab.here
        .exec(&["sysctl", "-qw", "net.ipv4.tcp_wmem=4096 16384 65536"]);
    let srv = lab.iperf3_server();
    let peer = lab.peer_arg(&srv);
    // A slow candidate (3 runs × 2 directions × 2 s) gives time to kill it mid-trial.
    let argv = lab.argv(&[
        "tune",
        &lab.a,
        "--peer",
        &peer,
        "--yes",
        "--runs",
        "3",
        "--time",
        "2",
        "--no-mtu",
        "--confirm-timeout",
        "600",
        "--try",
        "net.ipv4.tcp_wmem=4096 16384 131072",
    ]);
    // `ip netns exec` execs hlctl in place: the child's pid is hlctl's.
    let mut child = common::lab::ChildGuard(
        std::process::Command::new("ip")
            .args(["netns", "exec", &lab.here.name])
            .args(&argv)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    let journal = lab
        .state_dir()
        .join("tune")
        .join(format!("journal-{}.json", lab.a));
    let t0 = Instant::now();
    let mut trying = false;
    while t0.elapsed() < Duration::from_secs(60) {
        if let Ok(t) = std::fs::read_to_string(&journal)
            && t.contains("\"trying\"")
        {
            trying = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(trying, "the tuner never journalled a candidate");
    let wmem = || {
        String::from_utf8_lossy(
            &lab.here
                .exec(&["cat", "/proc/sys/net/ipv4/tcp_wmem"])
                .stdout,
        )
        .split_whitespace()
        .nth(2)
        .unwrap()
        .to_string()
    };
    // The journal is written before the candidate is applied: wait for the
    // sysctl (a loaded machine once took more than the 500 ms this waited).
    let applied = Instant::now();
    while wmem() != "131072" && applied.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(wmem(), "131072", "the candidate should be applied now");
    // SIGKILL: no chance to clean up (the pid is `ip netns exec`'s, which exec'd hlctl).
    child.kill9();

    let st = lab.json(&["status"]);
    let p = &st["pending"][0];
    assert_eq!(p["owner_alive"], false, "{st}");
    assert_eq!(
        p["original"]["sysctl"]["net.ipv4.tcp_wmem"],
        "4096 16384 65536"
    );
    // Another tune refuses to start over a pending journal.
    let out = lab.hlctl(&[
        "tune", &lab.a, "--peer", &peer, "--yes", "--runs", "1", "--time", "1",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("hlctl rollback"));

    let rb = lab.json(&["rollback", &lab.a]);
    assert_eq!(rb["pending_restored"].as_array().unwrap().len(), 1, "{rb}");
    assert_eq!(wmem(), "65536");
    assert_eq!(
        lab.json(&["status"])["pending"].as_array().unwrap().len(),
        0
    );
}
