//! "Will it carry what I run?" (issue 29, part 1): `hlctl doctor --workload`
//! on a veth path shaped with `tc tbf` to 120 Mbit/s both ways, towards a
//! real `iperf3 -s` in the peer namespace, with a directory on this
//! machine's disk as the media volume. One doctor run judges every
//! workload at once:
//! - `plex-4k` (100 Mbit/s a stream) is carried, the network row "ok";
//! - `plex-4k:2` is not: the network is the limit and 1 stream fits;
//! - `--need disk-read=…` far above any disk names the storage;
//! - `--need cpu=…` far above any CPU names the CPU (a real CPU run), and
//!   `--need disk-randread=…` the random reads (a real run in the `--dir`);
//!
//! and the JSON carries every row (needed, measured, source, verdict).
//! A bad workload name is refused before anything runs, with the list.

mod common;

use common::lab::{Lab, serial};
use serde_json::Value;

fn answer<'a>(r: &'a Value, label: &str) -> &'a Value {
    r["workloads"]
        .as_array()
        .unwrap_or_else(|| panic!("no workloads in {r}"))
        .iter()
        .find(|a| {
            let w = &a["workload"];
            let name = w["name"].as_str().unwrap();
            let count = w["count"].as_u64().unwrap();
            label == name || label == format!("{name}:{count}")
        })
        .unwrap_or_else(|| panic!("{label} not answered: {}", r["workloads"]))
}

fn row<'a>(a: &'a Value, layer: &str) -> &'a Value {
    a["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["layer"] == layer)
        .unwrap_or_else(|| panic!("no {layer} row: {a}"))
}

