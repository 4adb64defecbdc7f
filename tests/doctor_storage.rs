//! The storage playbook on this machine's own filesystems (it has no NFS or
//! SMB client: the network-filesystem half runs in the VM, vm_stacks_nfs.rs):
//! `hlctl doctor --dir` on a disk directory and on a tmpfs measures write
//! (with fdatasync) and read in each, removes its files, names no limiting
//! layer without a network filesystem, and refuses a bad --dir cleanly.

mod common;

use std::process::Command;

use common::fs::{Mount, disk_tempdir, files_with_prefix};
use serde_json::Value;

const HLCTL: &str = env!("CARGO_BIN_EXE_hlctl");

fn doctor(dirs: &[&str]) -> (Value, String) {
    let mut args = vec!["--json", "doctor", "--stress", "0", "--disk-size", "8"];
    for d in dirs {
        args.extend(["--dir", d]);
    }
    // A state directory of its own: the doctor's report goes into its
    // history, not the host's.
    let state = tempfile::tempdir().unwrap();
    let out = Command::new(HLCTL)
        .arg("--state-dir")
        .arg(state.path())
        .args(&args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        state.path().join("history.db").exists(),
        "the doctor's report was not stored in its state directory"
    );
    (
        serde_json::from_slice(&out.stdout).unwrap(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn local_directories_are_measured_and_compared_with_nothing_to_blame() {
    let disk = disk_tempdir();
    let ram = Mount::tmpfs("128m");
    let d = disk.path().to_str().unwrap();
    let r = ram.path.to_str().unwrap();
    let (rep, _) = doctor(&[d, r]);
    let storage = rep["storage"].as_array().unwrap();
    assert_eq!(storage.len(), 2, "{rep}");
    for (s, dir) in storage.iter().zip([d, r]) {
        assert_eq!(s["dir"], dir);
        let m = &s["measured"]["Ok"];
        assert_eq!(m["bytes"], 8 << 20, "{s}");
        for k in ["write_mb_s", "read_mb_s"] {
            assert!(m[k].as_f64().unwrap() > 0.0, "{k}: {s}");
        }
        assert!(m["fdatasync_s"].as_f64().is_some(), "{s}");
    }
    assert_eq!(storage[1]["measured"]["Ok"]["memory_backed"], true);
    assert_eq!(storage[0]["measured"]["Ok"]["memory_backed"], false);
    // No network filesystem: nothing to blame.
    let ids: Vec<&str> = rep["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap())
        .collect();
    assert!(!ids.contains(&"storage-layer"), "{ids:?}");
    let passed: Vec<&str> = rep["passed"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["check"] == "storage")
        .map(|c| c["detail"].as_str().unwrap())
        .collect();
    assert_eq!(passed.len(), 2, "{passed:?}");
    assert!(
        passed[1].contains("(tmpfs)") && passed[1].contains("with fdatasync"),
        "{passed:?}"
    );
    // The test files are gone.
    for dir in [disk.path(), ram.path.as_path()] {
        assert!(files_with_prefix(dir, ".hlctl-bench").is_empty());
    }
}

#[test]
fn a_missing_dir_is_named_and_not_measured() {
    let (rep, _) = doctor(&["/nonexistent/hlctl-storage"]);
    let s = &rep["storage"][0];
    let err = s["measured"]["Err"]
        .as_str()
        .unwrap_or_else(|| panic!("{s}"));
    assert!(err.contains("/nonexistent/hlctl-storage"), "{err}");
    let skipped: Vec<&str> = rep["not_checked"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["detail"].as_str().unwrap())
        .collect();
    assert!(
        skipped
            .iter()
            .any(|d| d.contains("/nonexistent/hlctl-storage")),
        "{skipped:?}"
    );
}

/// `--prometheus`: a URL hlctl cannot speak is refused (exit 2) naming the
/// flag and what is allowed; with local directories only, the fleet is
/// asked nothing (a listener on 127.0.0.1 that this test holds gets no
/// connection).
#[test]
fn the_fleets_prometheus_is_checked_and_local_directories_ask_it_nothing() {
    let state = tempfile::tempdir().unwrap();
    let run = |url: &str, dir: &str| {
        Command::new(HLCTL)
            .arg("--state-dir")
            .arg(state.path())
            .args(["--json", "doctor", "--stress", "0", "--disk-size", "8"])
            .args(["--dir", dir, "--prometheus", url])
            .output()
            .unwrap()
    };
    let dir = disk_tempdir();
    let d = dir.path().to_str().unwrap();
    let o = run("https://prom.lab", d);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--prometheus \"https://prom.lab\"") && err.contains("allowed: http://HOST"),
        "{err}"
    );
    assert!(
        !state.path().join("history.db").exists(),
        "a refused doctor stored a report"
    );
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let o = run(&url, d);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(r.to_string().contains(d), "{r}");
    let asked = listener.accept();
    assert!(
        matches!(&asked, Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
        "the doctor asked Prometheus about a local directory: {asked:?}"
    );
}
