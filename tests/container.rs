//! The OCI image (scripts/build-image.sh) run by Debian's podman, rootful,
//! with `--network ns:/run/netns/<test namespace>` so it stays inside the
//! test's namespaces: `serve` detached is the peer of the host's `hlctl
//! bench net` and of a real `iperf3 -c`; `set` inside the container fixes an
//! offload planted off on the namespace's veth (read back with `ethtool -k`
//! in the namespace); history persists across container runs on a
//! bind-mounted directory; without `--cap-add NET_ADMIN` the change is
//! refused naming the capability, and nothing changed. Every container has
//! a unique name and is removed (`podman rm -f`) when its guard drops.
//!
//! Docker: this machine has the docker client but no engine, so `docker
//! load`/`docker run` are not run here (docs/nas.md).

mod common;

use std::process::{Command, Output};
use std::time::Duration;

use common::lab::{Lab, PEER_IP};
use common::{NetNs, static_bin};
use serde_json::Value;

/// A container by name, removed when dropped.
struct Container(String);

impl Drop for Container {
    fn drop(&mut self) {
        let _ = Command::new("podman")
            .args(["rm", "-f", "-t", "1", &self.0])
            .output();
    }
}

fn podman(args: &[&str]) -> Output {
    Command::new("podman")
        .args(args)
        .output()
        .expect("run podman")
}

/// `podman run --rm --network ns:NS [extra] IMAGE ARGS`, unchecked.
fn run_in(ns: &NetNs, extra: &[&str], args: &[&str]) -> Output {
    let (_, tag) = static_bin::image();
    let name = common::unique("hlc");
    let _guard = Container(name.clone());
    let netns = format!("ns:/run/netns/{}", ns.name);
    let mut v = vec!["run", "--rm", "--name", &name, "--network", &netns];
    v.extend_from_slice(extra);
    v.push(&tag);
    v.extend_from_slice(args);
    podman(&v)
}

fn podman_available() -> bool {
    if common::skip_unless_root("rootful podman, namespaces") {
        return false;
    }
    let ok = Command::new("podman")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(ok, "podman missing: run scripts/setup.sh");
    true
}

