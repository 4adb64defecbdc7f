//! An ordinary user with no hlctld on the bus (issue 30): what `ip`,
//! `ethtool` and `iperf3` do unprivileged, hlctl does too, in its own
//! process — show, bench net against a server on a port ≥ 1024, bench cpu,
//! the doctor's read-only checks, a history of their own — and a change says
//! what it needs and changes nothing.

mod common;

use std::os::unix::fs::chown;
use std::process::{Command, Output};

use common::net::Proc;
use common::{HLCTL, NetNs, output_text};

const NOBODY: u32 = 65534;

/// A namespace with a veth pair and a state directory owned by nobody.
struct Box {
    ns: NetNs,
    state: tempfile::TempDir,
    no_bus: tempfile::TempDir,
}

impl Box {
    fn new() -> Box {
        common::require_root("namespaces and running as nobody");
        let ns = NetNs::new();
        ns.veth("uva", "uvb");
        let state = tempfile::tempdir().unwrap();
        chown(state.path(), Some(NOBODY), Some(NOBODY)).unwrap();
        Box {
            ns,
            state,
            no_bus: tempfile::tempdir().unwrap(),
        }
    }

    /// `hlctl ARGS` as nobody inside the namespace, with a system bus
    /// address where nothing listens.
    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.ns.name, "setpriv"])
            .args([format!("--reuid={NOBODY}"), format!("--regid={NOBODY}")])
            .args(["--clear-groups", HLCTL])
            .args(args)
            .env_remove("HLCTL_LOCAL")
            .env("HOME", "/nonexistent")
            .env("XDG_STATE_HOME", self.state.path())
            .env(
                "DBUS_SYSTEM_BUS_ADDRESS",
                format!("unix:path={}/none", self.no_bus.path().display()),
            );
        c
    }

    fn hlctl(&self, args: &[&str]) -> Output {
        self.cmd(args).output().expect("run hlctl as nobody")
    }

    fn mtu(&self, link: &str) -> u64 {
        let out = self.ns.ip(&["-j", "link", "show", link]);
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v[0]["mtu"].as_u64().unwrap()
    }
}

fn json(out: &Output) -> serde_json::Value {
    assert!(out.status.success(), "{}", output_text(out));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", output_text(out)))
}

/// The largest bit rate anywhere in a report (hlctl's `*_bps` keys or
/// iperf3's `bits_per_second`).
fn max_rate(v: &serde_json::Value) -> f64 {
    match v {
        serde_json::Value::Object(m) => m
            .iter()
            .map(|(k, x)| match x.as_f64() {
                Some(f) if k.ends_with("bps") || k == "bits_per_second" => f,
                _ => max_rate(x),
            })
            .fold(0.0, f64::max),
        serde_json::Value::Array(a) => a.iter().map(max_rate).fold(0.0, f64::max),
        _ => 0.0,
    }
}

#[test]
fn show_reads_every_link_and_says_once_that_it_runs_in_process() {
    let b = Box::new();
    let out = b.hlctl(&["show", "--json"]);
    let v = json(&out);
    let names = common::interface_names(&v);
    assert!(
        names.contains(&"uva") && names.contains(&"uvb"),
        "{names:?}"
    );
    let uva = v["interfaces"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["name"] == "uva")
        .unwrap();
    assert_eq!(uva["mtu"].as_u64(), Some(b.mtu("uva")));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.matches("not reachable").count(), 1, "{err}");
    assert!(err.contains("uid 65534"), "{err}");
}

#[test]
fn bench_net_against_a_server_on_a_high_port_and_its_own_history() {
    let b = Box::new();
    let server = Proc::spawn(&mut b.cmd(&["serve", "-B", "127.0.0.1", "-p", "5377", "-1"]));
    std::thread::sleep(std::time::Duration::from_millis(500));
    let out = b.hlctl(&[
        "bench",
        "net",
        "-c",
        "127.0.0.1",
        "-p",
        "5377",
        "-t",
        "1",
        "--json",
    ]);
    let v = json(&out);
    assert!(max_rate(&v) > 1e6, "no rate above 1 Mbit/s in {v}");
    let (status, _, err) = server.finish(std::time::Duration::from_secs(10));
    assert!(
        status.is_some_and(|s| s.success()),
        "hlctl serve as nobody: {err}"
    );

    let out = b.hlctl(&["bench", "cpu", "--time", "1", "--json"]);
    let cpu = json(&out);
    assert!(cpu.to_string().contains("events"), "{cpu}");

    // Both runs are in nobody's own history, under XDG_STATE_HOME.
    let db = b.state.path().join("hlctl/history.db");
    assert!(db.exists(), "no {}", db.display());
    let out = b.hlctl(&["history", "--json"]);
    let h = json(&out);
    let rows = h["results"].as_array().unwrap_or_else(|| panic!("{h}"));
    let kinds: Vec<&str> = rows.iter().map(|e| e["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["cpu", "net"], "{h}");
    assert!(rows.iter().all(|r| r["uid"] == NOBODY), "{h}");
}

#[test]
fn doctor_runs_its_read_only_checks() {
    let b = Box::new();
    let out = b.hlctl(&["doctor", "uva", "--stress", "0", "--json"]);
    let v = json(&out);
    assert!(v["findings"].is_array(), "{v}");
    assert!(v.to_string().contains("uva"), "{v}");
}

#[test]
fn a_change_says_what_it_needs_and_changes_nothing() {
    let b = Box::new();
    let before = b.mtu("uva");
    let out = b.hlctl(&["set", "uva", "mtu", "1400"]);
    assert_eq!(out.status.code(), Some(4), "{}", output_text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("hlctld is not reachable"), "{err}");
    assert!(err.contains("as root"), "{err}");
    assert_eq!(b.mtu("uva"), before);
}
