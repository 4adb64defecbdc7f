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
//! The same cases again with hlctld killed instead (the CLI asks it over a
//! private bus with the real polkitd, tests/common/bus.rs), and its own
//! points besides (the usage sampler's minute rows, stored at the latest
//! when hlctld stops): the restart is then hlctld's own start, up to the
//! `READY=1` it sends systemd once journals are restored and persisted
//! settings re-applied.
//!
//! Real veths in namespaces of the test's own (tests/common/lab.rs); the
//! state, sysctl.d and the managers' files (ifupdown2's
//! `/etc/network/interfaces`) under the test's temporary directory. Prints
//! a table: point, reached, state after, torn, rows lost.

mod common;

use std::ffi::OsStr;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Output, Stdio};
use std::time::{Duration, Instant};

use common::bus::{self, BUS_NAME, Daemon, HLCTLD};
use common::lab::{Lab, hlctl_argv};
use serde_json::Value;

/// The points only hlctld passes (its usage sampler): not reached by hlctl.
const DAEMON_ONLY: &[&str] = &[
    "sqlite:usage-minutes:before-commit",
    "sqlite:usage-minutes:after-commit",
];

const BEFORE_WMEM: &str = "4096 16384 65536";
const AFTER_WMEM: &str = "4096 16384 131072";
const BEFORE_RMEM: &str = "4096 131072 262144";
const AFTER_RMEM: &str = "4096 131072 524288";

/// What the killed command was.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Action {
    /// `set A txqueuelen 2000 mtu 9000 --persist` (two kernel requests),
    /// ifupdown2 owning A's MTU.
    SetPersist,
    /// `set A txqueuelen 2000 mtu 9000 --try 2`, never confirmed.
    SetTry,
    /// `sysctl net.ipv4.tcp_wmem=... net.ipv4.tcp_rmem=... --persist` (the
    /// namespace's own; two keys: one change set, journalled).
    SysctlPersist,
    /// `tune A --try tcp_wmem...` against iperf3 in the peer, not confirmed.
    Tune,
    /// `bench cpu --time 1` (a history row).
    BenchCpu,
    /// `baseline save`.
    BaselineSave,
    /// hlctld sampling the veth's usage, then stopped (SIGTERM: it stores
    /// the minute still filling).
    UsageStop,
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
    // Between the two keys' writes (the change set's journal puts it back).
    case("sysctl:write:after", 1, Action::SysctlPersist),
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

/// hlctld's own points, on top of [`CASES`].
const DAEMON_CASES: &[Case] = &[
    case("sqlite:usage-minutes:before-commit", 1, Action::UsageStop),
    case("sqlite:usage-minutes:after-commit", 1, Action::UsageStop),
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

/// A lab with its managers' tree and the file of crash points passed;
/// with `bus`, hlctld is what gets killed.
struct Rig<'b> {
    lab: Lab,
    root: tempfile::TempDir,
    list: PathBuf,
    bus: Option<&'b bus::Rig>,
}

