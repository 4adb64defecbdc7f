//! Benchmarks as Job objects through hlctld: progress and result, Ctrl-C,
//! cancellation when the caller leaves the bus (and clean-up), detached jobs,
//! and a benchmark on a link blocking changes to it.

mod common;

use std::collections::HashMap;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::ChildGuard;
use common::bus::{BUS_NAME, HLCTL};
use serde_json::Value;

use common::bus::DaemonLab as Lab;

impl Lab {
    /// A stream of the job signals (`Finished`, `PropertiesChanged`) on the test connection.
    fn job_signals(&self) -> zbus::MessageStream {
        self.rig.rt.block_on(async {
            let rule = zbus::MatchRule::builder()
                .msg_type(zbus::message::Type::Signal)
                .path_namespace("/org/hlctl/Daemon1/job")
                .build()
                .unwrap();
            zbus::MessageStream::for_match_rule(rule, &self.rig.conn, None)
                .await
                .unwrap()
        })
    }

    /// The `HeldBy` values announced on `path` within `within`.
    fn held_by_announced(
        &self,
        signals: &mut zbus::MessageStream,
        path: &str,
        within: Duration,
    ) -> Vec<String> {
        let mut out = Vec::new();
        self.rig.rt.block_on(async {
            let end = tokio::time::Instant::now() + within;
            while let Ok(Some(Ok(m))) =
                tokio::time::timeout_at(end, hlctl::dbus::wire::next(signals)).await
            {
                if m.header().path().map(|p| p.as_str()) != Some(path) {
                    continue;
                }
                let (_, changed, _): (String, HashMap<String, zbus::OwnedVariant>, Vec<String>) =
                    m.body().deserialize().unwrap();
                if let Some(v) = changed.get("HeldBy") {
                    out.push(String::try_from(v.try_clone().unwrap()).unwrap());
                }
            }
        });
        out
    }

    fn job_prop(&self, path: &str, prop: &str) -> zbus::OwnedVariant {
        self.rig.property(path, "org.hlctl.Daemon1.Job", prop)
    }

    fn job_state(&self, path: &str) -> String {
        String::try_from(self.job_prop(path, "State")).unwrap()
    }

    fn start_benchmark(
        &self,
        kind: &str,
        params: &str,
        link: Option<&str>,
    ) -> Result<String, String> {
        self.rig.rt.block_on(async {
            let mut o: HashMap<&str, zbus::Variant<'_>> = HashMap::new();
            if let Some(l) = link {
                o.insert("link", zbus::Variant::from(l));
            }
            match self
                .rig
                .conn
                .call_method(
                    Some(BUS_NAME),
                    "/org/hlctl/Daemon1",
                    Some("org.hlctl.Daemon1.Manager"),
                    "StartBenchmark",
                    &(kind, common::bus::bench_params(params), o),
                )
                .await
            {
                Ok(r) => Ok(r
                    .body()
                    .deserialize::<zbus::OwnedObjectPath>()
                    .unwrap()
                    .to_string()),
                Err(e) => Err(e.to_string()),
            }
        })
    }
}

/// Signals seen: (path, member, body summary) until `stop` says so or the timeout.
enum Seen {
    Progress(f64),
    Finished(String, String, String),
}

fn next_seen(lab: &Lab, stream: &mut zbus::MessageStream, timeout: Duration) -> Option<Seen> {
    lab.rig.rt.block_on(async {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let m = tokio::time::timeout_at(deadline, hlctl::dbus::wire::next(stream))
                .await
                .ok()??
                .ok()?;
            let h = m.header();
            let path = h.path()?.to_string();
            match h.member()?.as_str() {
                "Finished" => {
                    let (state, result): (String, String) = m.body().deserialize().ok()?;
                    return Some(Seen::Finished(path, state, result));
                }
                "PropertiesChanged" => {
                    let (_, changed, _): (
                        String,
                        HashMap<String, zbus::OwnedVariant>,
                        Vec<String>,
                    ) = m.body().deserialize().ok()?;
                    if let Some(v) = changed.get("Progress") {
                        return Some(Seen::Progress(f64::try_from(&**v).ok()?));
                    }
                }
                _ => {}
            }
        }
    })
}

