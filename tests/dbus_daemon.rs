//! hlctld on a private system bus with the real polkitd, serving veth pairs in
//! a test network namespace; hlctl as its client (root and `nobody`).

mod common;

use std::process::Output;
use std::time::Duration;

use common::NetNs;
use common::bus::{Daemon, Rig};
use serde_json::Value;

const NOBODY: (u32, u32) = (65534, 65534);

/// A bus, polkitd, a namespace with a veth pair and hlctld serving it.
struct Lab {
    daemon: Option<Daemon>,
    ns: NetNs,
    rig: Rig,
    a: String,
    b: String,
    state: tempfile::TempDir,
}

impl Lab {
    fn new(extra: &[&str]) -> Lab {
        let rig = Rig::start();
        let ns = NetNs::new();
        let (a, b) = (common::unique("da"), common::unique("db"));
        ns.veth(&a, &b);
        let state = tempfile::tempdir().unwrap();
        let daemon = rig.daemon(&ns, state.path(), extra);
        Lab {
            daemon: Some(daemon),
            ns,
            rig,
            a,
            b,
            state,
        }
    }

    fn log(&self) -> String {
        self.daemon.as_ref().map(|d| d.log()).unwrap_or_default()
    }

    fn ok(&self, out: Output) -> Output {
        assert!(
            out.status.success(),
            "failed ({:?}): {}\n{}\ndaemon log:\n{}",
            out.status.code(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
            self.log()
        );
        out
    }

    fn json(&self, args: &[&str]) -> Value {
        let mut v = args.to_vec();
        v.push("--json");
        let out = self.ok(self.rig.hlctl(&v));
        serde_json::from_slice(&out.stdout).unwrap()
    }

    fn show(&self, iface: &str) -> Value {
        self.json(&["show", iface])["interfaces"][0].clone()
    }

    /// The same command in-process inside the namespace.
    fn local(&self, args: &[&str]) -> Output {
        let mut v = vec![common::bus::HLCTL, "--local"];
        v.extend_from_slice(args);
        self.ns.exec_raw(&v)
    }

    fn feature(&self, iface: &str, name: &str) -> bool {
        self.show(iface)["features"][name]["active"].as_bool().unwrap()
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        self.daemon = None;
    }
}

/// Drop counters (they move between two reads) to compare models.
fn settings(mut v: Value) -> Value {
    for i in v["interfaces"].as_array_mut().unwrap() {
        let o = i.as_object_mut().unwrap();
        o.remove("counters");
        o.remove("driver_stats");
        o.remove("carrier_changes");
    }
    v
}

#[test]
fn root_show_set_and_sysctl_through_the_daemon_match_in_process() {
    let lab = Lab::new(&[]);
    // show: same model through the daemon as in-process.
    let remote = lab.json(&["show"]);
    let out = lab.local(&["show", "--json"]);
    let local: Value = serde_json::from_slice(&lab.ok(out).stdout).unwrap();
    assert_eq!(settings(remote.clone()), settings(local));
    let names: Vec<&str> = remote["interfaces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&lab.a.as_str()) && names.contains(&lab.b.as_str()));
    assert!(!names.contains(&"lo"), "lo only when named: {names:?}");
    // Text output is the same too (minus counters, which move).
    let t_remote = lab.ok(lab.rig.hlctl(&["show", &lab.a])).stdout;
    let t_local = lab.ok(lab.local(&["show", &lab.a])).stdout;
    let strip = |b: &[u8]| -> Vec<String> {
        String::from_utf8_lossy(b)
            .lines()
            .filter(|l| !l.contains("packets") && !l.contains("bytes") && !l.contains("errors") && !l.contains("carrier"))
            .map(str::to_string)
            .collect()
    };
    assert_eq!(strip(&t_remote), strip(&t_local));

    // set: applied by the daemon, read back by the real ip.
    let before = lab.show(&lab.a)["mtu"].as_u64().unwrap();
    let target = if before == 1400 { 1300 } else { 1400 };
    let r = lab.json(&["set", &lab.a, "mtu", &target.to_string()]);
    let s = &r["settings"][0];
    assert_eq!(s["setting"], "mtu");
    assert_eq!(s["before"], before);
    assert_eq!(s["requested"], target);
    assert_eq!(s["after"], target);
    let ip = lab.ns.exec(&["ip", "-j", "link", "show", "dev", &lab.a]);
    let ip: Value = serde_json::from_slice(&ip.stdout).unwrap();
    assert_eq!(ip[0]["mtu"], target);
    assert_eq!(lab.show(&lab.a)["mtu"], target, "the cached model follows the change");
    // dry run changes nothing.
    let r = lab.json(&["set", &lab.a, "mtu", "1280", "--dry-run"]);
    assert_eq!(r["dry_run"], true);
    assert_eq!(lab.show(&lab.a)["mtu"], target);
    // Invalid input: exit 2, the engine's own message, nothing changed.
    let out = lab.rig.hlctl(&["set", &lab.a, "mtu", "70000"]);
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    let local = lab.local(&["set", &lab.a, "mtu", "70000"]);
    assert_eq!(local.status.code(), Some(2));
    assert_eq!(out.stderr, local.stderr, "same message through the daemon as in-process");
    let out = lab.rig.hlctl(&["show", "nosuch0"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nosuch0: no such interface"));

    // sysctl: the namespace's value changes, the host's does not.
    let host_before = std::fs::read_to_string("/proc/sys/net/ipv4/tcp_rmem").unwrap();
    let r = lab.json(&["sysctl", "net.ipv4.tcp_rmem=4096 65536 1048576"]);
    assert_eq!(r["changes"][0]["after"], "4096 65536 1048576", "{r}");
    let ns_now = lab.ns.exec(&["cat", "/proc/sys/net/ipv4/tcp_rmem"]);
    assert_eq!(
        String::from_utf8_lossy(&ns_now.stdout).split_whitespace().collect::<Vec<_>>(),
        ["4096", "65536", "1048576"]
    );
    assert_eq!(std::fs::read_to_string("/proc/sys/net/ipv4/tcp_rmem").unwrap(), host_before);
    let shown = lab.json(&["sysctl", "net.ipv4.tcp_rmem"]);
    assert_eq!(shown["sysctls"][0]["value"], "4096 65536 1048576");
    let all = lab.json(&["sysctl"]);
    assert!(all["sysctls"].as_array().unwrap().len() >= 15);
    // persisted through the daemon into its sysctl.d.
    lab.json(&["sysctl", "net.ipv4.tcp_sack=0", "--persist"]);
    let conf = std::fs::read_to_string(lab.state.path().join("sysctl.d/90-hlctl.conf")).unwrap();
    assert!(conf.contains("net.ipv4.tcp_sack = 0"), "{conf}");
    // Each change is logged with the caller's uid.
    let log = lab.log();
    assert!(log.contains("uid=0") && log.contains(&format!("{} mtu", lab.a)), "{log}");
    let _ = Duration::ZERO;
}