impl<'b> Rig<'b> {
    fn new(list: &Path, bus: Option<&'b bus::Rig>) -> Rig<'b> {
        let lab = Lab::new();
        let root = tempfile::tempdir().unwrap();
        let rig = Rig {
            lab,
            root,
            list: list.to_path_buf(),
            bus,
        };
        std::fs::create_dir_all(rig.root.path().join("usr/share/ifupdown2")).unwrap();
        write(&rig.interfaces(), &interfaces_text(&rig.lab.a));
        // The veth has no physical speed: named, hlctld samples it too.
        write(
            &rig.root.path().join("etc/hlctl/hlctl.toml"),
            &format!("[usage]\nlinks = [\"{}:1G\"]\n", rig.lab.a),
        );
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

    /// `args`, killed at `point#nth`: hlctl itself, or with a bus hlctld
    /// asked by hlctl (the status is then hlctld's).
    fn killed(&self, point: &str, nth: u32, args: &[&str]) -> Output {
        let at = format!("{point}#{nth}");
        let Some(bus) = self.bus else {
            return within(self.command(args).env("HLCTL_CRASH_AT", at));
        };
        let mut d = self.daemon(bus, &[("HLCTL_CRASH_AT", at.as_ref())]);
        let out = within(
            Command::new(common::HLCTL)
                .arg("--bus")
                .arg(&bus.address)
                .args(args)
                .env_remove("HLCTL_LOCAL")
                .stdin(Stdio::null()),
        );
        Output {
            status: ended(bus, &mut d, Duration::from_secs(5)),
            ..out
        }
    }

    /// hlctld in the lab's namespace with the rig's root and directories,
    /// sampling usage every 100 ms, with `env` added.
    fn daemon(&self, bus: &bus::Rig, env: &[(&str, &OsStr)]) -> Daemon {
        let root = self.root.path().to_str().unwrap();
        let mut e = vec![("HLCTL_CRASH_LIST", self.list.as_os_str())];
        e.extend_from_slice(env);
        let extra = ["--root", root, "--test-usage-interval-ms", "100"];
        bus.daemon_env(HLCTLD, &self.lab.here, self.lab.dir.path(), &extra, &e)
    }

    /// What a start runs: `hlctl reapply` without hlctld; with it, hlctld's
    /// start up to its READY=1 (journals restored, persisted settings
    /// re-applied), then stopped.
    fn restart(&self) {
        let Some(bus) = self.bus else {
            let out = self.hlctl(&["reapply", "--json"]);
            if let Err(e) = serde_json::from_slice::<Value>(&out.stdout) {
                panic!(
                    "reapply: not JSON ({e}): {}",
                    String::from_utf8_lossy(&out.stderr)
                )
            }
            return;
        };
        let sock = self.lab.dir.path().join("notify");
        let _ = std::fs::remove_file(&sock);
        let ready = std::os::unix::net::UnixDatagram::bind(&sock).unwrap();
        ready
            .set_read_timeout(Some(Duration::from_secs(60)))
            .unwrap();
        let mut d = self.daemon(bus, &[("NOTIFY_SOCKET", sock.as_os_str())]);
        let mut buf = [0u8; 512];
        loop {
            let n = ready
                .recv(&mut buf)
                .unwrap_or_else(|e| panic!("hlctld said no READY=1 ({e}):\n{}", d.log()));
            if String::from_utf8_lossy(&buf[..n])
                .lines()
                .any(|l| l == "READY=1")
            {
                break;
            }
        }
        d.terminate();
        bus.wait_name_gone(BUS_NAME, Duration::from_secs(10));
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

    /// `net.ipv4.KEY` in the lab's namespace, whitespace normalised.
    fn sysctl(&self, key: &str) -> String {
        let out = self
            .lab
            .here
            .exec(&["cat", &format!("/proc/sys/net/ipv4/{key}")]);
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

/// hlctld's exit status once it ended by itself (the crash point), or
/// `grace` after it was asked to stop (SIGTERM) when it had not.
fn ended(bus: &bus::Rig, d: &mut Daemon, grace: Duration) -> ExitStatus {
    let deadline = Instant::now() + grace;
    let status = loop {
        if let Some(s) = d.proc.0.try_wait().unwrap() {
            break s;
        }
        if Instant::now() >= deadline {
            break d.terminate();
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    bus.wait_name_gone(BUS_NAME, Duration::from_secs(10));
    status
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
    match rx.recv_timeout(Duration::from_secs(60)) {
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

/// `90-hlctl.conf` is absent or holds both whole lines, and agrees with
/// the namespace's values.
fn check_sysctl_file(rig: &Rig, state: &str, torn: &mut Vec<String>) {
    let p = rig.lab.sysctl_dir().join("90-hlctl.conf");
    let Ok(t) = std::fs::read_to_string(&p) else {
        return;
    };
    let line = |key: &str| {
        t.lines().find(|l| l.starts_with(key)).map(|l| {
            l.split_once('=')
                .map(|(_, v)| v.split_whitespace().collect::<Vec<_>>().join(" "))
        })
    };
    let lines = (line("net.ipv4.tcp_wmem"), line("net.ipv4.tcp_rmem"));
    match &lines {
        (Some(Some(w)), Some(Some(r)))
            if w == AFTER_WMEM && r == AFTER_RMEM && state == "after" => {}
        (None, None) => {}
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

/// The usage minute rows stored for `iface`.
fn usage_minutes(rig: &Rig, iface: &str) -> i64 {
    let db = rusqlite::Connection::open(rig.state().join("history.db")).unwrap();
    db.query_row(
        "SELECT COUNT(*) FROM usage_minute WHERE iface = ?1",
        [iface],
        |r| r.get(0),
    )
    .unwrap()
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
            let w = format!("net.ipv4.tcp_wmem={AFTER_WMEM}");
            let r = format!("net.ipv4.tcp_rmem={AFTER_RMEM}");
            let out = rig.killed(c.point, c.nth, &["sysctl", &w, &r, "--persist"]);
            rig.restart();
            let state = match (
                rig.sysctl("tcp_wmem").as_str(),
                rig.sysctl("tcp_rmem").as_str(),
            ) {
                (BEFORE_WMEM, BEFORE_RMEM) => "before",
                (AFTER_WMEM, AFTER_RMEM) => "after",
                other => {
                    torn.push(format!("tcp_wmem, tcp_rmem {other:?}"));
                    "torn"
                }
            };
            check_sysctl_file(rig, state, &mut torn);
            check_no_journal(rig, &mut torn);
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
            let state = sysctl_state(&rig.sysctl("tcp_wmem"), &mut torn);
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
        Action::UsageStop => {
            assert_ok(&rig.hlctl(&["bench", "cpu", "--time", "1"]));
            let (rows, _) = db_counts(rig, &mut torn);
            let bus = rig.bus.expect("hlctld's own point");
            let at = format!("{}#{}", c.point, c.nth);
            let mut d = rig.daemon(bus, &[("HLCTL_CRASH_AT", at.as_ref())]);
            std::thread::sleep(Duration::from_millis(1500));
            let status = ended(bus, &mut d, Duration::ZERO);
            let (rows_after, _) = db_counts(rig, &mut torn);
            rows_lost = (rows - rows_after).max(0);
            let minutes = usage_minutes(rig, &rig.lab.a);
            let state = if minutes > 0 { "after" } else { "before" };
            if c.point.ends_with("after-commit") && minutes == 0 {
                torn.push("a committed minute row is missing".into());
            }
            let out = Output {
                status,
                stdout: Vec::new(),
                stderr: Vec::new(),
            };
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
    let cases: Vec<&Case> = CASES.iter().collect();
    every_point(&cases, None, DAEMON_ONLY);
}

#[test]
fn hlctld_killed_at_every_crash_point_leaves_a_whole_state_and_loses_no_row() {
    let _serial = common::lab::serial();
    let bus = bus::Rig::start();
    let cases: Vec<&Case> = CASES.iter().chain(DAEMON_CASES).collect();
    every_point(&cases, Some(&bus), &[]);
}

/// Each case in a fresh lab (hlctl killed, or with `bus` hlctld), the table
/// printed, then: every declared point but `not_here` passed and killed
/// at, no torn state, no acknowledged row lost.
fn every_point(cases: &[&Case], bus: Option<&bus::Rig>, not_here: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let list = dir.path().join("reached");
    let mut rows = Vec::new();
    for c in cases {
        let rig = Rig::new(&list, bus);
        let mut peer_server = None;
        if matches!(c.action, Action::Tune | Action::SysctlPersist) {
            for kv in [
                format!("net.ipv4.tcp_wmem={BEFORE_WMEM}"),
                format!("net.ipv4.tcp_rmem={BEFORE_RMEM}"),
            ] {
                rig.lab.here.exec(&["sysctl", "-qw", &kv]);
            }
        }
        let peer = if c.action == Action::Tune {
            let srv = rig.lab.iperf3_server();
            let p = rig.lab.peer_arg(&srv);
            peer_server = Some(srv);
            p
        } else {
            String::new()
        };
        rows.push(run_case(&rig, c, &peer));
        drop(peer_server);
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
        .filter(|p| !passed.contains(p) && !not_here.contains(&p.as_str()))
        .collect();
    let killed_at: Vec<&str> = cases.iter().map(|c| c.point).collect();
    let never_killed: Vec<&String> = declared
        .iter()
        .filter(|p| !killed_at.contains(&p.as_str()) && !not_here.contains(&p.as_str()))
        .collect();
    eprintln!(
        "{}: points declared {}, passed {}, killed at {} (not here: {})",
        if bus.is_some() { "hlctld" } else { "hlctl" },
        declared.len(),
        declared.iter().filter(|p| passed.contains(p)).count(),
        rows.iter().filter(|r| r.reached).count(),
        if not_here.is_empty() {
            "none".to_string()
        } else {
            not_here.join(", ")
        }
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
