//! hlctld on a private system bus with the real polkitd, serving veth pairs in
//! a test network namespace; hlctl as its client (root and `nobody`).

mod common;

use std::collections::HashMap;
use std::process::Output;
use std::time::Duration;

use common::NetNs;
use common::bus::Rig;
use serde_json::Value;

const NOBODY: (u32, u32) = (65534, 65534);

/// A bus, polkitd, a namespace with a veth pair and hlctld serving it.
use common::bus::DaemonLab as Lab;

impl Lab {
    /// The same command in-process inside the namespace.
    fn local(&self, args: &[&str]) -> Output {
        let mut v = vec![common::bus::HLCTL, "--local"];
        v.extend_from_slice(args);
        self.ns.exec_raw(&v)
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
    // RPS on a's rx-0 in the namespace's sysfs, so that the queue layout
    // both models carry holds a value set here.
    let rps = format!("/sys/class/net/{}/queues/rx-0/rps_cpus", lab.a);
    lab.ns.exec(&["sh", "-c", &format!("echo 1 > {rps}")]);
    let rps_back = String::from_utf8_lossy(&lab.ns.exec(&["cat", &rps]).stdout)
        .trim()
        .to_string();
    // show: same model through the daemon as in-process.
    let remote = lab.json(&["show"]);
    let out = lab.local(&["show", "--json"]);
    let local: Value = serde_json::from_slice(&lab.ok(out).stdout).unwrap();
    assert_eq!(settings(remote.clone()), settings(local));
    let a = remote["interfaces"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["name"] == lab.a.as_str())
        .unwrap();
    assert_eq!(
        a["queues"]["rx"][0]["rps_cpus"],
        rps_back.as_str(),
        "Link.Describe carries the queue layout: {}",
        a["queues"]
    );
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
            .filter(|l| {
                !l.contains("packets")
                    && !l.contains("bytes")
                    && !l.contains("errors")
                    && !l.contains("carrier")
            })
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
    assert_eq!(
        r["summary"],
        serde_json::json!({"changed": 1, "statuses": {"changed": 1}}),
        "{r}"
    );
    // The same request again changes nothing; both paths say so alike.
    let again = ["set", lab.a.as_str(), "mtu", &target.to_string()];
    let t_remote = lab.ok(lab.rig.hlctl(&again)).stdout;
    let t_local = lab.ok(lab.local(&again)).stdout;
    assert_eq!(t_remote, t_local);
    let t = String::from_utf8_lossy(&t_remote);
    assert_eq!(
        t.lines().next(),
        Some(format!("{}: nothing changed (1 unchanged)", lab.a).as_str()),
        "{t}"
    );
    let ip = lab.ns.exec(&["ip", "-j", "link", "show", "dev", &lab.a]);
    let ip: Value = serde_json::from_slice(&ip.stdout).unwrap();
    assert_eq!(ip[0]["mtu"], target);
    assert_eq!(
        lab.show(&lab.a)["mtu"],
        target,
        "the cached model follows the change"
    );
    // dry run changes nothing.
    let r = lab.json(&["set", &lab.a, "mtu", "1280", "--dry-run"]);
    assert_eq!(r["dry_run"], true);
    assert_eq!(
        r["summary"],
        serde_json::json!({"changed": 1, "statuses": {"planned": 1}}),
        "{r}"
    );
    assert_eq!(lab.show(&lab.a)["mtu"], target);
    // Invalid input: exit 2, the engine's own message, nothing changed.
    let out = lab.rig.hlctl(&["set", &lab.a, "mtu", "70000"]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let local = lab.local(&["set", &lab.a, "mtu", "70000"]);
    assert_eq!(local.status.code(), Some(2));
    assert_eq!(
        out.stderr, local.stderr,
        "same message through the daemon as in-process"
    );
    let out = lab.rig.hlctl(&["show", "nosuch0"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nosuch0: no such interface"));

    // sysctl: the namespace's value changes, the host's does not.
    let host_before = std::fs::read_to_string("/proc/sys/net/ipv4/tcp_rmem").unwrap();
    let r = lab.json(&["sysctl", "net.ipv4.tcp_rmem=4096 65536 1048576"]);
    assert_eq!(r["changes"][0]["after"], "4096 65536 1048576", "{r}");
    let ns_now = lab.ns.exec(&["cat", "/proc/sys/net/ipv4/tcp_rmem"]);
    assert_eq!(
        String::from_utf8_lossy(&ns_now.stdout)
            .split_whitespace()
            .collect::<Vec<_>>(),
        ["4096", "65536", "1048576"]
    );
    assert_eq!(
        std::fs::read_to_string("/proc/sys/net/ipv4/tcp_rmem").unwrap(),
        host_before
    );
    let shown = lab.json(&["sysctl", "net.ipv4.tcp_rmem"]);
    assert_eq!(shown["sysctls"][0]["value"], "4096 65536 1048576");
    let all = lab.json(&["sysctl"]);
    assert!(all["sysctls"].as_array().unwrap().len() >= 15);
    // persisted through the daemon into its sysctl.d.
    lab.json(&["sysctl", "net.ipv4.tcp_sack=0", "--persist"]);
    let conf = std::fs::read_to_string(lab.state.path().join("sysctl.d/90-hlctl.conf")).unwrap();
    assert!(conf.contains("net.ipv4.tcp_sack = 0"), "{conf}");
    // DBUS_SYSTEM_BUS_ADDRESS is honoured when --bus is not given.
    let out = std::process::Command::new(common::bus::HLCTL)
        .args(["show", &lab.a, "--json"])
        .env("DBUS_SYSTEM_BUS_ADDRESS", &lab.rig.address)
        .env_remove("HLCTL_LOCAL")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stderr.is_empty(),
        "answered by the daemon: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    // No daemon on that bus: root says so and runs in-process.
    let out = lab.ns.exec_raw(&[
        common::bus::HLCTL,
        "--bus",
        "unix:path=/nonexistent/bus",
        "show",
        &lab.a,
        "--json",
    ]);
    assert!(out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("running in-process as root"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["interfaces"][0]["name"], lab.a.as_str());
    // Each change is logged with the caller's uid.
    let log = lab.log();
    assert!(
        log.contains("uid=0") && log.contains(&format!("{} mtu", lab.a)),
        "{log}"
    );
}

/// Twenty `sysctl --persist` calls for different keys at once through the
/// daemon (a work thread each): every key lands in 90-hlctl.conf, because the
/// read-merge-write holds the file's lock and every writer has a temp file of
/// its own. Per-interface keys of the test namespace's veths.
#[test]
fn twenty_concurrent_persists_of_different_keys_all_land() {
    let lab = Lab::new(&[]);
    const KEYS: [&str; 10] = [
        "accept_redirects",
        "send_redirects",
        "log_martians",
        "accept_source_route",
        "proxy_arp",
        "secure_redirects",
        "shared_media",
        "bootp_relay",
        "arp_filter",
        "arp_notify",
    ];
    let mut want = Vec::new();
    for iface in [&lab.a, &lab.b] {
        for k in KEYS {
            let key = format!("net.ipv4.conf.{iface}.{k}");
            let flipped = if lab.sysctl_in_ns(&key) == "0" {
                "1"
            } else {
                "0"
            };
            want.push((key, flipped.to_string()));
        }
    }
    let children: Vec<_> = want
        .iter()
        .map(|(k, v)| {
            std::process::Command::new(common::bus::HLCTL)
                .args(["--bus", &lab.rig.address, "sysctl"])
                .arg(format!("{k}={v}"))
                .args(["--persist", "--json"])
                .env_remove("HLCTL_LOCAL")
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        let r: Value =
            serde_json::from_slice(&lab.ok(c.wait_with_output().unwrap()).stdout).unwrap();
        assert!(r["persisted"].is_string(), "not persisted: {r}");
        assert!(r.get("persist_error").is_none(), "{r}");
    }
    let dir = lab.state.path().join("sysctl.d");
    let conf = std::fs::read_to_string(dir.join("90-hlctl.conf")).unwrap();
    for (k, v) in &want {
        assert!(
            conf.lines().any(|l| l == format!("{k} = {v}")),
            "{k} = {v} lost:\n{conf}"
        );
        assert_eq!(&lab.sysctl_in_ns(k), v, "{k} in the namespace");
    }
    let mut left: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(
        left,
        [".90-hlctl.conf.lock", "90-hlctl.conf"],
        "temp files left"
    );
}

/// Run by `Rig::call_as` as another user; ignored in a normal run.
#[test]
#[ignore = "not a test: the D-Bus caller that Rig::call_as runs as another user"]
fn helper() {
    common::bus::helper_main();
}

#[test]
fn unprivileged_caller_reads_everything_and_changes_nothing() {
    let lab = Lab::new(&[]);
    let (uid, gid) = NOBODY;
    // show works and shows the same as root.
    let out = lab.ok(lab.rig.hlctl_as(uid, gid, &["show", &lab.a, "--json"]));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["interfaces"][0]["name"], lab.a.as_str());
    assert_eq!(v["interfaces"][0]["mtu"], lab.show(&lab.a)["mtu"]);
    let out = lab.ok(lab.rig.hlctl_as(uid, gid, &["sysctl", "--json"]));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["sysctls"].as_array().unwrap().len() >= 15);
    // Properties are readable by anyone.
    let path = lab.link_path(&lab.a);
    let mtu_before = lab.show(&lab.a)["mtu"].as_u64().unwrap();
    let out = lab.ok(lab.rig.busctl_as(
        uid,
        gid,
        &[
            "get-property",
            "org.hlctl.Daemon1",
            &path,
            "org.hlctl.Daemon1.Link",
            "Mtu",
        ],
    ));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        format!("u {mtu_before}")
    );
    let got = lab
        .rig
        .call_as(uid, gid, "helper", &format!("describe {path}"))
        .unwrap();
    assert!(got.contains(&lab.a), "{got}");

    let sack = lab.sysctl_in_ns("net.ipv4.tcp_sack");
    let other = if sack == "1" { "0" } else { "1" };
    let new_mtu = (mtu_before - 100).to_string();
    let refused = |call: &str| match lab.rig.call_as(uid, gid, "helper", call) {
        Err((name, msg)) => {
            // polkit would ask for an administrator's password
            // (auth_admin_keep) and the call did not allow interaction.
            assert_eq!(
                name, "org.freedesktop.DBus.Error.InteractiveAuthorizationRequired",
                "{call}: {msg}"
            );
            assert!(msg.contains("authentication is required"), "{msg}");
        }
        Ok(r) => panic!("{call} was allowed for nobody: {r}"),
    };
    refused(&format!("apply {path} mtu {new_mtu}"));
    refused(&format!("apply {path} mtu {new_mtu} persist"));
    refused(&format!("set_sysctl net.ipv4.tcp_sack {other}"));
    refused(&format!("set_sysctl net.ipv4.tcp_sack {other} persist"));
    refused("tune");
    refused("bench cpu {}");
    // Through hlctl: exit 3, and the daemon's message.
    let out = lab
        .rig
        .hlctl_as(uid, gid, &["set", &lab.a, "mtu", &new_mtu]);
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("org.hlctl.Daemon1.apply-settings"), "{err}");
    // hlctl allows interactive authorization: with no polkit agent to ask,
    // the answer is a plain refusal, not a request to authenticate.
    assert!(err.contains("not authorized"), "{err}");
    // busctl without interaction gets the standard error name.
    let out = lab.rig.busctl_as(
        uid,
        gid,
        &[
            "--allow-interactive-authorization=no",
            "call",
            "org.hlctl.Daemon1",
            &path,
            "org.hlctl.Daemon1.Link",
            "ApplyChanges",
            "a{sv}a{sv}",
            "1",
            "mtu",
            "u",
            &new_mtu,
            "0",
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("authentication is required"),
        "{err}"
    );
    let out = lab.rig.hlctl_as(
        uid,
        gid,
        &["sysctl", &format!("net.ipv4.tcp_sack={other}"), "--persist"],
    );
    assert_eq!(out.status.code(), Some(3));
    // A dry run is a read: allowed.
    lab.ok(lab
        .rig
        .hlctl_as(uid, gid, &["set", &lab.a, "mtu", &new_mtu, "--dry-run"]));
    // Re-reading proves nothing changed: kernel, cached model, files.
    let ip = lab.ns.exec(&["ip", "-j", "link", "show", "dev", &lab.a]);
    let ip: Value = serde_json::from_slice(&ip.stdout).unwrap();
    assert_eq!(ip[0]["mtu"], mtu_before);
    assert_eq!(lab.show(&lab.a)["mtu"], mtu_before);
    assert_eq!(lab.sysctl_in_ns("net.ipv4.tcp_sack"), sack);
    assert!(!lab.state.path().join("state/nic-settings.json").exists());
    assert!(!lab.state.path().join("sysctl.d/90-hlctl.conf").exists());
    // Each refusal is logged with the caller's uid.
    let log = lab.log();
    let refusals: Vec<&str> = log.lines().filter(|l| l.contains("refused")).collect();
    assert!(refusals.len() >= 6, "{log}");
    assert!(refusals.iter().all(|l| l.contains("uid=65534")), "{log}");
    for action in ["apply-settings", "set-sysctl", "tune", "run-benchmark"] {
        assert!(
            refusals.iter().any(|l| l.contains(action)),
            "{action} refusal not logged:\n{log}"
        );
    }
}

/// Wait for a PropertiesChanged on the stream's link whose property `prop`
/// satisfies `want`; the value (as busctl's JSON would show it).
fn wait_changed(
    lab: &Lab,
    stream: &mut zbus::MessageStream,
    prop: &str,
    want: impl Fn(&zbus::OwnedVariant) -> bool,
) -> zbus::OwnedVariant {
    lab.rig.rt.block_on(async {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        loop {
            let msg = tokio::time::timeout_at(deadline, hlctl::dbus::wire::next(stream))
                .await
                .unwrap_or_else(|_| panic!("no PropertiesChanged of {prop} within 10 s"))
                .expect("stream ended")
                .expect("bad message");
            let body = msg.body();
            let Ok((_iface, changed, _inv)) =
                body.deserialize::<(String, HashMap<String, zbus::OwnedVariant>, Vec<String>)>()
            else {
                continue;
            };
            if let Some(v) = changed.get(prop)
                && want(v)
            {
                return v.try_clone().unwrap();
            }
        }
    })
}

#[test]
fn changes_behind_our_back_arrive_as_properties_changed() {
    let lab = Lab::new(&[]);
    let path = lab.link_path(&lab.a);
    let mut stream = lab.properties_changed(&path);
    // The real ethtool, not us: the ethtool netlink monitor group tells the daemon.
    let gro = lab.show(&lab.a)["features"]["rx-gro"]["active"]
        .as_bool()
        .unwrap();
    let want = if gro { "off" } else { "on" };
    lab.ns.exec(&["ethtool", "-K", &lab.a, "gro", want]);
    let gro_of = |v: &zbus::OwnedVariant| {
        let f: HashMap<String, (bool, bool, bool)> = v.try_clone().unwrap().try_into().unwrap();
        f["rx-gro"].0
    };
    let f = wait_changed(&lab, &mut stream, "Features", |v| gro_of(v) != gro);
    assert_eq!(gro_of(&f), !gro);
    // And the real ip (rtnetlink link group): MTU.
    lab.ns
        .exec(&["ip", "link", "set", "dev", &lab.a, "mtu", "1234"]);
    let m = wait_changed(&lab, &mut stream, "Mtu", |v| {
        u32::try_from(v.try_clone().unwrap()) == Ok(1234)
    });
    assert_eq!(u32::try_from(m).unwrap(), 1234);
    assert_eq!(lab.show(&lab.a)["mtu"], 1234, "Describe agrees");
    // The typed property follows.
    let out = lab.ok(lab.rig.busctl_as(
        0,
        0,
        &[
            "get-property",
            "org.hlctl.Daemon1",
            &path,
            "org.hlctl.Daemon1.Link",
            "Mtu",
        ],
    ));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "u 1234");
    // A new link appears as an object, announced by the ObjectManager's
    // InterfacesAdded (its Link properties naming it); deleting it removes
    // the object with InterfacesRemoved for the same path.
    let mut om = lab.signals(
        zbus::MatchRule::builder()
            .msg_type(zbus::message::Type::Signal)
            .interface("org.freedesktop.DBus.ObjectManager")
            .path("/org/hlctl/Daemon1")
            .build()
            .unwrap(),
    );
    let c = common::unique("dc");
    let c_peer = common::unique("dq");
    lab.ns
        .ip(&["link", "add", &c, "type", "veth", "peer", "name", &c_peer]);
    let added = object_manager_signal(&lab, &mut om, |m| {
        let (path, ifaces) = m
            .body()
            .deserialize::<(
                zbus::OwnedObjectPath,
                HashMap<String, HashMap<String, zbus::OwnedVariant>>,
            )>()
            .ok()?;
        let name = ifaces.get("org.hlctl.Daemon1.Link")?.get("Name")?;
        (String::try_from(name.try_clone().ok()?).ok()? == c).then(|| path.to_string())
    });
    assert!(added.starts_with("/org/hlctl/Daemon1/link/"), "{added}");
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        if lab.rig.hlctl(&["show", &c]).status.success() {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "new link never appeared"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    lab.ns.ip(&["link", "del", &c]);
    let removed = object_manager_signal(&lab, &mut om, |m| {
        let (path, ifaces) = m
            .body()
            .deserialize::<(zbus::OwnedObjectPath, Vec<String>)>()
            .ok()?;
        (path.as_str() == added && ifaces.iter().any(|i| i == "org.hlctl.Daemon1.Link"))
            .then(|| path.to_string())
    });
    assert_eq!(removed, added);
    loop {
        if lab.rig.hlctl(&["show", &c]).status.code() == Some(2) {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "deleted link never disappeared"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let log = lab.log();
    assert!(
        log.contains(&format!("link {c} appeared"))
            && log.contains(&format!("link {c} disappeared")),
        "{log}"
    );
}

#[test]
fn two_concurrent_changes_on_one_link_one_gets_busy() {
    // Each change is held 1.5 s inside the daemon, so the two always overlap.
    let lab = Lab::new(&["--test-hold-ms", "1500"]);
    let spawn = |mtu: &str| {
        std::process::Command::new(common::bus::HLCTL)
            .args(["--bus", &lab.rig.address, "set", &lab.a, "mtu", mtu])
            .env_remove("HLCTL_LOCAL")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let first = spawn("1300");
    std::thread::sleep(Duration::from_millis(300));
    let second = spawn("1310");
    let outs = [
        first.wait_with_output().unwrap(),
        second.wait_with_output().unwrap(),
    ];
    let ok: Vec<&Output> = outs.iter().filter(|o| o.status.success()).collect();
    let busy: Vec<&Output> = outs
        .iter()
        .filter(|o| String::from_utf8_lossy(&o.stderr).contains("busy with a change"))
        .collect();
    assert_eq!(ok.len(), 1, "exactly one change succeeds: {outs:?}");
    assert_eq!(busy.len(), 1, "the other gets Busy: {outs:?}");
    assert_eq!(busy[0].status.code(), Some(1));
    assert_eq!(lab.show(&lab.a)["mtu"], 1300, "the first one's value holds");
    // Reads never wait behind the change in progress.
    let slow = spawn("1320");
    std::thread::sleep(Duration::from_millis(300));
    let t = std::time::Instant::now();
    lab.show(&lab.a);
    let read_time = t.elapsed();
    let out = slow.wait_with_output().unwrap();
    assert!(out.status.success());
    assert!(
        read_time < Duration::from_millis(1000),
        "a read waited {read_time:?} behind a change"
    );
}

#[test]
fn malformed_arguments_are_invalid_and_the_daemon_keeps_serving() {
    use std::collections::HashMap;
    use zbus::Variant;
    let lab = Lab::new(&[]);
    let path = lab.link_path(&lab.a);
    let mtu_before = lab.show(&lab.a)["mtu"].clone();
    let conn = &lab.rig.conn;
    let call = |method: &str,
                p: &str,
                iface: &str,
                body: &dyn erased::Body|
     -> Result<(), (String, String)> {
        lab.rig.rt.block_on(async {
            match body.call(conn, p, iface, method).await {
                Ok(_) => Ok(()),
                Err(zbus::Error::MethodError(n, m, _)) => {
                    Err((n.to_string(), m.unwrap_or_default()))
                }
                Err(e) => Err(("transport".into(), e.to_string())),
            }
        })
    };
    let values: Vec<Variant<'static>> = vec![
        Variant::I32(-1),
        Variant::I64(-9_000_000_000),
        Variant::U64(u64::MAX),
        Variant::from("x".repeat(100_000)),
        Variant::from("1500".to_string()),
        Variant::F64(1500.5),
        Variant::Bool(true),
        Variant::U8(7),
        Variant::from(vec!["a".to_string(), "b".to_string()]),
        Variant::from(vec![1u32, 2]),
    ];
    let keys: Vec<String> = vec![
        "mtu".into(),
        "link.duplex".into(),
        "feature.rx-gro".into(),
        "ring.rx".into(),
        "link.advertise".into(),
        "colour".into(),
        "k".repeat(70_000),
        "feature.".into(),
        "feature.a b".into(),
        "".into(),
    ];
    // A bounded, deterministic fuzz: every key with every value (and pairs).
    let mut n = 0;
    let mut rng = 0x2545F4914F6CDD1Du64;
    for round in 0..300 {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        let mut settings: HashMap<String, Variant<'static>> = HashMap::new();
        let k1 = &keys[round % keys.len()];
        let v1 = &values[(round / keys.len()) % values.len()];
        settings.insert(k1.clone(), v1.try_clone().unwrap());
        if rng.is_multiple_of(3) {
            let k2 = &keys[(rng as usize / 7) % keys.len()];
            let v2 = &values[(rng as usize / 131) % values.len()];
            settings.insert(k2.clone(), v2.try_clone().unwrap());
        }
        // Keep only combinations that are really malformed (skip valid booleans for features etc.).
        let valid = settings.iter().all(|(k, v)| {
            matches!(
                (k.as_str(), v),
                ("feature.rx-gro", Variant::Bool(_))
                    | ("mtu", Variant::U8(_))
                    | ("ring.rx", Variant::U8(_))
            )
        });
        if valid {
            continue;
        }
        let mut opts: HashMap<String, Variant<'static>> = HashMap::new();
        if rng.is_multiple_of(5) {
            opts.insert("force".into(), Variant::Bool(true));
        }
        if rng.is_multiple_of(7) {
            opts.insert("dry_run".into(), Variant::from("yes".to_string()));
        }
        match call(
            "ApplyChanges",
            &path,
            "org.hlctl.Daemon1.Link",
            &(settings.clone(), opts),
        ) {
            Err((name, msg)) => {
                assert_eq!(
                    name, "org.hlctl.Daemon1.Error.InvalidArgument",
                    "{settings:?}: {msg}"
                );
                assert!(
                    !msg.is_empty() && msg.len() < 20_000,
                    "message of {} bytes",
                    msg.len()
                );
            }
            Ok(()) => panic!("malformed settings accepted: {settings:?}"),
        }
        n += 1;
    }
    assert!(n > 200, "only {n} malformed calls made");
    // Other methods with malformed strings.
    let huge = "n".repeat(100_000);
    let e = call(
        "GetLink",
        "/org/hlctl/Daemon1",
        "org.hlctl.Daemon1.Manager",
        &(huge.as_str(),),
    )
    .unwrap_err();
    assert_eq!(e.0, "org.hlctl.Daemon1.Error.InvalidArgument");
    let e = call(
        "ShowSysctl",
        "/org/hlctl/Daemon1",
        "org.hlctl.Daemon1.Manager",
        &(vec!["kernel.hostname", "net/../x"],),
    )
    .unwrap_err();
    assert_eq!(e.0, "org.hlctl.Daemon1.Error.InvalidArgument", "{}", e.1);
    let no: HashMap<String, Variant<'static>> = HashMap::new();
    for bad in [
        ("net.ipv4.tcp_rmem", "1 2"),
        ("net.ipv4.tcp_sack", "-5"),
        ("net.core.rmem_max", "-1"),
        ("kernel.panic", "1"),
    ] {
        let e = call(
            "SetSysctl",
            "/org/hlctl/Daemon1",
            "org.hlctl.Daemon1.Manager",
            &(vec![bad], no.clone()),
        )
        .unwrap_err();
        assert_eq!(
            e.0, "org.hlctl.Daemon1.Error.InvalidArgument",
            "{bad:?}: {}",
            e.1
        );
    }
    let e = call(
        "StartBenchmark",
        "/org/hlctl/Daemon1",
        "org.hlctl.Daemon1.Manager",
        &(
            "cpu",
            HashMap::from([("threads".to_string(), Variant::from(huge.as_str()))]),
            no.clone(),
        ),
    )
    .unwrap_err();
    assert!(e.0.ends_with("InvalidArgument"), "{e:?}");
    // A wrong signature altogether is the bus-standard InvalidArgs.
    let e = call(
        "ApplyChanges",
        &path,
        "org.hlctl.Daemon1.Link",
        &("mtu", 1500u32),
    )
    .unwrap_err();
    assert!(
        format!("{e:?}").contains("org.freedesktop.DBus.Error.InvalidArgs"),
        "{e:?}"
    );
    // Still serving, nothing changed.
    assert_eq!(lab.show(&lab.a)["mtu"], mtu_before);
    assert!(lab.rig.has_owner(common::bus::BUS_NAME));
    let r = lab.json(&["set", &lab.a, "mtu", "1400"]);
    assert_eq!(r["settings"][0]["after"], 1400);
}

/// Method bodies of different types behind one call helper.
mod erased {
    use std::future::Future;
    use std::pin::Pin;

    pub trait Body: Sync {
        fn call<'a>(
            &'a self,
            conn: &'a zbus::Connection,
            path: &'a str,
            iface: &'a str,
            method: &'a str,
        ) -> Pin<Box<dyn Future<Output = zbus::Result<zbus::Message>> + Send + 'a>>;
    }

    impl<T: serde::Serialize + zbus::DynamicType + Sync> Body for T {
        fn call<'a>(
            &'a self,
            conn: &'a zbus::Connection,
            path: &'a str,
            iface: &'a str,
            method: &'a str,
        ) -> Pin<Box<dyn Future<Output = zbus::Result<zbus::Message>> + Send + 'a>> {
            Box::pin(conn.call_method(
                Some(super::common::bus::BUS_NAME),
                path,
                Some(iface),
                method,
                self,
            ))
        }
    }
}

#[test]
fn killed_and_restarted_it_serves_again_and_reapplies_persisted_settings() {
    let mut lab = Lab::new(&[]);
    let r = lab.json(&[
        "set",
        &lab.a,
        "mtu",
        "1400",
        "feature",
        "gso",
        "off",
        "--persist",
    ]);
    assert!(
        r["persisted"]
            .as_str()
            .unwrap()
            .ends_with("nic-settings.json"),
        "{r}"
    );
    // Crash.
    lab.daemon.kill9();
    lab.rig
        .wait_name_gone(common::bus::BUS_NAME, Duration::from_secs(10));
    // Meanwhile someone resets the link.
    lab.ns
        .exec(&["ip", "link", "set", "dev", &lab.a, "mtu", "1500"]);
    lab.ns.exec(&["ethtool", "-K", &lab.a, "gso", "on"]);
    // Restart: it serves, and re-applies what was persisted.
    lab.daemon = lab.rig.daemon(&lab.ns, lab.state.path(), &[]);
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let i = lab.show(&lab.a);
        if i["mtu"] == 1400 && i["features"]["tx-generic-segmentation"]["active"] == false {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "persisted settings not re-applied: {i}\n{}",
            lab.log()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let ip = lab.ns.exec(&["ip", "-j", "link", "show", "dev", &lab.a]);
    assert_eq!(
        serde_json::from_slice::<Value>(&ip.stdout).unwrap()[0]["mtu"],
        1400
    );
    assert!(
        lab.log().contains("re-applying persisted settings"),
        "{}",
        lab.log()
    );

    // Hot-plug, rename-safe: the device comes back under another name, same MAC.
    let mac = lab.show(&lab.a)["mac"].as_str().unwrap().to_string();
    lab.ns.ip(&["link", "del", &lab.a]);
    let renamed = common::unique("dr");
    let peer = common::unique("dp");
    lab.ns.ip(&[
        "link", "add", &renamed, "address", &mac, "type", "veth", "peer", "name", &peer,
    ]);
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let out = lab.rig.hlctl(&["show", &renamed, "--json"]);
        if out.status.success() {
            let v: Value = serde_json::from_slice(&out.stdout).unwrap();
            if v["interfaces"][0]["mtu"] == 1400 {
                break;
            }
        }
        assert!(
            std::time::Instant::now() < deadline,
            "not re-applied on hot-plug:\n{}",
            lab.log()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // SIGTERM: a clean exit.
    let status = lab.daemon.terminate();
    assert!(status.success(), "{status:?}");
    assert!(lab.log().contains("stopped"));
}

#[test]
fn introspection_matches_the_published_xml() {
    let lab = Lab::new(&[]);
    let path = lab.link_path(&lab.a);
    let xml = |p: &str| -> String {
        lab.rig.rt.block_on(async {
            let r = lab
                .rig
                .conn
                .call_method(
                    Some(common::bus::BUS_NAME),
                    p,
                    Some("org.freedesktop.DBus.Introspectable"),
                    "Introspect",
                    &(),
                )
                .await
                .unwrap();
            r.body().deserialize::<String>().unwrap()
        })
    };
    let root = xml("/org/hlctl/Daemon1");
    std::fs::write(
        std::env::temp_dir().join("hlctl-introspect-root.xml"),
        &root,
    )
    .unwrap();
    std::fs::write(
        std::env::temp_dir().join("hlctl-introspect-link.xml"),
        xml(&path),
    )
    .unwrap();
    let mut live = interfaces(&root);
    live.extend(interfaces(&xml(&path)));
    live.sort();
    live.dedup();
    for w in live.windows(2) {
        assert_ne!(w[0].0, w[1].0, "one interface, two shapes");
    }
    let file = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/dbus/org.hlctl.Daemon1.xml"
    ))
    .unwrap();
    let mut published = interfaces(&file);
    // Job objects exist only while a job runs: checked in the jobs test.
    published.retain(|(name, _)| name != "org.hlctl.Daemon1.Job");
    assert_eq!(
        live,
        published,
        "\nlive introspection:\n{}",
        live.iter()
            .map(|(_, b)| b.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// `org.hlctl.*` interface blocks, comments and layout removed, sorted.
pub fn interfaces(xml: &str) -> Vec<(String, String)> {
    let mut text = String::new();
    let mut rest = xml;
    while let Some(i) = rest.find("<!--") {
        text.push_str(&rest[..i]);
        rest = rest[i..].find("-->").map_or("", |j| &rest[i + j + 3..]);
    }
    text.push_str(rest);
    let text: String = text
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace("> <", "><");
    let mut out = Vec::new();
    let mut rest = text.as_str();
    while let Some(i) = rest.find("<interface name=\"") {
        let tail = &rest[i..];
        let end = tail
            .find("</interface>")
            .map_or(tail.len(), |j| j + "</interface>".len());
        let block = &tail[..end];
        let name = block["<interface name=\"".len()..]
            .split('"')
            .next()
            .unwrap_or("")
            .to_string();
        if name.starts_with("org.hlctl.") {
            out.push((name, block.to_string()));
        }
        rest = &tail[end..];
    }
    // Introspecting a parent shows its children too: one entry per interface.
    out.sort();
    out.dedup();
    out
}

#[test]
fn bus_activation_starts_the_daemon_for_the_first_call() {
    let ns = NetNs::new();
    let (a, b) = (common::unique("aa"), common::unique("ab"));
    ns.veth(&a, &b);
    let state = tempfile::tempdir().unwrap();
    let log = state.path().join("activated.log");
    // What the installed activation file does (Exec=/usr/sbin/hlctld), here
    // inside the test namespace and on the test bus.
    let exec = format!(
        "/bin/sh -c 'exec ip netns exec {} {} --bus {{bus}} --state-dir {} 2>>{}'",
        ns.name,
        common::bus::HLCTLD,
        state.path().join("state").display(),
        log.display()
    );
    let rig = Rig::with_activation(&exec);
    assert!(!rig.has_owner(common::bus::BUS_NAME));
    let out = rig.hlctl(&["show", &a, "--json"]);
    // Whatever happens next, the activated daemon is stopped when the test ends.
    let owner_pid = || -> Option<u32> {
        rig.rt.block_on(async {
            let bus = zbus::fdo::DBusProxy::new(&rig.conn).await.ok()?;
            bus.get_connection_unix_process_id(common::bus::BUS_NAME.try_into().ok()?)
                .await
                .ok()
        })
    };
    let _early_guard = owner_pid().map(common::bus::PidGuard);
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stderr),
        std::fs::read_to_string(&log).unwrap_or_default()
    );
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("in-process"),
        "answered by the activated daemon, not the fallback"
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["interfaces"][0]["name"], a.as_str());
    assert!(rig.has_owner(common::bus::BUS_NAME));
    // Stop the activated daemon (started by the bus, so find it by its name's owner pid).
    let pid: u32 = rig.rt.block_on(async {
        let bus = zbus::fdo::DBusProxy::new(&rig.conn).await.unwrap();
        bus.get_connection_unix_process_id(common::bus::BUS_NAME.try_into().unwrap())
            .await
            .unwrap()
    });
    let _guard = common::bus::PidGuard(pid);
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid as i32),
        nix::sys::signal::Signal::SIGTERM,
    );
    rig.wait_name_gone(common::bus::BUS_NAME, Duration::from_secs(10));
    assert!(std::fs::read_to_string(&log).unwrap().contains("stopped"));
}

