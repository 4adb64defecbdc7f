//! `hlctl bench file ssh://...` against a real OpenSSH server (Debian's
//! sshd on 127.0.0.1, its own config and throwaway keys:
//! [`common::sshd`]), with Debian's OpenSSH client: the cipher named is the
//! one forced, the figures are the whole file over its time, raw TCP runs
//! against a real `iperf3 -s`, no file is left on either side (also after
//! Ctrl-C), and a refused key is a clear error, not a prompt. How close the
//! figures come to `ssh 'cat > f' < file` is benches/file_vs_peers.sh's to
//! say (speed is checked by benchmarks on a quiet machine, not by tests:
//! here the same ssh copy moved 2x between runs under other builds).

mod common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::fs::disk_tempdir;
use common::sshd::{Sshd, free_port};
use common::{ChildGuard, HLCTL, die_with_test};
use serde_json::Value;

const SIZE_MIB: u64 = 64;
/// hlctl/ssh-cat pairs compared.
/// One test at a time in this binary: the figures must not share the cores.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}
const CIPHER: &str = "aes128-gcm@openssh.com";

/// `hlctl --json bench file TARGET ...` with its own state directory.
fn hlctl_file(state: &Path, target: &str, extra: &[&str]) -> std::process::Output {
    Command::new(HLCTL)
        .env("HLCTL_STATE_DIR", state)
        .args(["--local", "--json", "bench", "file", target])
        .args(extra)
        .stdin(Stdio::null())
        .output()
        .expect("run hlctl")
}

