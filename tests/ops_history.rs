//! One operation, one place (issue 25): the same benchmark run in this
//! process and through hlctld leaves one history row each, of the same
//! shape, written where the work ran, naming who asked.

mod common;

use common::bus::{DaemonLab, TempUser};
use serde_json::Value;
use std::collections::BTreeSet;

/// Run by `Rig::call_as` as another user; ignored in a normal run.
#[test]
#[ignore = "not a test: the D-Bus caller that Rig::call_as runs as another user"]
fn helper() {
    common::bus::helper_main();
}

fn json(out: &std::process::Output) -> Value {
    assert!(out.status.success(), "{}", common::output_text(out));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The cpu rows of a history.
fn cpu_rows(history: &Value) -> Vec<Value> {
    history["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["kind"] == "cpu")
        .cloned()
        .collect()
}

fn keys(v: &Value) -> BTreeSet<String> {
    v.as_object().unwrap().keys().cloned().collect()
}

fn metric_names(row: &Value) -> Vec<String> {
    row["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_benchmark_in_process_and_through_hlctld_leaves_one_row_of_the_same_shape() {
    let user = TempUser::new();
    let _rules = common::bus::grant(&user.group, &["run-benchmark"]);
    let lab = DaemonLab::new(&[]);
    let bench = ["bench", "cpu", "--time", "1", "--threads", "1", "--json"];

    // In this process, as root, into a state directory of its own.
    let local_state = tempfile::tempdir().unwrap();
    let local = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_hlctl"))
            .arg("--local")
            .arg("--state-dir")
            .arg(local_state.path())
            .args(args)
            .output()
            .unwrap()
    };
    let mine = json(&local(&bench));
    // Through hlctld, as an unprivileged user that polkit lets benchmark.
    let theirs = json(&lab.rig.hlctl_as(user.uid, user.gid, &bench));

    let local_rows = cpu_rows(&json(&local(&["history", "--json"])));
    let daemon_rows = cpu_rows(&lab.json(&["history"]));
    assert_eq!(local_rows.len(), 1, "written once: {local_rows:?}");
    assert_eq!(
        daemon_rows.len(),
        1,
        "written once, by hlctld: {daemon_rows:?}"
    );
    let (l, d) = (&local_rows[0], &daemon_rows[0]);
    assert_eq!(keys(l), keys(d), "the same row shape");
    // A result has the same fields in both, apart from `warnings`, which a
    // run has only when something disturbed it (CI's busy machine warned of
    // load during one run and not the other); what each run warned of is
    // what its row holds.
    let fields = |v: &Value| {
        let mut k = keys(&v["result"]);
        k.remove("warnings");
        k
    };
    assert_eq!(fields(l), fields(d));
    assert_eq!(l["result"]["warnings"], mine["warnings"]);
    assert_eq!(d["result"]["warnings"], theirs["warnings"]);
    assert_eq!(metric_names(l), metric_names(d));
    assert_eq!(l["uid"], 0, "in process: this process's user");
    assert_eq!(d["uid"], user.uid, "through hlctld: the caller's uid");
    // Each row holds what its run measured.
    assert_eq!(l["result"]["events"], mine["events"]);
    assert_eq!(d["result"]["events"], theirs["events"]);
}
