//! History, baselines, compare, tune status and rollback through hlctld, on a
//! private bus with the real polkitd: an unprivileged user (who cannot open
//! the history database itself) reads what root wrote, row for row; saving a
//! baseline and rolling back are refused without authorization and allowed
//! to the member of a group a polkit rules file grants. The doctor runs as a
//! daemon job for the same user and its report lands in the history; so does
//! `hlctl report`, whose benchmarks run in hlctld.

mod common;

use std::process::{Command, Output};

use common::NetNs;
use common::bus::{HLCTL, Rig, TempUser};
use hlctl::history::store::{Metric, NewResult};
use hlctl::history::{History, Kind};
use hlctl::host::HostInfo;
use serde_json::Value;

/// Run by `Rig::call_as` as another user; ignored in a normal run.
#[test]
#[ignore = "not a test: the D-Bus caller that Rig::call_as runs as another user"]
fn helper() {
    common::bus::helper_main();
}

fn text(o: &Output) -> String {
    format!(
        "exit {:?}\nstdout: {}\nstderr: {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn json(o: &Output) -> Value {
    assert!(o.status.success(), "{}", text(o));
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(o)))
}

/// Root's own view, in-process on the daemon's state directory.
fn local(state: &std::path::Path, args: &[&str]) -> Output {
    Command::new(HLCTL)
        .arg("--local")
        .arg("--state-dir")
        .arg(state)
        .args(args)
        .output()
        .unwrap()
}

fn write_results(state: &std::path::Path, iface: &str) {
    let mut h = History::open(state).unwrap();
    for (i, (kind, value)) in [(Kind::Net, 941e6), (Kind::Cpu, 1234.0), (Kind::Net, 512e6)]
        .into_iter()
        .enumerate()
    {
        let metrics = match kind {
            Kind::Net => vec![Metric::new("net upload", "10.9.0.2:5201", value, "bit/s")],
            _ => vec![Metric::new("cpu single", "", value, "events/s")],
        };
        let mut settings = std::collections::BTreeMap::new();
        settings.insert(format!("{iface} mtu"), format!("{}", 1500 + i));
        h.add(&NewResult {
            kind,
            host: HostInfo::current(),
            interface: Some(iface.to_string()),
            peer: (kind == Kind::Net).then(|| "10.9.0.2".to_string()),
            settings,
            result: serde_json::json!({ "written_by": "root", "n": i }),
            metrics,
            ts: Some(1_700_000_000 + i as i64 * 60),
            uid: None,
        })
        .unwrap();
    }
}

