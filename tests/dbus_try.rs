//! `hlctl set ... --try` and `hlctl sysctl ... --try` through hlctld (a
//! private bus with the real polkitd, veth pairs in a test namespace):
//! restored at the deadline without a confirmation, kept (and only then
//! persisted) with one, restored when hlctld starts again after a crash in
//! the window.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::bus::DaemonLab as Lab;

impl Lab {
    fn mtu(&self, iface: &str) -> u64 {
        let ip = self.ns.exec(&["ip", "-j", "link", "show", "dev", iface]);
        let v: serde_json::Value = serde_json::from_slice(&ip.stdout).unwrap();
        v[0]["mtu"].as_u64().unwrap()
    }

    /// hlctl through the daemon with piped stdin and stdout.
    fn spawn(&self, args: &[&str]) -> Child {
        Command::new(common::bus::HLCTL)
            .arg("--bus")
            .arg(&self.rig.address)
            .args(args)
            .env_remove("HLCTL_LOCAL")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run hlctl")
    }

    fn state_file(&self) -> String {
        std::fs::read_to_string(self.state.path().join("state/nic-settings.json"))
            .unwrap_or_default()
    }

    /// Wait until the daemon's log holds `text`.
    fn log_says(&self, text: &str, within: Duration) -> bool {
        let end = Instant::now() + within;
        while Instant::now() < end {
            if self.log().contains(text) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        false
    }
}

/// Read `child`'s stdout up to the line containing `text`; the lines read.
fn read_until(out: &mut impl BufRead, text: &str) -> String {
    let mut seen = String::new();
    loop {
        let mut l = String::new();
        if out.read_line(&mut l).unwrap() == 0 {
            panic!("hlctl ended before printing {text:?}:\n{seen}");
        }
        seen += &l;
        if l.contains(text) {
            return seen;
        }
    }
}

#[test]
fn set_try_without_confirmation_is_restored_at_the_deadline() {
    let lab = Lab::new(&[]);
    let before = lab.mtu(&lab.a);
    assert_ne!(before, 1400);
    // stdin at its end: never confirms.
    let t0 = Instant::now();
    let out = Command::new(common::bus::HLCTL)
        .args(["--bus", &lab.rig.address, "set", &lab.a, "mtu", "1400"])
        .args(["--try", "3", "--json"])
        .env_remove("HLCTL_LOCAL")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let waited = t0.elapsed();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "not kept: exit 1\n{text}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["kept"], false, "{v}");
    assert_eq!(v["try"]["why"], "the deadline passed", "{v}");
    assert_eq!(v["settings"][0]["after"], 1400, "it was applied first: {v}");
    assert!(waited >= Duration::from_secs(3), "waited {waited:?}");
    assert_eq!(lab.mtu(&lab.a), before, "restored");
    let said = format!("of {}: restored (the deadline passed", lab.a);
    assert!(
        lab.log_says(&said, Duration::from_secs(2)),
        "the daemon says it restored:\n{}",
        lab.log()
    );
    // Nothing is pending any more.
    let status = lab.json(&["status"]);
    assert!(!status.to_string().contains("set --try"), "{status}");
}

#[test]
fn set_try_confirmed_is_kept_and_persisted_only_then() {
    let lab = Lab::new(&[]);
    let before = lab.mtu(&lab.a);
    let mut child = lab.spawn(&["set", &lab.a, "mtu", "1400", "--try", "30", "--persist"]);
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let shown = read_until(&mut out, "Press Enter within 30 s");
    assert!(shown.contains("1400"), "{shown}");
    assert_eq!(lab.mtu(&lab.a), 1400, "applied during the window");
    assert!(
        !lab.state_file().contains("1400"),
        "not persisted before the confirmation: {}",
        lab.state_file()
    );
    child.stdin.take().unwrap().write_all(b"\n").unwrap();
    let status = child.wait().unwrap();
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut out, &mut rest).unwrap();
    assert!(status.success(), "{shown}{rest}\n{}", lab.log());
    assert!(rest.contains("kept (confirmed)"), "{rest}");
    assert!(lab.state_file().contains("1400"), "{}", lab.state_file());
    // Still kept after the window would have ended.
    std::thread::sleep(Duration::from_secs(1));
    assert_eq!(lab.mtu(&lab.a), 1400);
    assert_ne!(before, 1400);
    // `hlctl rollback` undoes it to the values from before the try.
    lab.ok(lab.rig.hlctl(&["rollback", &lab.a]));
    assert_eq!(
        lab.mtu(&lab.a),
        before,
        "rollback restores the pre-try value"
    );
}

