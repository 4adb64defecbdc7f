//! The static build (`scripts/build-static.sh`): no `NEEDED` entry, and the
//! binary works inside an empty root — a directory holding only it, `/proc`,
//! `/sys` and `/dev` bind mounts and an `/etc/hosts` — so nothing of this
//! machine's libraries (not even glibc's NSS modules) is used. Peers are
//! given by host name from that `/etc/hosts`.
//!
//! Each run is `ip netns exec NS unshare --mount --propagation private sh -c
//! 'mount --rbind ...; exec chroot ROOT /hlctl ...'`: the bind mounts live in
//! a mount namespace of their own that ends with the process, so nothing is
//! left mounted even when the test fails or is killed.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use common::lab::{Lab, PEER_IP};
use common::net::Proc;
use common::{NetNs, static_bin};
use serde_json::Value;

/// The empty root: the binary, mount points, `/etc/hosts`, a state directory.
struct EmptyRoot {
    dir: tempfile::TempDir,
}

impl EmptyRoot {
    fn new(bin: &Path, hosts: &str) -> EmptyRoot {
        let dir = tempfile::tempdir().unwrap();
        for d in ["proc", "sys", "dev", "etc", "state", "tmp"] {
            std::fs::create_dir(dir.path().join(d)).unwrap();
        }
        std::fs::copy(bin, dir.path().join("hlctl")).unwrap();
        std::fs::write(dir.path().join("etc/hosts"), hosts).unwrap();
        EmptyRoot { dir }
    }

    fn path(&self) -> PathBuf {
        self.dir.path().to_path_buf()
    }

    /// `/hlctl --state-dir /state ARGS` chrooted here, inside `ns`.
    fn command(&self, ns: &NetNs, args: &[&str]) -> Command {
        let script = "set -e; for d in proc sys dev; do mount --rbind /$d \"$0/$d\"; done; \
                      exec chroot \"$0\" /hlctl --state-dir /state \"$@\"";
        let mut c = Command::new("ip");
        c.args([
            "netns",
            "exec",
            &ns.name,
            "unshare",
            "--mount",
            "--propagation",
            "private",
        ])
        .args(["sh", "-c", script])
        .arg(self.path())
        .args(args);
        common::die_with_test(&mut c);
        c
    }

    fn run(&self, ns: &NetNs, args: &[&str]) -> Output {
        self.command(ns, args)
            .output()
            .expect("run hlctl in the empty root")
    }

    fn json(&self, ns: &NetNs, args: &[&str]) -> Value {
        let o = self.run(ns, args);
        assert!(
            o.status.success(),
            "hlctl {args:?}: {}",
            common::output_text(&o)
        );
        serde_json::from_slice(&o.stdout)
            .unwrap_or_else(|e| panic!("hlctl {args:?}: {e}: {}", common::output_text(&o)))
    }
}

/// Nothing of the root may stay mounted once the command ended.
fn assert_nothing_mounted(root: &Path) {
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    let r = root.display().to_string();
    assert!(!mounts.contains(&r), "still mounted under {r}:\n{mounts}");
}

#[test]
fn the_static_binary_needs_no_library() {
    let bin = static_bin::hlctl();
    let out = Command::new("readelf")
        .arg("-d")
        .arg(&bin)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "readelf: {}",
        common::output_text(&out)
    );
    assert!(!text.contains("(NEEDED)"), "{text}");
    let file = Command::new("readelf")
        .arg("-h")
        .arg(&bin)
        .output()
        .unwrap();
    // static-pie: a position-independent executable (DYN) with no interpreter.
    assert!(String::from_utf8_lossy(&file.stdout).contains("DYN"));
    let l = Command::new("readelf")
        .arg("-l")
        .arg(&bin)
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&l.stdout).contains("INTERP"));
    eprintln!(
        "{}: {} bytes\n{text}",
        bin.display(),
        std::fs::metadata(&bin).unwrap().len()
    );
}

#[test]
fn show_bench_and_doctor_run_in_an_empty_root_and_resolve_peers_from_its_hosts() {
    common::require_root("chroot, mounts and namespaces");
    let bin = static_bin::hlctl();
    let lab = Lab::new();
    let hosts = format!("127.0.0.1 localhost\n{PEER_IP} nasbox.lan nasbox\n");
    let (client, server) = (EmptyRoot::new(&bin, &hosts), EmptyRoot::new(&bin, &hosts));

    let s = client.json(&lab.here, &["show", &lab.a, "--json"])["interfaces"][0].clone();
    assert_eq!(s["name"], lab.a.as_str());
    assert_eq!(
        s["driver"], "veth",
        "ioctl reads work in the empty root: {s}"
    );
    assert!(
        s["features"].as_object().is_some_and(|f| !f.is_empty()),
        "{s}"
    );

    let port = common::net::free_port().to_string();
    let serve = Proc::spawn(&mut server.command(&lab.peer, &["serve", "--port", &port]));
    let peer = format!("nasbox:{port}");
    let (status, out, err) = common::net::until_listening("hlctl serve in the empty root", || {
        client.command(
            &lab.here,
            &["--json", "bench", "net", "--peer", &peer, "-t", "1"],
        )
    });
    assert!(
        status.is_some_and(|s| s.success()),
        "bench net: {out}\n{err}"
    );
    let j: Value = serde_json::from_str(&out).unwrap();
    // iperf3's layout; hlctl's own report is under "hlctl".
    let b = &j["hlctl"];
    // Only the peer namespace (PEER_IP) has a server: "nasbox" resolved there.
    assert_eq!(b["peer"], peer.as_str(), "{j}");
    assert_eq!(j["start"]["connecting_to"]["host"], "nasbox", "{j}");
    let sent = b["sent_bytes"].as_u64().unwrap_or(0);
    assert!(sent > 0, "{b}");
    eprintln!("bench net in the empty root, peer by name: {sent} bytes in 1 s");

    let d = client.json(
        &lab.here,
        &[
            "doctor", &lab.a, "--peer", &peer, "--stress", "0", "--time", "1", "--json",
        ],
    );
    assert!(d["findings"].is_array(), "{d}");
    // It reached nasbox by name: the handshake, path MTU and throughput measured.
    let t = d.to_string();
    assert!(
        t.contains("tcp handshake to nasbox") && t.contains(r#""throughput":{"Ok""#),
        "doctor measured towards nasbox: {t}"
    );

    // A name in neither /etc/hosts nor (absent) resolv.conf: named, no NSS crash.
    let o = client.run(
        &lab.here,
        &["bench", "net", "--peer", "nowhere.invalid", "-t", "1"],
    );
    assert!(!o.status.success());
    assert!(
        common::output_text(&o).contains("nowhere.invalid"),
        "{}",
        common::output_text(&o)
    );

    drop(serve);
    std::thread::sleep(Duration::from_millis(200));
    assert_nothing_mounted(&client.path());
    assert_nothing_mounted(&server.path());
}