#[test]
fn doctor_says_what_the_path_the_disk_and_the_cpu_carry() {
    let _serial = serial();
    let lab = Lab::new();
    lab.shape_both("120mbit");
    let srv = lab.iperf3_server();
    let peer = lab.peer_arg(&srv);
    let media = tempfile::tempdir_in("/var/tmp").unwrap();
    let r = lab.json(&[
        "doctor",
        &lab.a,
        "--peer",
        &peer,
        "--dir",
        media.path().to_str().unwrap(),
        "--disk-size",
        "32M",
        "--stress",
        "0",
        "--time",
        "3",
        "--workload",
        "plex-4k",
        "--workload",
        "plex-4k:2",
        "--need",
        "disk-read=1000000MB/s",
        "--need",
        "cpu=100000000",
        "--need",
        "disk-randread=100000000iops",
    ]);

    // One stream: the shaped path (about 115 Mbit/s) carries it.
    let one = answer(&r, "plex-4k");
    let net = row(one, "net");
    let measured = net["measured"].as_f64().unwrap();
    assert!(
        (90e6..=125e6).contains(&measured),
        "tbf 120 Mbit/s measured {measured}: {net}"
    );
    assert_eq!(net["verdict"], "ok", "{one}");
    assert_eq!(net["needed"].as_f64().unwrap(), 100e6);
    assert!(
        net["source"]
            .as_str()
            .unwrap()
            .starts_with("measured now: upload to"),
        "{net}"
    );
    assert_eq!(one["verdict"], "carries plex-4k", "{one}");

    // Two streams: the network is short and names itself the limit.
    let two = answer(&r, "plex-4k:2");
    assert_eq!(two["verdict"], "does not carry plex-4k ×2", "{two}");
    assert_eq!(two["limit"], "net", "{two}");
    assert_eq!(row(two, "net")["verdict"], "short");
    assert_eq!(row(two, "disk-read")["verdict"], "ok", "{two}");
    assert!(
        two["summary"]
            .as_str()
            .unwrap()
            .contains("the path to the client is the limit: 1 fits"),
        "{two}"
    );

    // Custom needs: the storage and the CPU named when they fall short.
    let customs: Vec<&Value> = r["workloads"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["workload"]["name"] == "custom")
        .collect();
    assert_eq!(customs.len(), 3, "{}", r["workloads"]);
    assert_eq!(customs[0]["limit"], "disk-read", "{}", customs[0]);
    assert!(row(customs[0], "disk-read")["measured"].as_f64().unwrap() > 0.0);
    assert_eq!(customs[1]["limit"], "cpu", "{}", customs[1]);
    let cpu = row(customs[1], "cpu");
    assert!(cpu["measured"].as_f64().unwrap() > 100.0, "{cpu}");
    assert_eq!(cpu["verdict"], "short");
    // Random reads: a run of their own in the first --dir.
    assert_eq!(customs[2]["limit"], "disk-randread", "{}", customs[2]);
    let rr = row(customs[2], "disk-randread");
    assert!(rr["measured"].as_f64().unwrap() > 10.0, "{rr}");
    assert!(
        rr["source"].as_str().unwrap().contains("random reads in"),
        "{rr}"
    );

    // The text says the same in the owner's words.
    let out = lab.hlctl(&[
        "doctor",
        &lab.a,
        "--peer",
        &peer,
        "--stress",
        "0",
        "--time",
        "1",
        "--workload",
        "plex-4k:2",
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("Workload plex-4k ×2: does not carry plex-4k ×2"),
        "{text}"
    );
}

#[test]
fn an_unknown_workload_is_refused_before_anything_runs() {
    let state = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_hlctl"))
        .arg("--state-dir")
        .arg(state.path())
        .args(["doctor", "--workload", "plex4k:2"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("did you mean plex-4k?"), "{err}");
    assert!(err.contains("nfs-backup"), "{err}");
    assert!(
        std::fs::read_dir(state.path()).unwrap().next().is_none(),
        "nothing stored"
    );
}

/// Through hlctld on a private bus (as root): the `workloads` option of
/// `Manager.Doctor` is judged in the daemon's report (its CPU run made
/// there), and a spec that names no workload is refused as
/// InvalidArgument with the suggestion, before any job starts.
#[test]
fn the_bus_carries_workloads_and_refuses_a_bad_one() {
    let _serial = serial();
    let lab = common::bus::DaemonLab::new(&[]);
    let r = lab.json(&["doctor", "--stress", "0", "--need", "cpu=100000000"]);
    let a = &r["workloads"][0];
    assert_eq!(a["limit"], "cpu", "{r}");
    let cpu = row(a, "cpu");
    assert!(cpu["measured"].as_f64().unwrap() > 100.0, "{cpu}");
    assert!(cpu["source"].as_str().unwrap().contains("CPU run"), "{cpu}");
    let out = lab.rig.busctl_as(
        0,
        0,
        &[
            "call",
            "org.hlctl.Daemon1",
            "/org/hlctl/Daemon1",
            "org.hlctl.Daemon1.Manager",
            "Doctor",
            "a{sv}",
            "1",
            "workloads",
            "as",
            "1",
            "plex4k:2",
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("did you mean plex-4k?"), "{err}");
    let jobs = lab.log();
    assert!(!jobs.contains("job 2 started"), "a job started:\n{jobs}");
}

/// `hlctl check` with a `[workload]` section, on the same 120 Mbit/s path:
/// `plex-4k`'s network need is met, `plex-4k:2`'s is not, which the check
/// reports with the metric and counts like a regression (exit 1); the JSON
/// carries the answers and the line.
#[test]
fn check_reports_a_workload_below_its_need() {
    let _serial = serial();
    let lab = Lab::new();
    lab.shape_both("120mbit");
    let srv = lab.iperf3_server();
    let peer = lab.peer_arg(&srv);
    let config = lab.dir.path().join("hlctl.toml");
    std::fs::write(
        &config,
        format!(
            "[check]\npeers = [\"{peer}\"]\ncpu = false\ntime_s = 2\n\n[workload]\nrun = [\"plex-4k\", \"plex-4k:2\"]\n"
        ),
    )
    .unwrap();
    let out = lab.hlctl(&["--config", config.to_str().unwrap(), "check", "--json"]);
    let text = common::output_text(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let below = v["below_need"].as_array().unwrap();
    assert_eq!(below.len(), 1, "{v}");
    let line = below[0].as_str().unwrap();
    assert!(
        line.starts_with("below the need: net ") && line.contains("plex-4k ×2 needs 200 Mbit/s"),
        "{line}"
    );
    let answers = v["check"]["workloads"].as_array().unwrap();
    // No directory in this check: the storage layer is "not measured",
    // and the workload's verdict says so rather than "carries".
    assert_eq!(answers[0]["verdict"], "not all layers measured", "{v}");
    assert_eq!(row(&answers[0], "net")["verdict"], "ok", "{v}");
    assert_eq!(row(&answers[0], "disk-read")["verdict"], "not measured");
    assert!(
        row(&answers[0], "net")["source"]
            .as_str()
            .unwrap()
            .starts_with("this check: upload to"),
        "{v}"
    );
    assert_eq!(answers[1]["limit"], "net");
}

/// A layer not measured now (no `--peer`) takes the history's newest
/// figure, said to be from the history with its age; once older than a
/// week it is flagged stale. The figure is a real `bench net` run on the
/// shaped path; its row is then aged by ten days in the database (the only
/// way to have an old figure without waiting), and the doctor flags it.
#[test]
fn a_figure_from_the_history_is_used_with_its_age_and_flagged_when_stale() {
    let _serial = serial();
    let lab = Lab::new();
    // Twice plex-4k's 100 Mbit/s: a 2 s run on a 120 Mbit/s path measured
    // 89 Mbit/s once beside the suite's VMs, and the verdict below is "ok".
    lab.shape_both("200mbit");
    let srv = lab.iperf3_server();
    let out = lab.hlctl(&[
        "bench",
        "net",
        "-c",
        common::lab::PEER_IP,
        "-p",
        &srv.port.to_string(),
        "-t",
        "2",
    ]);
    assert!(out.status.success(), "{}", common::output_text(&out));
    let doctor = || lab.json(&["doctor", &lab.a, "--stress", "0", "--workload", "plex-4k"]);
    let r = doctor();
    let net = row(answer(&r, "plex-4k"), "net").clone();
    let source = net["source"].as_str().unwrap();
    assert!(
        source.starts_with("from the history: net upload of 10.70.0.2:")
            && source.contains("(net, ")
            && !source.contains("stale"),
        "{net}"
    );
    let measured = net["measured"].as_f64().unwrap();
    assert!((100e6..=210e6).contains(&measured), "{net}");
    assert_eq!(net["verdict"], "ok", "{net}");

    let db = lab.state_dir().join("history.db");
    let aged = std::process::Command::new("/usr/bin/python3")
        .args([
            "-c",
            "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); \
             c.execute(\"UPDATE results SET ts = ts - 10*86400 WHERE kind = 'net'\"); c.commit()",
        ])
        .arg(&db)
        .output()
        .unwrap();
    assert!(aged.status.success(), "{}", common::output_text(&aged));
    let r = doctor();
    let net = row(answer(&r, "plex-4k"), "net").clone();
    let source = net["source"].as_str().unwrap();
    assert!(
        source.starts_with("from the history, stale: net upload of 10.70.0.2:")
            && source.contains(", 10 d 0 h old, older than 7 d 0 h"),
        "{net}"
    );
}