/// Wait for the `Finished` of `path` (or of any job when `path` is None).
fn wait_finished(
    lab: &Lab,
    stream: &mut zbus::MessageStream,
    path: Option<&str>,
) -> (String, String, String) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match next_seen(lab, stream, left) {
            Some(Seen::Finished(p, s, r)) if path.is_none_or(|x| x == p) => return (p, s, r),
            Some(_) => continue,
            None => panic!("no Finished signal\n{}", lab.daemon.log()),
        }
    }
}

#[test]
fn root_benchmark_job_shows_progress_and_its_result() {
    let lab = Lab::new(&[]);
    let mut signals = lab.job_signals();
    let out = lab
        .rig
        .hlctl(&["bench", "cpu", "--time", "1.5", "--threads", "1", "--json"]);
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stderr),
        lab.daemon.log()
    );
    assert!(!String::from_utf8_lossy(&out.stderr).contains("in-process"));
    let printed: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(printed["threads"], 1);
    assert!(printed["events"].as_u64().unwrap() > 0);
    assert_eq!(printed["cancelled"], false);
    // What went over the bus: progress between 0 and 1, then the result.
    let mut progress = Vec::new();
    let (path, state, result) = loop {
        match next_seen(&lab, &mut signals, Duration::from_secs(10)).expect("job signals") {
            Seen::Progress(f) => progress.push(f),
            Seen::Finished(p, s, r) => break (p, s, r),
        }
    };
    assert_eq!(state, "succeeded");
    assert!(
        progress.iter().filter(|f| **f > 0.0 && **f < 1.0).count() >= 2,
        "{progress:?}"
    );
    assert!(
        progress.windows(2).all(|w| w[0] <= w[1]),
        "progress goes forward: {progress:?}"
    );
    let result: Value = serde_json::from_str(&result).unwrap();
    assert_eq!(
        result["events"], printed["events"],
        "hlctl printed the job's result"
    );
    // The finished job lingers with its properties.
    assert_eq!(lab.job_state(&path), "succeeded");
    assert_eq!(
        String::try_from(lab.job_prop(&path, "Kind")).unwrap(),
        "benchmark:cpu"
    );
    assert_eq!(f64::try_from(lab.job_prop(&path, "Progress")).unwrap(), 1.0);
    // Its interface is the published one.
    let xml = lab.rig.rt.block_on(async {
        let r = lab
            .rig
            .conn
            .call_method(
                Some(BUS_NAME),
                path.as_str(),
                Some("org.freedesktop.DBus.Introspectable"),
                "Introspect",
                &(),
            )
            .await
            .unwrap();
        r.body().deserialize::<String>().unwrap()
    });
    let live: Vec<(String, String)> = job_interface(&xml);
    let file = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/dbus/org.hlctl.Daemon1.xml"
    ))
    .unwrap();
    assert_eq!(live, job_interface(&file));
    assert!(
        lab.daemon.log().contains("job 1 started"),
        "{}",
        lab.daemon.log()
    );
}

fn job_interface(xml: &str) -> Vec<(String, String)> {
    let mut text = String::new();
    let mut rest = xml;
    while let Some(i) = rest.find("<!--") {
        text.push_str(&rest[..i]);
        rest = rest[i..].find("-->").map_or("", |j| &rest[i + j + 3..]);
    }
    text.push_str(rest);
    let text = text
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace("> <", "><");
    let start = text
        .find("<interface name=\"org.hlctl.Daemon1.Job\">")
        .expect("Job interface");
    let end = text[start..].find("</interface>").unwrap() + start;
    vec![("org.hlctl.Daemon1.Job".into(), text[start..end].to_string())]
}

