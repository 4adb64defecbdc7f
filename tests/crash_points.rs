//! Crash points (issue 39 §1): hlctl killed (SIGKILL, by itself, at a named
//! point: `HLCTL_CRASH_AT=POINT#N`, src/crashpoint.rs) at every place where
//! it changes state — between the kernel requests of a change set, around
//! its read-back, before and after each rename of a file it persists (its
//! own `nic-settings.json`, `90-hlctl.conf`, a network manager's file and
//! its backup, the tune/try journal, the rollback record), inside and after
//! each SQLite transaction (a history row, a baseline) — then what a start
//! runs without hlctld (`hlctl reapply`: restore journals of dead
//! processes, re-apply what is persisted), and the state checked: the link
//! wholly before or wholly after (`ip -j -d link`), every file hlctl wrote
//! parses and agrees with the link, no journal left, an unconfirmed try or
//! tune rolled back, `PRAGMA integrity_check` ok and every row acknowledged
//! before the kill still there.
//!
//! Real veths in namespaces of the test's own (tests/common/lab.rs); the
//! state, sysctl.d and the managers' files (ifupdown2's
//! `/etc/network/interfaces`) under the test's temporary directory. Prints
//! a table: point, reached, state after, torn, rows lost.

mod common;

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use common::lab::{Lab, hlctl_argv};
use serde_json::Value;

/// The points only hlctld passes (its usage sampler): not reached here.
const DAEMON_ONLY: &[&str] = &[
    "sqlite:usage-minutes:before-commit",
    "sqlite:usage-minutes:after-commit",
];

const BEFORE_WMEM: &str = "4096 16384 65536";
const AFTER_WMEM: &str = "4096 16384 131072";

/// What the killed command was.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Action {
    /// `set A txqueuelen 2000 mtu 9000 --persist` (two kernel requests),
    /// ifupdown2 owning A's MTU.
    SetPersist,
    /// `set A txqueuelen 2000 mtu 9000 --try 2`, never confirmed.
    SetTry,
    /// `sysctl net.ipv4.tcp_wmem=... --persist` (the namespace's own).
    SysctlPersist,
    /// `tune A --try tcp_wmem...` against iperf3 in the peer, not confirmed.
    Tune,
    /// `bench cpu --time 1` (a history row).
    BenchCpu,
    /// `baseline save`.
    BaselineSave,
}

/// One kill: the point, which pass, and the command.
struct Case {
    point: &'static str,
    nth: u32,
    action: Action,
}

const fn case(point: &'static str, nth: u32, action: Action) -> Case {
    Case { point, nth, action }
}

/// Every declared point but the daemon's, each by the command that passes it.
const CASES: &[Case] = &[
    case("nic:step:before", 1, Action::SetPersist),
    case("nic:step:after", 1, Action::SetPersist),
    case("nic:step:before", 2, Action::SetPersist),
    case("nic:step:after", 2, Action::SetPersist),
    case("nic:readback:before", 1, Action::SetPersist),
    case("nic:readback:after", 1, Action::SetPersist),
    case("write:journal:before-rename", 1, Action::SetPersist),
    case("write:journal:before-dir-sync", 1, Action::SetPersist),
    case("write:owner-backup:before-rename", 1, Action::SetPersist),
    case("write:owner-backup:before-dir-sync", 1, Action::SetPersist),
    case("write:owner-file:before-rename", 1, Action::SetPersist),
    case("write:owner-file:before-dir-sync", 1, Action::SetPersist),
    case("write:nic-settings:before-rename", 1, Action::SetPersist),
    case("write:nic-settings:before-dir-sync", 1, Action::SetPersist),
    case("write:last-tune:before-rename", 1, Action::SetPersist),
    case("write:last-tune:before-dir-sync", 1, Action::SetPersist),
    // The try's journal: begun, the values it overwrites, awaiting confirmation.
    case("write:journal:before-rename", 1, Action::SetTry),
    case("write:journal:before-dir-sync", 2, Action::SetTry),
    case("nic:step:after", 1, Action::SetTry),
    case("write:journal:before-rename", 3, Action::SetTry),
    case("write:sysctl-conf:before-rename", 1, Action::SysctlPersist),
    case(
        "write:sysctl-conf:before-dir-sync",
        1,
        Action::SysctlPersist,
    ),
    // The tune's journal: the candidate's originals before it is applied,
    // then the next write with the candidate applied.
    case("write:journal:before-dir-sync", 2, Action::Tune),
    case("write:journal:before-rename", 3, Action::Tune),
    case("sqlite:history-row:before-commit", 1, Action::BenchCpu),
    case("sqlite:history-row:after-commit", 1, Action::BenchCpu),
    case("sqlite:baseline:before-commit", 1, Action::BaselineSave),
    case("sqlite:baseline:after-commit", 1, Action::BaselineSave),
];