#[test]
fn the_daemon_exits_when_its_bus_goes_away() {
    let rig = Rig::start();
    let ns = NetNs::new();
    let state = tempfile::tempdir().unwrap();
    let mut daemon = rig.daemon(&ns, state.path(), &[]);
    drop(rig);
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(status) = daemon.proc.0.try_wait().unwrap() {
            assert!(
                !status.success(),
                "a lost bus is a failure (systemd restarts it)"
            );
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "hlctld outlived its bus"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        daemon.log().contains("lost the bus connection"),
        "{}",
        daemon.log()
    );
}

/// The first ObjectManager signal on `stream` that `pick` takes, within 10 s.
fn object_manager_signal(
    lab: &Lab,
    stream: &mut zbus::MessageStream,
    pick: impl Fn(&zbus::Message) -> Option<String>,
) -> String {
    lab.rig
        .rt
        .block_on(async {
            tokio::time::timeout(Duration::from_secs(10), async {
                while let Some(Ok(m)) = hlctl::dbus::wire::next(stream).await {
                    if let Some(v) = pick(&m) {
                        return Some(v);
                    }
                }
                None
            })
            .await
            .ok()
            .flatten()
        })
        .unwrap_or_else(|| panic!("no such ObjectManager signal\n{}", lab.log()))
}