#[test]
fn a_benchmark_on_a_link_blocks_changes_to_it() {
    let lab = Lab::new(&[]);
    let mut signals = lab.job_signals();
    let mut link_signals = lab.properties_changed("/org/hlctl/Daemon1/link");
    let link_path = lab.link_path(&lab.a);
    let path = lab
        .start_benchmark(
            "cpu",
            r#"{"time_s": 2, "threads": 1, "no_single": true}"#,
            Some(&lab.a),
        )
        .unwrap();
    let out = lab.rig.hlctl(&["set", &lab.a, "mtu", "1400"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("busy with a cpu benchmark"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Reads are not blocked, and say who holds the link.
    let show = lab.rig.hlctl(&["show", &lab.a]);
    assert!(show.status.success());
    let (_, state, _) = wait_finished(&lab, &mut signals, Some(&path));
    assert_eq!(state, "succeeded");
    // HeldBy was announced when the job took the link and when it let go.
    let held = lab.held_by_announced(&mut link_signals, &link_path, Duration::from_secs(1));
    assert!(
        held.first().is_some_and(|h| h.contains("cpu benchmark"))
            && held.last() == Some(&String::new()),
        "HeldBy announced: {held:?}"
    );
    let out = lab.rig.hlctl(&["set", &lab.a, "mtu", "1400"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let ip = lab.ns.exec(&["ip", "-j", "link", "show", "dev", &lab.a]);
    assert_eq!(
        serde_json::from_slice::<Value>(&ip.stdout).unwrap()[0]["mtu"],
        1400
    );
    // An unknown link for the benchmark: NoSuchInterface, nothing started.
    let e = lab
        .start_benchmark("cpu", "{}", Some("nosuch0"))
        .unwrap_err();
    assert!(e.contains("NoSuchInterface"), "{e}");
}

fn bench_files(dir: &std::path::Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".hlctl-bench"))
        .collect()
}

#[test]
fn a_job_is_cancelled_when_its_caller_leaves_and_its_files_are_removed() {
    let lab = Lab::new(&[]);
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let mut signals = lab.job_signals();
    let params = format!(
        r#"{{"dir":"{}","rw":"randwrite","size":67108864,"runtime_s":60,"time_based":true,"direct":false}}"#,
        dir.path().display()
    );
    // A root client starts a disk benchmark, stays on the bus 2 s, then leaves.
    let call = format!("bench disk {params} stay=2000");
    let rig = &lab.rig;
    let files_seen = std::thread::scope(|s| {
        let h = s.spawn(|| rig.call_as(0, 0, "helper", &call));
        let deadline = Instant::now() + Duration::from_secs(2);
        let mut seen = Vec::new();
        while Instant::now() < deadline && seen.is_empty() {
            seen = bench_files(dir.path());
            std::thread::sleep(Duration::from_millis(20));
        }
        let r = h.join().unwrap();
        assert!(r.is_ok(), "{r:?}");
        seen
    });
    assert!(
        !files_seen.is_empty(),
        "the benchmark never created its files:\n{}",
        lab.daemon.log()
    );
    let (path, state, _) = wait_finished(&lab, &mut signals, None);
    assert_eq!(state, "cancelled", "{}", lab.daemon.log());
    assert_eq!(lab.job_state(&path), "cancelled");
    assert!(
        bench_files(dir.path()).is_empty(),
        "files left behind: {:?}",
        bench_files(dir.path())
    );
    assert!(
        lab.daemon.log().contains("left the bus"),
        "{}",
        lab.daemon.log()
    );
}

/// `hlctl bench cpu --time 60` through the lab's hlctld (a job that runs
/// until something stops it), with `extra` arguments; stderr piped.
fn long_cpu_bench(lab: &Lab, extra: &[&str], stdout: Stdio) -> ChildGuard {
    let mut args = vec![
        "--bus",
        &lab.rig.address,
        "bench",
        "cpu",
        "--time",
        "60",
        "--threads",
        "1",
    ];
    args.extend_from_slice(extra);
    let child = Command::new(HLCTL)
        .args(&args)
        .env_remove("HLCTL_LOCAL")
        .stdout(stdout)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    ChildGuard(child)
}

#[test]
fn ctrl_c_on_the_client_cancels_the_job() {
    let lab = Lab::new(&[]);
    let mut signals = lab.job_signals();
    let guard = long_cpu_bench(&lab, &["--json"], Stdio::piped());
    // Wait until the job reports progress, then Ctrl-C the client.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match next_seen(
            &lab,
            &mut signals,
            deadline.saturating_duration_since(Instant::now()),
        ) {
            Some(Seen::Progress(f)) if f > 0.0 => break,
            Some(Seen::Finished(..)) => panic!("finished before Ctrl-C"),
            None => panic!("no progress:\n{}", lab.daemon.log()),
            _ => {}
        }
    }
    let t = Instant::now();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(guard.pid() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let (path, state, _) = wait_finished(&lab, &mut signals, None);
    assert_eq!(state, "cancelled");
    assert!(
        t.elapsed() < Duration::from_secs(5),
        "cancelling took {:?}",
        t.elapsed()
    );
    let mut guard = guard;
    let status = guard.0.wait().unwrap();
    let mut stdout = String::new();
    std::io::Read::read_to_string(guard.0.stdout.as_mut().unwrap(), &mut stdout).unwrap();
    assert_eq!(
        status.code(),
        Some(1),
        "a cancelled benchmark exits 1 (partial result)"
    );
    let v: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["cancelled"], true);
    assert_eq!(lab.job_state(&path), "cancelled");
}

#[test]
fn a_detached_job_outlives_its_caller() {
    let lab = Lab::new(&[]);
    let mut signals = lab.job_signals();
    let r = lab.rig.call_as(
        0,
        0,
        "helper",
        r#"bench cpu {"time_s":30,"threads":1,"no_single":true} detached"#,
    );
    let path = r.unwrap();
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(
        lab.job_state(&path),
        "running",
        "the caller left, the detached job runs on"
    );
    assert!(bool::try_from(lab.job_prop(&path, "Detached")).unwrap());
    // Root (authorized) cancels it.
    lab.rig.rt.block_on(async {
        lab.rig
            .conn
            .call_method(
                Some(BUS_NAME),
                path.as_str(),
                Some("org.hlctl.Daemon1.Job"),
                "Cancel",
                &(),
            )
            .await
            .unwrap();
    });
    let (_, state, result) = wait_finished(&lab, &mut signals, Some(&path));
    assert_eq!(state, "cancelled");
    assert_eq!(
        serde_json::from_str::<Value>(&result).unwrap()["cancelled"],
        true
    );
}

/// Run by `Rig::call_as` as another user; ignored in a normal run.
#[test]
#[ignore = "not a test: the D-Bus caller that Rig::call_as runs as another user"]
fn helper() {
    common::bus::helper_main();
}

#[test]
fn disk_and_stress_benchmarks_run_in_the_daemon_too() {
    let lab = Lab::new(&[]);
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let d = dir.path().to_str().unwrap();
    let out = lab.rig.hlctl(&[
        "bench",
        "disk",
        "--dir",
        d,
        "--rw",
        "randwrite",
        "--size",
        "16M",
        "--runtime",
        "1",
        "--buffered",
        "--json",
    ]);
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stderr),
        lab.daemon.log()
    );
    assert!(!String::from_utf8_lossy(&out.stderr).contains("in-process"));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["rw"], "randwrite");
    assert!(v["iops"].as_f64().unwrap() > 0.0, "{v}");
    assert!(bench_files(dir.path()).is_empty(), "files left behind");
    // A bad directory is invalid input (exit 2), as in-process.
    let out = lab.rig.hlctl(&[
        "bench",
        "disk",
        "--dir",
        "/nonexistent/hlctl",
        "--size",
        "1M",
        "--runtime",
        "1",
    ]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The error is its own line (progress lines may come before it).
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .lines()
            .any(|l| l.starts_with("hlctl bench disk: ")),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = lab.rig.hlctl(&[
        "bench", "stress", "--time", "1", "--cpu", "1", "--vm", "0", "--json",
    ]);
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stderr),
        lab.daemon.log()
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["cpu_workers"], 1);
    assert!(v["verdict"].is_string(), "{v}");
    let log = lab.daemon.log();
    assert!(
        log.contains("kind=benchmark:disk") && log.contains("kind=benchmark:stress"),
        "{log}"
    );
}