/// One line of the table.
struct Row {
    point: String,
    action: Action,
    reached: bool,
    state: &'static str,
    torn: Vec<String>,
    rows_lost: i64,
}

/// A lab with its managers' tree and the file of crash points passed.
struct Rig {
    lab: Lab,
    root: tempfile::TempDir,
    list: PathBuf,
}

impl Rig {
    fn new(list: &Path) -> Rig {
        let lab = Lab::new();
        let root = tempfile::tempdir().unwrap();
        let rig = Rig {
            lab,
            root,
            list: list.to_path_buf(),
        };
        std::fs::create_dir_all(rig.root.path().join("usr/share/ifupdown2")).unwrap();
        write(&rig.interfaces(), &interfaces_text(&rig.lab.a));
        rig
    }

    fn interfaces(&self) -> PathBuf {
        self.root.path().join("etc/network/interfaces")
    }

    /// hlctl in `here`, in process, with the lab's directories and root.
    fn command(&self, args: &[&str]) -> Command {
        let root = self.root.path().display().to_string();
        let mut v = vec!["--local", "--root", root.as_str()];
        v.extend_from_slice(args);
        let argv = hlctl_argv(self.lab.dir.path(), &v);
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.lab.here.name])
            .args(&argv)
            .env_remove("HLCTL_CRASH_AT")
            .env("HLCTL_CRASH_LIST", &self.list)
            .stdin(Stdio::null());
        c
    }

    fn hlctl(&self, args: &[&str]) -> Output {
        within(&mut self.command(args))
    }

    /// `args`, killed at `point#nth`.
    fn killed(&self, point: &str, nth: u32, args: &[&str]) -> Output {
        within(
            self.command(args)
                .env("HLCTL_CRASH_AT", format!("{point}#{nth}")),
        )
    }

    /// What a start runs without hlctld.
    fn restart(&self) -> Value {
        let out = self.hlctl(&["reapply", "--json"]);
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "reapply: not JSON ({e}): {}",
                String::from_utf8_lossy(&out.stderr)
            )
        })
    }

    /// (mtu, txqueuelen) of the veth, from `ip -j -d link`.
    fn link(&self) -> (u64, u64) {
        let out = self
            .lab
            .here
            .exec(&["ip", "-j", "-d", "link", "show", "dev", &self.lab.a]);
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        (
            v[0]["mtu"].as_u64().unwrap(),
            v[0]["txqlen"].as_u64().unwrap(),
        )
    }

    fn wmem(&self) -> String {
        let out = self.lab.here.exec(&["cat", "/proc/sys/net/ipv4/tcp_wmem"]);
        String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn state(&self) -> PathBuf {
        self.lab.state_dir()
    }

    /// Journals left in the state directory.
    fn journals(&self) -> Vec<String> {
        std::fs::read_dir(self.state().join("tune"))
            .map(|rd| {
                rd.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|n| n.starts_with("journal-"))
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// The command's output; killed (and the test failed) after 60 s: a
/// command that hangs (a lock taken twice) must not hang the suite.
fn within(cmd: &mut Command) -> Output {
    let child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(std::time::Duration::from_secs(60)) {
        Ok(out) => out.unwrap(),
        Err(_) => {
            // SAFETY: kill(2) on the pid of a child this test started and has not reaped.
            unsafe { libc::kill(pid as i32, libc::SIGKILL) };
            panic!("{cmd:?} did not end within 60 s");
        }
    }
}

fn write(p: &Path, text: &str) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

fn interfaces_text(a: &str) -> String {
    format!(
        "auto lo\niface lo inet loopback\n\niface {a} inet manual\n\nsource /etc/network/interfaces.d/*\n"
    )
}

const LINK_BEFORE: (u64, u64) = (1500, 1000);
const LINK_AFTER: (u64, u64) = (9000, 2000);

/// Before, after, or torn (a mixture).
fn link_state(l: (u64, u64), torn: &mut Vec<String>) -> &'static str {
    match l {
        LINK_BEFORE => "before",
        LINK_AFTER => "after",
        other => {
            torn.push(format!("link mtu/txqueuelen {other:?}"));
            "torn"
        }
    }
}

/// hlctl's files parse and agree with the link: `nic-settings.json` holds
/// the whole change or none of it, the stanza says `mtu 9000` only when the
/// link runs it, the rollback record parses, no journal is left.
fn check_nic_files(rig: &Rig, state: &str, torn: &mut Vec<String>) {
    let a = &rig.lab.a;
    let p = rig.state().join("nic-settings.json");
    if let Ok(t) = std::fs::read_to_string(&p) {
        match serde_json::from_str::<Value>(&t) {
            Err(e) => torn.push(format!("nic-settings.json does not parse: {e}")),
            Ok(v) => {
                let e = v["interfaces"]
                    .as_array()
                    .and_then(|l| l.iter().find(|e| e["name"] == a.as_str()));
                if let Some(e) = e {
                    let s = &e["settings"];
                    if s["mtu"] != 9000 || s["txqueuelen"] != 2000 {
                        torn.push(format!("nic-settings.json holds part of the change: {s}"));
                    }
                    if state != "after" {
                        torn.push("nic-settings.json persists what the link does not run".into());
                    }
                }
            }
        }
    }
    let text = std::fs::read_to_string(rig.interfaces()).unwrap();
    let original = interfaces_text(a);
    let edited = original.replace(
        &format!("iface {a} inet manual\n"),
        &format!("iface {a} inet manual\n\tmtu 9000\n"),
    );
    if text == edited {
        if state != "after" {
            torn.push("the stanza says mtu 9000, the link does not run it".into());
        }
    } else if text != original {
        torn.push(format!(
            "/etc/network/interfaces is neither before nor after:\n{text}"
        ));
    }
    let last = rig.state().join("tune").join(format!("last-{a}.json"));
    if let Ok(t) = std::fs::read_to_string(&last)
        && serde_json::from_str::<Value>(&t).is_err()
    {
        torn.push(format!("{} does not parse", last.display()));
    }
    check_no_journal(rig, torn);
}

fn check_no_journal(rig: &Rig, torn: &mut Vec<String>) {
    let left = rig.journals();
    if !left.is_empty() {
        torn.push(format!("journals left after the restart: {left:?}"));
    }
}

/// `90-hlctl.conf` is absent or holds the whole line, and agrees with the
/// namespace's value.
fn check_sysctl_file(rig: &Rig, state: &str, torn: &mut Vec<String>) {
    let p = rig.lab.sysctl_dir().join("90-hlctl.conf");
    let Ok(t) = std::fs::read_to_string(&p) else {
        return;
    };
    let line = t
        .lines()
        .find(|l| l.starts_with("net.ipv4.tcp_wmem"))
        .map(|l| {
            l.split_once('=')
                .map(|(_, v)| v.split_whitespace().collect::<Vec<_>>().join(" "))
        });
    match line {
        Some(Some(v)) if v == AFTER_WMEM && state == "after" => {}
        None => {}
        other => torn.push(format!(
            "90-hlctl.conf: {other:?} with the namespace {state}"
        )),
    }
}

fn sysctl_state(v: &str, torn: &mut Vec<String>) -> &'static str {
    match v {
        BEFORE_WMEM => "before",
        AFTER_WMEM => "after",
        other => {
            torn.push(format!("tcp_wmem {other}"));
            "torn"
        }
    }
}

/// Rows of the history database, after checking its integrity.
fn db_counts(rig: &Rig, torn: &mut Vec<String>) -> (i64, Vec<String>) {
    let db = rusqlite::Connection::open(rig.state().join("history.db")).unwrap();
    let ok: String = db
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    if ok != "ok" {
        torn.push(format!("integrity_check: {ok}"));
    }
    let n: i64 = db
        .query_row("SELECT COUNT(*) FROM results", [], |r| r.get(0))
        .unwrap();
    let mut st = db
        .prepare("SELECT name FROM baselines ORDER BY name")
        .unwrap();
    let names = st
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<Vec<String>, _>>()
        .unwrap();
    (n, names)
}

fn run_case(rig: &Rig, c: &Case, peer: &str) -> Row {
    let a = rig.lab.a.as_str();
    let mut torn = Vec::new();
    let mut rows_lost = 0;
    let (out, state) = match c.action {
        Action::SetPersist | Action::SetTry => {
            let mut args = vec!["set", a, "txqueuelen", "2000", "mtu", "9000"];
            args.extend(if c.action == Action::SetTry {
                ["--try", "2"]
            } else {
                ["--persist", "--json"]
            });
            let out = rig.killed(c.point, c.nth, &args);
            rig.restart();
            let state = link_state(rig.link(), &mut torn);
            if c.action == Action::SetTry && state != "before" {
                torn.push("an unconfirmed try was not rolled back".into());
            }
            check_nic_files(rig, state, &mut torn);
            (out, state)
        }
        Action::SysctlPersist => {
            let kv = format!("net.ipv4.tcp_wmem={AFTER_WMEM}");
            let out = rig.killed(c.point, c.nth, &["sysctl", &kv, "--persist"]);
            rig.restart();
            let state = sysctl_state(&rig.wmem(), &mut torn);
            check_sysctl_file(rig, state, &mut torn);
            (out, state)
        }
        Action::Tune => {
            let kv = format!("net.ipv4.tcp_wmem={AFTER_WMEM}");
            let out = rig.killed(
                c.point,
                c.nth,
                &[
                    "tune",
                    a,
                    "--peer",
                    peer,
                    "--yes",
                    "--runs",
                    "1",
                    "--time",
                    "1",
                    "--no-mtu",
                    "--confirm-timeout",
                    "600",
                    "--try",
                    &kv,
                ],
            );
            rig.restart();
            let state = sysctl_state(&rig.wmem(), &mut torn);
            if state != "before" {
                torn.push("an unconfirmed tune was not rolled back".into());
            }
            check_no_journal(rig, &mut torn);
            (out, state)
        }
        Action::BenchCpu | Action::BaselineSave => {
            // Acknowledged first: a row (and a baseline) the kill must not lose.
            assert_ok(&rig.hlctl(&["bench", "cpu", "--time", "1"]));
            assert_ok(&rig.hlctl(&["baseline", "save", "acked"]));
            let (rows, names) = db_counts(rig, &mut torn);
            let out = if c.action == Action::BenchCpu {
                rig.killed(c.point, c.nth, &["bench", "cpu", "--time", "1"])
            } else {
                rig.killed(c.point, c.nth, &["baseline", "save", "killed"])
            };
            let (rows_after, names_after) = db_counts(rig, &mut torn);
            rows_lost = (rows - rows_after).max(0)
                + names.iter().filter(|n| !names_after.contains(n)).count() as i64;
            let grew = rows_after > rows || names_after.len() > names.len();
            let state = if grew { "after" } else { "before" };
            // After COMMIT the write is on disk, though never acknowledged.
            if c.point.ends_with("after-commit") && !grew {
                torn.push("a committed write is missing".into());
            }
            (out, state)
        }
    };
    let reached = out.status.signal() == Some(libc::SIGKILL);
    Row {
        point: format!("{}#{}", c.point, c.nth),
        action: c.action,
        reached,
        state,
        torn,
        rows_lost,
    }
}

fn assert_ok(out: &Output) {
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The declared points, as the binary names them when asked for one it lacks.
fn declared() -> Vec<String> {
    let out = Command::new(common::HLCTL)
        .arg("status")
        .env("HLCTL_CRASH_AT", "?")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    let list = err
        .split("POINT one of: ")
        .nth(1)
        .unwrap_or_else(|| panic!("no list of points: {err}"));
    list.trim().split(", ").map(str::to_string).collect()
}

#[test]
fn every_crash_point_leaves_a_whole_state_and_loses_no_row() {
    let _serial = common::lab::serial();
    let dir = tempfile::tempdir().unwrap();
    let list = dir.path().join("reached");
    let mut rows = Vec::new();
    let mut peer_server = None;
    for c in CASES {
        let rig = Rig::new(&list);
        let peer = if c.action == Action::Tune {
            rig.lab
                .here
                .exec(&["sysctl", "-qw", &format!("net.ipv4.tcp_wmem={BEFORE_WMEM}")]);
            let srv = rig.lab.iperf3_server();
            let p = rig.lab.peer_arg(&srv);
            peer_server = Some(srv);
            p
        } else {
            if c.action == Action::SysctlPersist {
                rig.lab
                    .here
                    .exec(&["sysctl", "-qw", &format!("net.ipv4.tcp_wmem={BEFORE_WMEM}")]);
            }
            String::new()
        };
        rows.push(run_case(&rig, c, &peer));
        drop(peer_server.take());
    }
    print_table(&rows);

    let passed: Vec<String> = std::fs::read_to_string(&list)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect();
    let declared = declared();
    let missing: Vec<&String> = declared
        .iter()
        .filter(|p| !passed.contains(p) && !DAEMON_ONLY.contains(&p.as_str()))
        .collect();
    let killed_at: Vec<&str> = CASES.iter().map(|c| c.point).collect();
    let never_killed: Vec<&String> = declared
        .iter()
        .filter(|p| !killed_at.contains(&p.as_str()) && !DAEMON_ONLY.contains(&p.as_str()))
        .collect();
    eprintln!(
        "points declared {}, passed {}, killed at {} (hlctld only, not here: {})",
        declared.len(),
        declared.iter().filter(|p| passed.contains(p)).count(),
        rows.iter().filter(|r| r.reached).count(),
        DAEMON_ONLY.join(", ")
    );
    assert!(
        missing.is_empty(),
        "declared points never passed: {missing:?}"
    );
    assert!(
        never_killed.is_empty(),
        "declared points no case kills at: {never_killed:?}"
    );
    let unreached: Vec<&str> = rows
        .iter()
        .filter(|r| !r.reached)
        .map(|r| r.point.as_str())
        .collect();
    assert!(unreached.is_empty(), "not killed at: {unreached:?}");
    let torn: Vec<String> = rows
        .iter()
        .flat_map(|r| r.torn.iter().map(move |t| format!("{}: {t}", r.point)))
        .collect();
    assert!(torn.is_empty(), "torn states:\n{}", torn.join("\n"));
    let lost: i64 = rows.iter().map(|r| r.rows_lost).sum();
    assert_eq!(lost, 0, "acknowledged rows lost");
}

fn print_table(rows: &[Row]) {
    eprintln!(
        "{:<44} {:<14} {:<8} {:<7} {:<5} rows lost",
        "point", "command", "reached", "state", "torn"
    );
    for r in rows {
        eprintln!(
            "{:<44} {:<14} {:<8} {:<7} {:<5} {}",
            r.point,
            format!("{:?}", r.action),
            if r.reached { "y" } else { "n" },
            r.state,
            r.torn.len(),
            r.rows_lost
        );
        for t in &r.torn {
            eprintln!("    torn: {t}");
        }
    }
}