#[test]
fn an_unprivileged_user_reads_the_records_through_hlctld_and_changes_need_polkit() {
    let allowed = TempUser::new();
    let nobody = TempUser::new();
    let rules = common::bus::grant(&allowed.group, &["save-baseline", "run-benchmark", "tune"]);
    // polkitd reads rules at start: the rig starts it after the file exists.
    let mut rig = Rig::start();
    rig.start_polkit();
    let ns = NetNs::new();
    let (a, b) = (common::unique("ra"), common::unique("rb"));
    ns.veth(&a, &b);
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    std::fs::create_dir_all(&state).unwrap();
    write_results(&state, &a);
    let daemon = rig.daemon(&ns, dir.path(), &[]);
    let user = |args: &[&str]| rig.hlctl_as(nobody.uid, nobody.gid, args);

    // The database is root's: the user cannot read it in-process.
    let own = Command::new("setpriv")
        .args([
            "--reuid",
            &nobody.uid.to_string(),
            "--regid",
            &nobody.gid.to_string(),
            "--clear-groups",
        ])
        .arg(HLCTL)
        .arg("--local")
        .args(["history", "--json"])
        .output()
        .unwrap();
    assert!(!own.status.success(), "{}", text(&own));

    // history: the rows the user reads equal what root wrote, with each filter.
    for args in [
        &["history", "--json"][..],
        &["history", "--json", "--kind", "net"],
        &["history", "--json", "--limit", "1"],
        &["history", "--json", "--since", "1700000060"],
    ] {
        let theirs = json(&user(args));
        let ours = json(&local(&state, args));
        assert_eq!(theirs, ours, "{args:?}\n{}", daemon.log());
    }
    let rows = json(&user(&["history", "--json"]));
    assert_eq!(rows["results"].as_array().unwrap().len(), 3);
    assert_eq!(rows["results"][0]["result"]["written_by"], "root");
    // A bad filter is the caller's mistake, named.
    let bad = user(&["history", "--kind", "gpu"]);
    assert_eq!(bad.status.code(), Some(2), "{}", text(&bad));

    // No baseline yet: compare says so (exit 2).
    let out = user(&["compare", "--json"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no baseline"));

    // Saving a baseline: refused without authorization, nothing saved.
    let out = user(&["baseline", "save", "before"]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("save-baseline"));
    assert_eq!(
        json(&local(&state, &["baseline", "list", "--json"]))["baselines"],
        serde_json::json!([])
    );
    // Allowed to the group's member.
    let out = rig.hlctl_as(
        allowed.uid,
        allowed.gid,
        &["baseline", "save", "before", "--json"],
    );
    assert_eq!(json(&out)["metrics"], 2, "{}", daemon.log());

    // list and compare: open to everyone, equal to root's view.
    let theirs = json(&user(&["baseline", "list", "--json"]));
    assert_eq!(theirs["baselines"][0]["name"], "before");
    assert_eq!(
        theirs,
        json(&local(&state, &["baseline", "list", "--json"]))
    );
    let theirs = json(&user(&["compare", "before", "--json"]));
    assert_eq!(theirs["baseline"], "before");
    assert_eq!(
        theirs,
        json(&local(&state, &["compare", "before", "--json"]))
    );

    // status: open to everyone.
    let theirs = json(&user(&["status", "--json"]));
    assert_eq!(theirs, json(&local(&state, &["status", "--json"])));
    assert_eq!(theirs["pending"], serde_json::json!([]));

    // doctor: a job in hlctld, its read-only checks open to everyone; the
    // report of a caller whose measurements polkit did not authorize is
    // not stored in the shared history (issue 23).
    let out = user(&["doctor", &a, "--stress", "0", "--json"]);
    let report = json(&out);
    assert_eq!(
        report["interfaces"],
        serde_json::json!([a]),
        "{}",
        daemon.log()
    );
    let rows = json(&local(&state, &["history", "--json", "--kind", "doctor"]));
    assert_eq!(rows["results"].as_array().unwrap().len(), 0, "{rows}");
    // An authorized measuring doctor lands there, under the caller's uid.
    let out = rig.hlctl_as(
        allowed.uid,
        allowed.gid,
        &["doctor", &a, "--stress", "1", "--json"],
    );
    let report = json(&out);
    let rows = json(&local(&state, &["history", "--json", "--kind", "doctor"]));
    assert_eq!(rows["results"].as_array().unwrap().len(), 1, "{rows}");
    assert_eq!(rows["results"][0]["interface"], a);
    assert_eq!(rows["results"][0]["uid"], allowed.uid);
    assert_eq!(rows["results"][0]["result"]["findings"], report["findings"]);
    // Measuring disks writes files as root: without run-benchmark the
    // doctor leaves it out and says why.
    let out = user(&["doctor", &a, "--stress", "0", "--dir", "/tmp", "--json"]);
    let report = json(&out);
    let skipped: Vec<&str> = report["not_checked"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["detail"].as_str().unwrap_or("").contains("run-benchmark"))
        .filter_map(|c| c["check"].as_str())
        .collect();
    assert_eq!(skipped, ["storage throughput"], "{report}");
    assert!(
        report["storage"].as_array().is_none_or(|s| s.is_empty()),
        "{report}"
    );

    // report: its benchmarks run in hlctld (run-benchmark) and it lands in
    // the history; the files go where the user says.
    let out_dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(
        out_dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o777),
    )
    .unwrap();
    let out_arg = out_dir.path().to_str().unwrap();
    let report_args = ["report", "--time", "1", "--out", out_arg, "--json"];
    let out = user(&report_args);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("run-benchmark"));
    let out = rig.hlctl_as(allowed.uid, allowed.gid, &report_args);
    let r = json(&out);
    assert!(
        r["report"]["cpu"].as_array().is_some_and(|c| !c.is_empty()),
        "{r}"
    );
    assert!(std::path::Path::new(r["markdown"].as_str().unwrap()).exists());
    let rows = json(&local(&state, &["history", "--json", "--kind", "report"]));
    assert_eq!(rows["results"].as_array().unwrap().len(), 1, "{rows}");
    assert_eq!(
        rows["results"][0]["result"]["timestamp"],
        r["report"]["timestamp"]
    );
    assert_eq!(
        json(&user(&["history", "--json", "--kind", "report"])),
        rows
    );

    // rollback: refused without the tune authorization, allowed with it.
    let out = user(&["rollback", &a]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("org.hlctl.Daemon1.tune"));
    let out = rig.hlctl_as(allowed.uid, allowed.gid, &["rollback", &a, "--json"]);
    let r = json(&out);
    assert_eq!(r["pending_restored"], serde_json::json!([]));
    assert_eq!(r["undone"], serde_json::json!([]));

    let log = daemon.log();
    assert!(log.contains(&format!("uid={}", allowed.uid)), "{log}");
    drop(daemon);
    drop(rig);
    drop(rules);
}