#[test]
fn the_client_dying_in_the_window_restores_at_once() {
    let lab = Lab::new(&[]);
    let before = lab.mtu(&lab.a);
    let mut child = lab.spawn(&["set", &lab.a, "mtu", "1400", "--try", "60"]);
    let mut out = BufReader::new(child.stdout.take().unwrap());
    read_until(&mut out, "Press Enter");
    assert_eq!(lab.mtu(&lab.a), 1400);
    let t0 = Instant::now();
    let _ = child.kill(); // SIGKILL: no chance to cancel by itself
    let _ = child.wait();
    while lab.mtu(&lab.a) != before && t0.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(
        lab.mtu(&lab.a),
        before,
        "restored when the caller left the bus"
    );
    assert!(
        t0.elapsed() < Duration::from_secs(10),
        "long before the deadline"
    );
    let said = format!("of {}: restored (cancelled", lab.a);
    assert!(lab.log_says(&said, Duration::from_secs(2)), "{}", lab.log());
}

#[test]
fn local_try_restores_on_sigterm() {
    let lab = Lab::new(&[]);
    let before = lab.mtu(&lab.a);
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let mut child = Command::new("ip")
        .args(["netns", "exec", &lab.ns.name, common::bus::HLCTL, "--local"])
        .arg("--state-dir")
        .arg(&state)
        .args(["set", &lab.a, "mtu", "1400", "--try", "60", "--json"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    // With --json the prompt goes to stderr.
    read_until(&mut err, "Press Enter within 60 s");
    assert_eq!(lab.mtu(&lab.a), 1400);
    assert!(state.join(format!("tune/journal-{}.json", lab.a)).exists());
    // `ip netns exec` execs hlctl in place: the pid is hlctl's.
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    let out = child.wait_with_output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["kept"], false, "{v}");
    assert_eq!(v["try"]["why"], "cancelled", "{v}");
    assert_eq!(lab.mtu(&lab.a), before);
    assert!(!state.join(format!("tune/journal-{}.json", lab.a)).exists());
}

#[test]
fn a_crash_of_hlctld_in_the_window_is_restored_when_it_starts_again() {
    let mut lab = Lab::new(&[]);
    let before = lab.mtu(&lab.a);
    let mut child = lab.spawn(&["set", &lab.a, "mtu", "1400", "--try", "60"]);
    let mut out = BufReader::new(child.stdout.take().unwrap());
    read_until(&mut out, "Press Enter");
    assert_eq!(lab.mtu(&lab.a), 1400);
    let status = lab.json(&["status"]);
    let pending = &status["pending"][0];
    assert_eq!(pending["interface"], lab.a.as_str(), "{status}");
    assert!(
        pending["tune_id"].as_str().unwrap().starts_with("try-"),
        "{status}"
    );
    lab.daemon.kill9();
    // The crash leaves the change in place, and its journal.
    assert_eq!(lab.mtu(&lab.a), 1400);
    let journal = lab
        .state
        .path()
        .join(format!("state/tune/journal-{}.json", lab.a));
    assert!(journal.exists());
    let _ = child.kill();
    let _ = child.wait();
    lab.daemon = lab.rig.daemon(&lab.ns, lab.state.path(), &[]);
    assert!(
        lab.log_says(
            "restored the settings of an unconfirmed try",
            Duration::from_secs(10)
        ),
        "{}",
        lab.log()
    );
    assert_eq!(lab.mtu(&lab.a), before, "restored at start");
    assert!(!journal.exists());
}

#[test]
fn sysctl_try_in_the_namespace_is_restored_at_the_deadline() {
    let lab = Lab::new(&[]);
    let key = "net.ipv4.tcp_rmem";
    let before = lab.sysctl_in_ns(key);
    let want = "4096 65536 1048576";
    assert_ne!(before, want);
    let host_before = std::fs::read_to_string("/proc/sys/net/ipv4/tcp_rmem").unwrap();
    let mut child = lab.spawn(&["sysctl", &format!("{key}={want}"), "--try", "2"]);
    let mut out = BufReader::new(child.stdout.take().unwrap());
    read_until(&mut out, "Press Enter within 2 s");
    assert_eq!(lab.sysctl_in_ns(key), want, "written in the namespace");
    let status = child.wait().unwrap();
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut out, &mut rest).unwrap();
    assert_eq!(status.code(), Some(1), "{rest}");
    assert!(rest.contains("restored the previous settings"), "{rest}");
    assert_eq!(lab.sysctl_in_ns(key), before, "restored");
    assert!(lab.log().contains("of sysctl: restored"), "{}", lab.log());
    assert_eq!(
        std::fs::read_to_string("/proc/sys/net/ipv4/tcp_rmem").unwrap(),
        host_before,
        "the host's value is untouched"
    );
}