#[test]
fn a_network_benchmark_runs_in_the_daemon_against_hlctl_serve() {
    let lab = Lab::new(&[]);
    // The daemon lives in the test namespace: the server listens on that
    // namespace's own loopback (a private port space, so 5201 is free).
    let server = ChildGuard(
        Command::new("ip")
            .args([
                "netns",
                "exec",
                &lab.ns.name,
                HLCTL,
                // Its own measurement lock, not the machine's /var/lib/hlctl.
                "--state-dir",
                lab.state.path().to_str().unwrap(),
                "serve",
                "--bind",
                "127.0.0.1",
                "--port",
                "5201",
                "--one-off",
                "--idle-timeout",
                "60",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    while !String::from_utf8_lossy(&lab.ns.exec(&["ss", "-Htln", "sport = :5201"]).stdout)
        .contains("5201")
    {
        assert!(
            Instant::now() < deadline,
            "hlctl serve did not start listening"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = lab.rig.hlctl(&[
        "bench",
        "net",
        "--peer",
        "127.0.0.1:5201",
        "-t",
        "1",
        "--json",
    ]);
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stderr),
        lab.daemon.log()
    );
    assert!(!String::from_utf8_lossy(&out.stderr).contains("in-process"));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        doc["start"]["test_start"]["protocol"], "TCP",
        "iperf3's layout"
    );
    let v = &doc["hlctl"];
    assert_eq!(v["protocol"], "tcp");
    assert_eq!(v["side"], "client");
    let (sent, received) = (
        v["sent_bytes"].as_u64().unwrap(),
        v["received_bytes"].as_u64().unwrap(),
    );
    assert!(sent > 0 && sent == received, "{v}");
    assert!(!v["intervals"].as_array().unwrap().is_empty(), "{v}");
    assert!(
        lab.daemon.log().contains("kind=benchmark:net"),
        "{}",
        lab.daemon.log()
    );
    // Nothing listens on the peer: a clear failure (exit 1), no hang.
    drop(server);
    let out = lab
        .rig
        .hlctl(&["bench", "net", "--peer", "127.0.0.1:5202", "-t", "1"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("refused"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_client_stops_with_a_clear_error_when_hlctld_dies_mid_benchmark() {
    let mut lab = Lab::new(&[]);
    let mut signals = lab.job_signals();
    let mut client = long_cpu_bench(&lab, &[], Stdio::null());
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match next_seen(
            &lab,
            &mut signals,
            deadline.saturating_duration_since(Instant::now()),
        ) {
            Some(Seen::Progress(f)) if f > 0.0 => break,
            Some(Seen::Finished(..)) => panic!("finished before hlctld was killed"),
            None => panic!("no progress:\n{}", lab.daemon.log()),
            _ => {}
        }
    }
    // Our own hlctld, by its pid, as a crash would.
    lab.daemon.kill9();
    let killed = Instant::now();
    // The benchmark had 60 s to go: a client still waiting after 15 s did not notice.
    let status = loop {
        if let Some(s) = client.0.try_wait().unwrap() {
            break s;
        }
        assert!(
            killed.elapsed() < Duration::from_secs(15),
            "the client still waits {:?} after hlctld died",
            killed.elapsed()
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(client.0.stderr.as_mut().unwrap(), &mut stderr).unwrap();
    assert!(!status.success(), "exit {status:?}, stderr: {stderr}");
    assert_eq!(
        status.code(),
        Some(4),
        "hlctld gone: exit 4; stderr: {stderr}"
    );
    assert!(
        stderr.contains("hlctld stopped while the benchmark ran"),
        "stderr: {stderr}"
    );
}