/// Whether podman's OCI runtime can start a container on this machine. Not
/// here (itself a container): crun cannot raise RLIMIT_NOFILE/NPROC to
/// podman's defaults and refuses cgroups in hybrid mode; the tests that run
/// containers say so and stop.
fn runtime_works() -> bool {
    let (_, tag) = static_bin::image();
    let o = podman(&["run", "--rm", "--network", "none", &tag, "--version"]);
    if !o.status.success() && String::from_utf8_lossy(&o.stderr).contains("OCI") {
        eprintln!(
            "skipped: podman cannot start containers here: {}",
            common::output_text(&o)
        );
        return false;
    }
    assert!(o.status.success(), "{}", common::output_text(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains(env!("CARGO_PKG_VERSION")));
    true
}

fn gro_on(ns: &NetNs, iface: &str) -> bool {
    let out = ns.exec(&["ethtool", "-k", iface]);
    String::from_utf8_lossy(&out.stdout).contains("generic-receive-offload: on")
}

#[test]
fn the_archive_loads_and_is_small() {
    if !podman_available() {
        return;
    }
    let (archive, tag) = static_bin::image();
    let size = std::fs::metadata(&archive).unwrap().len();
    eprintln!("{}: {size} bytes", archive.display());
    assert!(size < 10 << 20, "image archive {size} bytes, over 10 MiB");
    let load = podman(&["load", "-q", "-i", archive.to_str().unwrap()]);
    assert!(load.status.success(), "{}", common::output_text(&load));
    let inspect = podman(&["image", "inspect", &tag]);
    let v: Value = serde_json::from_slice(&inspect.stdout).unwrap();
    let cfg = &v[0]["Config"];
    assert_eq!(cfg["Entrypoint"][0], "/usr/bin/hlctl", "{cfg}");
    assert_eq!(
        cfg["Labels"]["org.opencontainers.image.title"], "hlctl",
        "{cfg}"
    );
    assert_eq!(
        v[0]["RootFS"]["Layers"].as_array().map(Vec::len),
        Some(1),
        "scratch + one layer"
    );
}

#[test]
fn serve_in_a_container_is_the_peer_of_hlctl_and_iperf3() {
    if !podman_available() || !runtime_works() {
        return;
    }
    let (_, tag) = static_bin::image();
    let lab = Lab::new();
    let port = common::net::free_port().to_string();
    let name = common::unique("hls");
    let guard = Container(name.clone());
    let netns = format!("ns:/run/netns/{}", lab.peer.name);
    let d = podman(&[
        "run",
        "-d",
        "--name",
        &name,
        "--network",
        &netns,
        &tag,
        "serve",
        "--port",
        &port,
    ]);
    assert!(d.status.success(), "{}", common::output_text(&d));
    let peer = format!("{PEER_IP}:{port}");
    let (status, out, err) = common::net::until_listening("hlctl serve in a container", || {
        let v = common::lab::hlctl_argv(
            lab.dir.path(),
            &["--json", "bench", "net", "--peer", &peer, "-t", "1"],
        );
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &lab.here.name]).args(&v);
        c
    });
    assert!(
        status.is_some_and(|s| s.success()),
        "hlctl bench net: {out}\n{err}"
    );
    let iperf = lab
        .here
        .exec_raw(&["iperf3", "-c", PEER_IP, "-p", &port, "-t", "1", "--json"]);
    let r: Value = serde_json::from_slice(&iperf.stdout).unwrap_or_default();
    let bps = r["end"]["sum_received"]["bits_per_second"]
        .as_f64()
        .unwrap_or(0.0);
    assert!(
        bps > 1e6,
        "iperf3 -c against the container: {}",
        common::output_text(&iperf)
    );
    let logs = podman(&["logs", &name]);
    assert!(
        podman(&["container", "exists", &name]).status.success(),
        "serve still running: {}",
        common::output_text(&logs)
    );
    drop(guard);
    std::thread::sleep(Duration::from_millis(100));
    assert!(
        !podman(&["container", "exists", &name]).status.success(),
        "removed"
    );
}

#[test]
fn set_in_a_container_needs_net_admin_and_history_stays_on_the_volume() {
    if !podman_available() || !runtime_works() {
        return;
    }
    let lab = Lab::new();
    let vol = tempfile::tempdir().unwrap();
    let mount = format!("{}:/var/lib/hlctl", vol.path().display());
    lab.here.exec(&["ethtool", "-K", &lab.a, "gro", "off"]);
    assert!(!gro_on(&lab.here, &lab.a));

    let refused = run_in(
        &lab.here,
        &["-v", &mount],
        &["set", &lab.a, "feature", "gro", "on"],
    );
    let text = common::output_text(&refused);
    assert_eq!(refused.status.code(), Some(3), "{text}");
    assert!(
        text.contains("needs CAP_NET_ADMIN: add --cap-add NET_ADMIN"),
        "{text}"
    );
    assert!(!gro_on(&lab.here, &lab.a), "nothing changed");

    let done = run_in(
        &lab.here,
        &["--cap-add", "NET_ADMIN", "-v", &mount],
        &["set", &lab.a, "feature", "gro", "on", "--json"],
    );
    assert!(done.status.success(), "{}", common::output_text(&done));
    assert!(
        gro_on(&lab.here, &lab.a),
        "ethtool -k in the namespace: gro on"
    );

    // Two runs on the same volume: the second sees the first's row.
    let bench = run_in(&lab.here, &["-v", &mount], &["bench", "cpu", "--time", "1"]);
    assert!(bench.status.success(), "{}", common::output_text(&bench));
    assert!(
        vol.path().join("history.db").exists(),
        "history on the volume"
    );
    let h = run_in(&lab.here, &["-v", &mount], &["history", "--json"]);
    let v: Value = serde_json::from_slice(&h.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", common::output_text(&h)));
    assert!(
        v["results"].as_array().is_some_and(|r| !r.is_empty()),
        "{v}"
    );
}