fn json(o: &std::process::Output) -> Value {
    assert!(
        o.status.success(),
        "hlctl failed: {}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).expect("hlctl --json prints JSON")
}

/// The `ssh://` target of `dir` on the test's sshd on 127.0.0.1.
fn loopback_target(sshd: &Sshd, dir: &Path) -> String {
    format!("ssh://root@127.0.0.1:{}{}", sshd.port, dir.display())
}

/// `hlctl --json bench file` over SSH alone (no raw TCP, disk or crypto
/// figures) with the test's sshd config, `SIZE_MIB` and `extra`.
fn ssh_alone(state: &Path, sshd: &Sshd, target: &str, extra: &[&str]) -> Value {
    let cfg = sshd.config();
    let size = format!("{SIZE_MIB}M");
    let mut args = vec!["--ssh-config", cfg.to_str().unwrap(), "--size", &size];
    args.extend(["--no-net", "--no-disk", "--no-crypto"]);
    args.extend_from_slice(extra);
    json(&hlctl_file(state, target, &args))
}

fn names(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect()
}

/// No test file on either side.
fn nothing_left(remote: &Path, local: &Path) {
    assert_eq!(
        names(remote),
        Vec::<String>::new(),
        "a remote file was left"
    );
    assert_eq!(names(local), Vec::<String>::new(), "a local file was left");
}

/// A server slow to start the command (here a key whose `command=` sleeps
/// 1 s before it runs what was asked) does not count in the read's figure:
/// its clock starts at the first byte. 64 MiB over loopback take well
/// under the second the server waits; the whole run takes the waits (the
/// write's, the read's and the removal's).
#[test]
fn a_server_slow_to_start_cat_is_not_in_the_read_figure() {
    let _one = serial();
    let sshd = Sshd::start();
    let keys = sshd.dir.path().join("authorized_keys");
    let key = std::fs::read_to_string(&keys).unwrap();
    let slow = format!("command=\"sleep 1; exec sh -c \\\"$SSH_ORIGINAL_COMMAND\\\"\" {key}");
    std::fs::write(&keys, slow).unwrap();
    let remote = disk_tempdir();
    let state = tempfile::tempdir().unwrap();
    let target = loopback_target(&sshd, remote.path());
    let began = Instant::now();
    let r = ssh_alone(state.path(), &sshd, &target, &[]);
    let took = began.elapsed().as_secs_f64();
    assert!(took >= 3.0, "the server's waits did not happen: {took} s");
    let read = &r["file"]["read"];
    let seconds = read["seconds"].as_f64().unwrap();
    assert!(seconds < 1.0, "the server's 1 s start counted: {read}");
    assert_eq!(
        names(remote.path()),
        Vec::<String>::new(),
        "a remote file was left"
    );
}

#[test]
fn the_forced_cipher_is_named_the_figures_add_up_and_nothing_is_left() {
    let _one = serial();
    let sshd = Sshd::start();
    let remote = disk_tempdir();
    let state = tempfile::tempdir().unwrap();
    let target = loopback_target(&sshd, remote.path());
    let r = ssh_alone(state.path(), &sshd, &target, &["--cipher", CIPHER]);
    let f = &r["file"];
    assert_eq!(f["protocol"], "ssh");
    assert_eq!(
        f["place"],
        format!("root@127.0.0.1:{}:{}", sshd.port, remote.path().display())
    );
    assert_eq!(f["ssh"]["cipher_client_to_server"], CIPHER, "{f}");
    assert_eq!(f["ssh"]["cipher_server_to_client"], CIPHER, "{f}");
    assert_eq!(f["ssh"]["mac_client_to_server"], "<implicit>", "{f}");
    for d in ["write", "read"] {
        let t = &f[d];
        assert_eq!(t["bytes"].as_u64(), Some(SIZE_MIB << 20), "{t}");
        let want = t["bytes"].as_f64().unwrap() / t["seconds"].as_f64().unwrap();
        assert!(
            (t["bytes_per_second"].as_f64().unwrap() / want - 1.0).abs() < 1e-9,
            "{t}"
        );
        // ssh's own CPU, in cores: more than nothing, at most the machine.
        let cores = t["client_cores"].as_f64().unwrap();
        let cpus = std::thread::available_parallelism().unwrap().get() as f64;
        assert!(cores > 0.0 && cores <= cpus, "{t}");
    }
    assert_eq!(
        names(remote.path()),
        Vec::<String>::new(),
        "a remote file was left"
    );
    // The row in the history: kind file, the place, both directions' figures.
    let h = Command::new(HLCTL)
        .env("HLCTL_STATE_DIR", state.path())
        .args(["--local", "--json", "history", "--kind", "file"])
        .output()
        .unwrap();
    let rows: Value = serde_json::from_slice(&h.stdout).unwrap();
    assert_eq!(rows["results"].as_array().map(Vec::len), Some(1), "{rows}");
    let text = rows.to_string();
    assert!(
        text.contains("file ssh write") && text.contains("file ssh read"),
        "{text}"
    );
}

#[test]
fn beside_the_transfer_raw_tcp_and_the_local_disk_run_and_a_verdict_is_said() {
    let _one = serial();
    let sshd = Sshd::start();
    let remote = disk_tempdir();
    let local = disk_tempdir();
    let state = tempfile::tempdir().unwrap();
    let port = free_port();
    let _iperf3 = ChildGuard(
        die_with_test(Command::new("iperf3").args([
            "-s",
            "-B",
            "127.0.0.1",
            "-p",
            &port.to_string(),
        ]))
        .stdout(Stdio::null())
        .spawn()
        .expect("iperf3 (scripts/setup.sh installs it)"),
    );
    common::net::wait_listening(port, Duration::from_secs(10));
    let target = loopback_target(&sshd, remote.path());
    let peer = format!("127.0.0.1:{port}");
    let o = hlctl_file(
        state.path(),
        &target,
        &[
            "--ssh-config",
            sshd.config().to_str().unwrap(),
            "--size",
            "32M",
            "--net-peer",
            &peer,
            "--net-time",
            "1",
            "--local-dir",
            local.path().to_str().unwrap(),
        ],
    );
    let r = json(&o);
    let net = &r["network"]["measured"];
    assert!(net["upload_bps"].as_f64().unwrap() > 1e8, "{r}");
    assert!(net["download_bps"].as_f64().unwrap() > 1e8, "{r}");
    let disk = &r["disk"]["measured"];
    assert!(disk["read_bytes_per_second"].as_f64().unwrap() > 0.0, "{r}");
    assert_eq!(r["crypto"].as_array().map(Vec::len), Some(5), "{r}");
    // The default cipher of Debian's OpenSSH 9.2 both ways.
    assert_eq!(
        r["file"]["ssh"]["cipher_client_to_server"],
        "chacha20-poly1305@openssh.com"
    );
    let verdicts = r["verdicts"].as_array().unwrap();
    assert_eq!(verdicts.len(), 2);
    for (v, dir) in verdicts.iter().zip(["write", "read"]) {
        let s = v["sentence"].as_str().unwrap();
        assert!(s.starts_with(&format!("SSH {dir} ")), "{s}");
        assert!(v["limit"].is_string(), "{v}");
    }
    nothing_left(remote.path(), local.path());
    // The text table names both directions and the layers beside.
    let text = Command::new(HLCTL)
        .env("HLCTL_STATE_DIR", state.path())
        .args(["--local", "bench", "file", &target, "--ssh-config"])
        .arg(sshd.config())
        .args([
            "--size",
            "8M",
            "--no-disk",
            "--no-crypto",
            "--net-peer",
            &peer,
            "--net-time",
            "1",
        ])
        .output()
        .unwrap();
    let t = String::from_utf8_lossy(&text.stdout);
    assert!(text.status.success(), "{t}");
    for want in [
        "protocol   direction",
        "ssh        write",
        "ssh        read",
        "raw TCP    write",
        "SSH write ",
    ] {
        assert!(t.contains(want), "{want:?} missing from:\n{t}");
    }
}

#[test]
fn a_refused_key_is_a_clear_error_and_nothing_is_left() {
    let _one = serial();
    let sshd = Sshd::start();
    let remote = disk_tempdir();
    let state = tempfile::tempdir().unwrap();
    let target = loopback_target(&sshd, remote.path());
    let start = Instant::now();
    let o = hlctl_file(
        state.path(),
        &target,
        &[
            "--ssh-config",
            sshd.stranger_config().to_str().unwrap(),
            "--size",
            "1M",
            "--no-net",
            "--no-disk",
            "--no-crypto",
        ],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "not permitted: {err}");
    assert!(err.contains("never asks a password"), "{err}");
    assert!(err.contains("Permission denied (publickey)"), "{err}");
    assert!(
        start.elapsed() < Duration::from_secs(30),
        "took {:?}",
        start.elapsed()
    );
    assert_eq!(names(remote.path()), Vec::<String>::new());
}

#[test]
fn ctrl_c_mid_write_removes_the_remote_file() {
    let _one = serial();
    let sshd = Sshd::start();
    let remote = disk_tempdir();
    let state = tempfile::tempdir().unwrap();
    let target = loopback_target(&sshd, remote.path());
    let child = Command::new(HLCTL)
        .env("HLCTL_STATE_DIR", state.path())
        .args([
            "--local",
            "--json",
            "bench",
            "file",
            &target,
            "--ssh-config",
        ])
        .arg(sshd.config())
        .args(["--size", "16G", "--no-net", "--no-disk", "--no-crypto"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut guard = ChildGuard(child);
    let start = Instant::now();
    while names(remote.path()).is_empty() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the write never started"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(300));
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(guard.pid() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let status = guard.0.wait().unwrap();
    assert!(!status.success(), "a cancelled run fails");
    assert_eq!(
        names(remote.path()),
        Vec::<String>::new(),
        "the remote file was left"
    );
}

/// `[check] files`: a check with an SSH place (through `ssh_config`) and a
/// local directory, and nothing else to measure, writes and reads each,
/// stores the figures in its row (compared like any other), publishes them
/// in hlctl.prom, and leaves no file; a second check with a target whose
/// server refuses the key says so and fails (exit 1), the other target
/// still measured.
#[test]
fn a_check_measures_its_file_targets_stores_and_publishes_them() {
    let _one = serial();
    let sshd = Sshd::start();
    let remote = disk_tempdir();
    let local = disk_tempdir();
    let state = tempfile::tempdir().unwrap();
    let prom = tempfile::tempdir().unwrap();
    let target = loopback_target(&sshd, remote.path());
    let write_config = |ssh_config: &Path| {
        let conf = state.path().join("hlctl.toml");
        std::fs::write(
            &conf,
            format!(
                "[check]\nfiles = [\"{target}\", \"{}\"]\nfile_size_mib = 8\nssh_config = \"{}\"\ncpu = false\n\n[metrics]\ntextfile_dir = \"{}\"\n",
                local.path().display(),
                ssh_config.display(),
                prom.path().display()
            ),
        )
        .unwrap();
        conf
    };
    let check = |conf: &Path| {
        Command::new(HLCTL)
            .env("HLCTL_STATE_DIR", state.path())
            .args([
                "--local",
                "--json",
                "--config",
                conf.to_str().unwrap(),
                "check",
            ])
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    let o = check(&write_config(&sshd.config()));
    let r = json(&o);
    let files = r["check"]["files"]
        .as_array()
        .unwrap_or_else(|| panic!("{r}"));
    assert_eq!(files.len(), 2, "{r}");
    let place = format!("root@127.0.0.1:{}:{}", sshd.port, remote.path().display());
    assert_eq!(files[0]["target"], target.as_str());
    assert_eq!(
        (&files[0]["file"]["protocol"], &files[0]["file"]["place"]),
        (&Value::from("ssh"), &Value::from(place.as_str()))
    );
    let local_protocol = files[1]["file"]["protocol"].as_str().unwrap().to_string();
    for f in files {
        for d in ["write", "read"] {
            assert_eq!(f["file"][d]["bytes"].as_u64(), Some(8 << 20), "{f}");
        }
    }
    nothing_left(remote.path(), local.path());
    // The check's row holds the four figures; hlctl.prom publishes them.
    let h = Command::new(HLCTL)
        .env("HLCTL_STATE_DIR", state.path())
        .args(["--local", "--json", "history", "--kind", "check"])
        .output()
        .unwrap();
    let rows: Value = serde_json::from_slice(&h.stdout).unwrap();
    let metrics = rows["results"][0]["metrics"]
        .as_array()
        .unwrap_or_else(|| panic!("{rows}"));
    for (name, subject) in [
        ("file ssh write", place.as_str()),
        ("file ssh read", place.as_str()),
        (
            &format!("file {local_protocol} read"),
            local.path().to_str().unwrap(),
        ),
    ] {
        assert!(
            metrics
                .iter()
                .any(|m| m["name"] == name && m["subject"] == subject),
            "{name} {subject} not in {metrics:?}"
        );
    }
    let text = std::fs::read_to_string(prom.path().join("hlctl.prom")).unwrap();
    let ssh_read = format!(
        "hlctl_file_transfer_bytes_per_second{{place=\"{place}\",protocol=\"ssh\",direction=\"read\"}} "
    );
    let published: f64 = text
        .lines()
        .find_map(|l| l.strip_prefix(&ssh_read))
        .unwrap_or_else(|| panic!("no {ssh_read}in\n{text}"))
        .parse()
        .unwrap();
    assert_eq!(
        Some(published),
        files[0]["file"]["read"]["bytes_per_second"].as_f64()
    );

    // A key the server refuses: that target fails with the reason, the
    // directory is still measured, the check fails.
    let stranger = sshd.stranger_config();
    let o = check(&write_config(&stranger));
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    let files = r["check"]["files"].as_array().unwrap();
    assert!(
        files[0]["file"].is_null() && files[0]["error"].is_string(),
        "{r}"
    );
    assert!(
        files[1]["file"]["read"]["bytes_per_second"]
            .as_f64()
            .unwrap()
            > 0.0,
        "{r}"
    );
    let failures = r["failures"].as_array().unwrap();
    assert!(
        failures.iter().any(|f| f
            .as_str()
            .unwrap()
            .starts_with(&format!("file over {target}: "))),
        "{failures:?}"
    );
}

/// A `tc`-shaped path (20 Mbit/s each way on the lab's veth pair; a real
/// sshd and a real `iperf3 -s` in the peer namespace): raw TCP to the same
/// host and the SSH transfer both follow the shaping, and the verdict names
/// the network in both directions, with raw TCP's figure as its evidence.
#[test]
fn a_shaped_path_makes_the_network_the_named_limit() {
    use common::lab::{Lab, PEER_IP};
    let _one = serial();
    let lab = Lab::new();
    let sshd = Sshd::start_on(Some(&lab.peer), PEER_IP, &[22]);
    let srv = lab.iperf3_server();
    // 20 Mbit/s: 8 MiB take over 3 s each way, so SSH's start (its TCP's
    // slow start, the session's first window) is a small share of its
    // figure; at 60 Mbit/s a loaded machine had the read at 80 % of raw TCP.
    lab.shape_both("20mbit");
    let remote = disk_tempdir();
    let target = format!("ssh://root@{PEER_IP}:22{}", remote.path().display());
    let cfg = sshd.config();
    let peer = lab.peer_arg(&srv);
    let r = lab.json(&[
        "bench",
        "file",
        &target,
        "--ssh-config",
        cfg.to_str().unwrap(),
        "--size",
        "8M",
        "--net-peer",
        &peer,
        "--net-time",
        "2",
        "--no-disk",
        "--no-crypto",
    ]);
    let net = &r["network"]["measured"];
    for k in ["upload_bps", "download_bps"] {
        let bps = net[k].as_f64().unwrap_or_else(|| panic!("{k}: {r}"));
        assert!(
            (5e6..=21.5e6).contains(&bps),
            "raw TCP {k} {bps} at 20 Mbit/s: {r}"
        );
    }
    for d in ["write", "read"] {
        let bits = r["file"][d]["bytes_per_second"].as_f64().unwrap() * 8.0;
        assert!(
            bits <= 21.5e6,
            "SSH {d} {bits} bit/s above the shaping: {r}"
        );
    }
    let verdicts = r["verdicts"].as_array().unwrap();
    assert_eq!(verdicts.len(), 2, "{r}");
    for v in verdicts {
        eprintln!("{}", v["sentence"]);
        assert_eq!(v["limit"], "network", "{v}");
        assert!(
            v["sentence"]
                .as_str()
                .unwrap()
                .contains("the network holds it (raw TCP to the same host carries"),
            "{v}"
        );
    }
    assert_eq!(
        names(remote.path()),
        Vec::<String>::new(),
        "a remote file was left"
    );
}
