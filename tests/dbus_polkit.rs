//! A polkit rules file granting hlctl's actions to a group makes a member of
//! that group succeed through hlctld, while other unprivileged users stay
//! refused; a caller that leaves the bus while an authentication agent shows
//! polkit's prompt has its check cancelled, and nothing happens. Real
//! polkitd, real bus, a throw-away user and group, a Python agent
//! (tests/python/stuck_agent.py) whose prompt is never answered.

mod common;

use common::NetNs;
use common::bus::{Rig, TempUser};
use serde_json::Value;

/// Run by `Rig::call_as` as another user; ignored in a normal run.
#[test]
#[ignore = "not a test: the D-Bus caller that Rig::call_as runs as another user"]
fn helper() {
    common::bus::helper_main();
}

#[test]
fn a_rules_file_granting_a_group_lets_its_member_change_things() {
    let user = TempUser::new();
    // A second group may try settings (apply-settings) but not keep them (persist).
    let trier = TempUser::new();
    let _trier_rules = common::bus::grant(&trier.group, &["apply-settings"]);
    let rules = common::bus::grant(&user.group, &[]);
    // polkitd reads rules at start: the rig starts it after the file exists.
    let mut rig = Rig::start();
    rig.start_polkit();
    let ns = NetNs::new();
    let (a, b) = (common::unique("pa"), common::unique("pb"));
    ns.veth(&a, &b);
    let state = tempfile::tempdir().unwrap();
    let daemon = rig.daemon(&ns, state.path(), &[]);

    // The group member: apply, persist and sysctl succeed.
    let out = rig.hlctl_as(
        user.uid,
        user.gid,
        &["set", &a, "mtu", "1420", "--persist", "--json"],
    );
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stderr),
        daemon.log()
    );
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["settings"][0]["after"], 1420);
    assert!(r["persisted"].is_string());
    let ip = ns.exec(&["ip", "-j", "link", "show", "dev", &a]);
    assert_eq!(
        serde_json::from_slice::<Value>(&ip.stdout).unwrap()[0]["mtu"],
        1420
    );
    let out = rig.hlctl_as(user.uid, user.gid, &["sysctl", "net.ipv4.tcp_sack=0"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let sack = ns.exec(&["cat", "/proc/sys/net/ipv4/tcp_sack"]);
    assert_eq!(String::from_utf8_lossy(&sack.stdout).trim(), "0");
    // tune is authorized too: the call gets past polkit and fails only on
    // its missing parameters (no interface).
    match rig.call_as(user.uid, user.gid, "helper", "tune") {
        Err((name, msg)) => {
            assert_eq!(name, "org.hlctl.Daemon1.Error.InvalidArgument", "{msg}");
            assert!(msg.contains("interface"), "{msg}");
        }
        Ok(r) => panic!("tune: {r}"),
    }
    // nobody is not in the group: still refused.
    let out = rig.hlctl_as(65534, 65534, &["set", &a, "mtu", "1400"]);
    assert_eq!(out.status.code(), Some(3));
    let ip = ns.exec(&["ip", "-j", "link", "show", "dev", &a]);
    assert_eq!(
        serde_json::from_slice::<Value>(&ip.stdout).unwrap()[0]["mtu"],
        1420
    );
    // apply-settings without persist: the change is allowed, keeping it is not.
    let out = rig.hlctl_as(trier.uid, trier.gid, &["set", &a, "mtu", "1410"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = rig.hlctl_as(
        trier.uid,
        trier.gid,
        &["set", &a, "mtu", "1400", "--persist"],
    );
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("org.hlctl.Daemon1.persist"));
    let ip = ns.exec(&["ip", "-j", "link", "show", "dev", &a]);
    assert_eq!(
        serde_json::from_slice::<Value>(&ip.stdout).unwrap()[0]["mtu"],
        1410,
        "refused as a whole: not applied either"
    );
    let out = rig.hlctl_as(trier.uid, trier.gid, &["sysctl", "net.ipv4.tcp_sack=1"]);
    assert_eq!(out.status.code(), Some(3));
    // The daemon logged the member's changes with their uid.
    let log = daemon.log();
    assert!(log.contains(&format!("uid={}", user.uid)), "{log}");
    drop(daemon);
    drop(rig);
    drop(rules);
}

/// A child process killed (SIGKILL) and reaped when dropped.
struct Killed(std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The lines a child prints, as they come (read on a thread of their own).
fn lines_of(out: impl std::io::Read + Send + 'static) -> std::sync::mpsc::Receiver<String> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufRead::lines(std::io::BufReader::new(out)).map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// The first line starting with `word` within `within`, or every line seen.
fn wait_line(
    rx: &std::sync::mpsc::Receiver<String>,
    word: &str,
    within: std::time::Duration,
) -> Result<String, Vec<String>> {
    let until = std::time::Instant::now() + within;
    let mut seen = Vec::new();
    while let Some(left) = until.checked_duration_since(std::time::Instant::now()) {
        match rx.recv_timeout(left) {
            Ok(l) if l.starts_with(word) => return Ok(l),
            Ok(l) => seen.push(l),
            Err(_) => break,
        }
    }
    Err(seen)
}

#[test]
fn a_caller_leaving_while_the_polkit_prompt_is_open_cancels_the_check() {
    use std::io::Write;
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};
    let lab = common::bus::DaemonLab::new(&[]);
    let path = lab.link_path(&lab.a);
    let mtu = |lab: &common::bus::DaemonLab| -> u64 {
        let ip = lab.ns.exec(&["ip", "-j", "link", "show", "dev", &lab.a]);
        serde_json::from_slice::<Value>(&ip.stdout).unwrap()[0]["mtu"]
            .as_u64()
            .unwrap()
    };
    let before = mtu(&lab);
    // The caller: nobody's busctl allowing interactive authorization, held
    // back until the agent is registered for its process (sh execs busctl:
    // the pid and its start time stay those setpriv started with).
    let call = format!(
        "read go; exec busctl --address={} --allow-interactive-authorization=yes --timeout=60 call org.hlctl.Daemon1 {path} org.hlctl.Daemon1.Link ApplyChanges 'a{{sv}}a{{sv}}' 1 mtu u 1400 0",
        lab.rig.address
    );
    let mut caller = Killed(
        Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .args(["sh", "-c", &call])
            .env("HOME", "/")
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/python/stuck_agent.py");
    let mut agent = Killed(
        Command::new("/usr/bin/python3")
            .args([script, &lab.rig.address, &caller.0.id().to_string()])
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap(),
    );
    let said = lines_of(agent.0.stdout.take().unwrap());
    wait_line(&said, "registered", Duration::from_secs(20))
        .unwrap_or_else(|seen| panic!("the agent did not register: {seen:?}"));
    writeln!(caller.0.stdin.take().unwrap(), "go").unwrap();
    let begin = wait_line(&said, "begin", Duration::from_secs(20)).unwrap_or_else(|seen| {
        panic!(
            "polkitd never asked the agent: {seen:?}\n{}",
            lab.daemon.log()
        )
    });
    assert!(
        begin.ends_with("org.hlctl.Daemon1.apply-settings"),
        "{begin}"
    );
    // The prompt is open: another client is served meanwhile.
    let t = Instant::now();
    let read = lab.rig.busctl_as(
        65534,
        65534,
        &[
            "get-property",
            "org.hlctl.Daemon1",
            &path,
            "org.hlctl.Daemon1.Link",
            "Mtu",
        ],
    );
    assert!(read.status.success(), "{}", common::output_text(&read));
    assert_eq!(
        String::from_utf8_lossy(&read.stdout).trim(),
        format!("u {before}")
    );
    assert!(
        t.elapsed() < Duration::from_secs(3),
        "read took {:?}",
        t.elapsed()
    );
    // The caller dies with the prompt open.
    let t = Instant::now();
    drop(caller);
    let cancel = wait_line(&said, "cancel", Duration::from_secs(5)).unwrap_or_else(|seen| {
        panic!(
            "the prompt stayed open 5 s after its caller left: {seen:?}\n{}",
            lab.daemon.log()
        )
    });
    let cookie = begin.split_whitespace().nth(1).unwrap();
    assert_eq!(cancel, format!("cancel {cookie}"));
    eprintln!(
        "prompt cancelled {:?} after the caller was killed",
        t.elapsed()
    );
    // hlctld said so, once; nothing started, nothing changed.
    let until = Instant::now() + Duration::from_secs(5);
    let said_so = |log: &str| {
        log.matches("left the bus while polkit was asking to authenticate")
            .count()
    };
    while said_so(&lab.daemon.log()) == 0 && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(50));
    }
    let log = lab.daemon.log();
    assert_eq!(said_so(&log), 1, "{log}");
    assert_eq!(mtu(&lab), before, "the link changed: {log}");
    let jobs: Vec<zbus::OwnedObjectPath> = lab
        .rig
        .property("/org/hlctl/Daemon1", "org.hlctl.Daemon1.Manager", "Jobs")
        .try_into()
        .unwrap();
    assert!(jobs.is_empty(), "{jobs:?}");
    assert!(!log.contains("mtu: "), "{log}");
    drop(agent);
}
