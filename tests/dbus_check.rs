//! `hlctl check` through hlctld (`Manager.Check`, a job) against the same
//! check in process (`--local`), on a private bus with the real polkitd and
//! the real disk benchmark: the same exit code and verdict both ways, a
//! `check` row in hlctld's history under the caller's uid, the comparison
//! with the previous check, the Prometheus textfile written by hlctld, the
//! same first line for invalid input, and an unprivileged caller without
//! run-benchmark refused.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::bus::{DaemonLab, HLCTL, TempUser};
use serde_json::Value;

fn text(o: &Output) -> String {
    format!(
        "exit {:?}\nstdout: {}\nstderr: {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn first_line(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr)
        .lines()
        .find(|l| !l.contains("warning"))
        .unwrap_or_default()
        .to_string()
}

/// A `[check]` of one small disk run and no CPU, its metrics into `prom`;
/// the threshold so wide that no change of a 4 MiB run is a regression (the
/// two histories' figures differ; exit codes must not).
struct Host {
    dir: tempfile::TempDir,
    conf: PathBuf,
}

impl Host {
    fn new() -> Host {
        let dir = tempfile::tempdir().unwrap();
        let disk = dir.path().join("disk");
        std::fs::create_dir_all(&disk).unwrap();
        let prom = dir.path().join("prom");
        std::fs::create_dir_all(&prom).unwrap();
        let conf = dir.path().join("hlctl.toml");
        std::fs::write(
            &conf,
            format!(
                "[check]\ndirs = [\"{}\"]\ncpu = false\ndisk_size_mib = 4\nbench_time_s = 1\n\
                 threshold_percent = 1000\n\
                 [metrics]\ntextfile_dir = \"{}\"\n",
                disk.display(),
                prom.display()
            ),
        )
        .unwrap();
        Host { dir, conf }
    }

    /// The check in this process, with a state directory of its own.
    fn local(&self, args: &[&str]) -> Output {
        Command::new(HLCTL)
            .arg("--local")
            .arg("--state-dir")
            .arg(self.dir.path().join("local-state"))
            .arg("--config")
            .arg(&self.conf)
            .arg("check")
            .args(args)
            .output()
            .unwrap()
    }
}

fn outcome(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(o)))
}

/// The same exit code both ways; both outcomes.
fn both(lab: &DaemonLab, host: &Host, args: &[&str]) -> (i32, Value, Value) {
    let mut full = vec!["check", "--json"];
    full.extend_from_slice(args);
    let bus = lab.rig.hlctl(&full);
    let mut local_args = vec!["--json"];
    local_args.extend_from_slice(args);
    let local = host.local(&local_args);
    assert_eq!(
        bus.status.code(),
        local.status.code(),
        "through hlctld:\n{}\nin process:\n{}\ndaemon log:\n{}",
        text(&bus),
        text(&local),
        lab.log()
    );
    (bus.status.code().unwrap(), outcome(&bus), outcome(&local))
}

fn history_checks(lab: &DaemonLab) -> Vec<Value> {
    lab.json(&["history", "--kind", "check"])["results"]
        .as_array()
        .unwrap()
        .clone()
}

#[test]
fn a_check_through_hlctld_is_stored_and_exits_as_in_process() {
    let host = Host::new();
    let conf = host.conf.to_str().unwrap().to_string();
    let lab = DaemonLab::new(&["--config", &conf]);
    // --if-kernel-changed before any check: nothing to do, both ways.
    let (code, bus, local) = both(&lab, &host, &["--if-kernel-changed"]);
    assert_eq!(code, 0);
    for v in [&bus, &local] {
        assert_eq!(v["skipped"], true, "{v}");
        assert!(v["kernel"].as_str().unwrap().contains("no check ran yet"));
    }
    assert!(history_checks(&lab).is_empty());
    // The first check: measured, stored, no reference, passed.
    let (code, bus, local) = both(&lab, &host, &[]);
    assert_eq!(code, 0, "{bus}\n{local}");
    for v in [&bus, &local] {
        assert_eq!(v["passed"], true, "{v}");
        assert!(v["comparison"].is_null(), "{v}");
        let disk = &v["check"]["disk"][0];
        assert!(disk["error"].is_null(), "{v}");
        assert!(Path::new(v["metrics_file"].as_str().unwrap()).is_file());
    }
    let rows = history_checks(&lab);
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0]["uid"], 0, "{rows:?}");
    // The second: compared with the first, in hlctld's history.
    let (_, bus, _) = both(&lab, &host, &[]);
    assert_eq!(bus["comparison"]["baseline"], "previous check", "{bus}");
    assert_eq!(history_checks(&lab).len(), 2);
    // A peer nobody serves: not measured, exit 1 both ways.
    let (code, bus, local) = both(
        &lab,
        &host,
        &["--peer", "127.0.0.1:1", "--busy-window", "0", "--time", "1"],
    );
    assert_eq!(code, 1, "{bus}");
    for v in [&bus, &local] {
        assert_eq!(v["passed"], false, "{v}");
        assert!(!v["failures"].as_array().unwrap().is_empty(), "{v}");
    }
    println!("through hlctld: {bus}");
}

#[test]
fn invalid_input_and_no_permission_through_hlctld() {
    let host = Host::new();
    let conf = host.conf.to_str().unwrap().to_string();
    let lab = DaemonLab::new(&["--config", &conf]);
    // Checked before the path is chosen: the same code and first line.
    let bus = lab.rig.hlctl(&["check", "--peer", "host:notaport"]);
    let local = host.local(&["--peer", "host:notaport"]);
    assert_eq!(bus.status.code(), Some(2), "{}", text(&bus));
    assert_eq!(local.status.code(), Some(2), "{}", text(&local));
    assert!(first_line(&bus).contains("host:notaport"), "{}", text(&bus));
    assert_eq!(first_line(&bus), first_line(&local));
    // (A relative --dir is made absolute by the client; the decoder's own
    // refusals are its unit tests, dbus::wire::check.)
    let user = TempUser::new();
    let o = lab.rig.hlctl_as(user.uid, user.gid, &["check"]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(history_checks(&lab).is_empty());
}
