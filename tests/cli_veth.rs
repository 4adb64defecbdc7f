//! `hlctl show/set/sysctl/export` end to end against real veth pairs in
//! throw-away network namespaces, cross-checked with the real `ip` and `ethtool`.

mod common;

use std::process::Output;

use common::{HLCTL, NetNs};
use serde_json::Value;

/// A namespace with a veth pair `a`/`b` and a private state and sysctl.d directory.
use common::lab::NsLab as Lab;

impl Lab {
    fn ip_link(&self, iface: &str) -> Value {
        let out = self
            .ns
            .exec(&["ip", "-j", "-d", "-s", "link", "show", "dev", iface]);
        serde_json::from_slice::<Value>(&out.stdout).unwrap()[0].clone()
    }

    /// `ethtool -k` as kernel name → (on, fixed).
    fn ethtool_features(&self, iface: &str) -> Vec<(String, bool, bool)> {
        let out = self.ns.exec(&["ethtool", "-k", iface]);
        common::ethtool::parse_k(&String::from_utf8_lossy(&out.stdout))
            .into_iter()
            .map(|(name, (on, fixed, _))| (name, on, fixed))
            .collect()
    }

    fn feature_on(&self, iface: &str, kernel_name: &str) -> bool {
        self.ethtool_features(iface)
            .into_iter()
            .find(|f| f.0 == kernel_name)
            .unwrap_or_else(|| panic!("no {kernel_name}"))
            .1
    }
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn show_agrees_with_ip_and_ethtool() {
    let lab = Lab::new();
    // Some traffic so counters are non-zero: move the peer to a second namespace.
    let peer = NetNs::new();
    lab.ns.ip(&["link", "set", &lab.b, "netns", &peer.name]);
    lab.ns.ip(&["addr", "add", "10.213.0.1/30", "dev", &lab.a]);
    peer.ip(&["addr", "add", "10.213.0.2/30", "dev", &lab.b]);
    peer.ip(&["link", "set", &lab.b, "up"]);
    lab.ns
        .exec(&["ping", "-c", "3", "-i", "0.2", "-W", "2", "10.213.0.2"]);
    let s = lab.show(&lab.a);
    let ip = lab.ip_link(&lab.a);
    assert_eq!(s["name"], ip["ifname"]);
    assert_eq!(s["ifindex"], ip["ifindex"]);
    assert_eq!(s["mac"], ip["address"]);
    assert_eq!(s["mtu"], ip["mtu"]);
    assert_eq!(s["mtu_min"], ip["min_mtu"]);
    assert_eq!(s["mtu_max"], ip["max_mtu"]);
    assert_eq!(s["txqueuelen"], ip["txqlen"]);
    assert_eq!(s["kind"], ip["linkinfo"]["info_kind"]);
    assert_eq!(s["driver"], "veth");
    let tx_packets = s["counters"]["tx_packets"].as_u64().unwrap();
    let ip_tx = ip["stats64"]["tx"]["packets"].as_u64().unwrap();
    assert!(
        tx_packets >= 3 && tx_packets <= ip_tx,
        "hlctl {tx_packets} vs ip {ip_tx} (read after)"
    );
    // veth: 10000 Mb/s full, rings and pause not supported (null), features all present.
    assert_eq!(s["link"]["speed_mbps"], 10000);
    assert_eq!(s["link"]["duplex"], "full");
    assert!(s["rings"].is_null(), "{}", s["rings"]);
    assert!(s["pause"].is_null());
    for (name, on, fixed) in lab.ethtool_features(&lab.a) {
        let f = &s["features"][&name];
        assert_eq!(f["active"], on, "feature {name}");
        assert_eq!(f["fixed"], fixed, "feature {name} fixed");
    }
    let text = lab.hlctl(&["show", &lab.a]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("rings     not supported by driver"), "{text}");
    assert!(text.contains("link      10 Gbit/s, full duplex"), "{text}");
}

#[test]
fn show_without_names_lists_all_but_lo_and_spawns_no_programs() {
    let lab = Lab::new();
    let s = lab.json(&["show"]);
    let names = common::interface_names(&s);
    assert!(
        names.contains(&lab.a.as_str()) && names.contains(&lab.b.as_str()),
        "{names:?}"
    );
    assert!(!names.contains(&"lo"), "{names:?}");
    let lo = lab.show("lo");
    assert_eq!(lo["name"], "lo");
    // One process, no helper programs: strace sees exactly one execve.
    let out = lab.ns.exec_raw(&[
        "strace",
        "-f",
        "-qq",
        "-e",
        "trace=execve",
        "-o",
        "/dev/stderr",
        HLCTL,
        "show",
        "--json",
    ]);
    assert!(out.status.success());
    let execs = stderr(&out)
        .lines()
        .filter(|l| l.contains("execve("))
        .count();
    assert_eq!(execs, 1, "{}", stderr(&out));
}

#[test]
fn set_reads_back_mtu_txqueuelen_features_and_channels() {
    let lab = Lab::new();
    let r = lab.json(&[
        "set",
        &lab.a,
        "mtu",
        "9000",
        "txqueuelen",
        "4321",
        "feature",
        "gso",
        "off",
        "gro",
        "on",
        "tso",
        "off",
        "sg",
        "off",
    ]);
    assert!(r["failure"].is_null(), "{r}");
    let ip = lab.ip_link(&lab.a);
    assert_eq!(ip["mtu"], 9000);
    assert_eq!(ip["txqlen"], 4321);
    for (name, on) in [
        ("tx-generic-segmentation", false),
        ("rx-gro", true),
        ("tx-tcp-segmentation", false),
        ("tx-scatter-gather", false),
    ] {
        assert_eq!(lab.feature_on(&lab.a, name), on, "{name} per ethtool -k");
    }
    let settings = r["settings"].as_array().unwrap();
    let mtu = settings.iter().find(|s| s["setting"] == "mtu").unwrap();
    assert_eq!(
        (
            mtu["before"].as_u64(),
            mtu["after"].as_u64(),
            mtu["status"].as_str()
        ),
        (Some(1500), Some(9000), Some("changed"))
    );
    // And back on.
    let r = lab.json(&[
        "set", &lab.a, "feature", "gso", "on", "tso", "on", "sg", "on",
    ]);
    assert!(r["failure"].is_null(), "{r}");
    for name in [
        "tx-generic-segmentation",
        "tx-tcp-segmentation",
        "tx-scatter-gather",
    ] {
        assert!(
            lab.feature_on(&lab.a, name),
            "{name} back on per ethtool -k"
        );
    }
    // Channels: veth allows rx/tx up to its maximum.
    let before = lab.show(&lab.a)["channels"].clone();
    let max = before["rx_max"].as_u64().unwrap();
    assert!(max >= 1);
    let r = lab.json(&["set", &lab.a, "channels", "rx", &max.to_string(), "tx", "1"]);
    assert!(r["failure"].is_null(), "{r}");
    let l = String::from_utf8_lossy(&lab.ns.exec(&["ethtool", "-l", &lab.a]).stdout).to_string();
    let current = l
        .split("Current hardware settings:")
        .nth(1)
        .unwrap()
        .to_string();
    assert!(
        current.contains(&format!("RX:\t\t{max}")) || current.contains(&format!("RX:\t{max}")),
        "{l}"
    );
}

#[test]
fn unsupported_groups_on_veth_are_refused_and_change_nothing() {
    let lab = Lab::new();
    let before = lab.show(&lab.a);
    for words in [
        &["ring", "rx", "512"][..],
        &["pause", "rx", "on"][..],
        &["coalesce", "rx-usecs", "10"][..],
    ] {
        let mut args = vec!["set", lab.a.as_str(), "mtu", "2000"];
        args.extend_from_slice(words);
        let out = lab.hlctl(&args);
        assert_eq!(out.status.code(), Some(2), "{words:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("not supported by driver veth"),
            "{}",
            stderr(&out)
        );
    }
    let after = lab.show(&lab.a);
    assert_eq!(before["mtu"], after["mtu"]);
    assert_eq!(before["features"], after["features"]);
}

#[test]
fn invalid_inputs_exit_2_name_the_problem_and_change_nothing() {
    let lab = Lab::new();
    let before = lab.show(&lab.a);
    let cases: &[(&[&str], &str)] = &[
        (&["mtu", "70000"], "allowed 68 to 65535"),
        (&["mtu", "abc"], "not a number"),
        (&["txqueuelen"], "missing value"),
        (&["feature", "gro", "maybe"], "expected on or off"),
        (&["feature", "warp-drive", "on"], "unknown feature"),
        (&["channels", "rx", "999"], "above the device's maximum"),
        (&["link", "duplex", "triple"], "expected half or full"),
        (&["colour", "blue"], "unknown setting group"),
        (&["mtu", "9000", "ring", "rx", "x"], "not a number"),
    ];
    for (words, msg) in cases {
        let mut args = vec!["set", lab.a.as_str()];
        args.extend_from_slice(words);
        let out = lab.hlctl(&args);
        assert_eq!(out.status.code(), Some(2), "{words:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains(msg),
            "{words:?}: expected '{msg}' in {}",
            stderr(&out)
        );
    }
    // lo has no upper MTU limit (the kernel's max_mtu 0): 70000 is taken
    // there, and only the minimum is named.
    let out = lab.hlctl(&["set", "lo", "mtu", "70000"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(lab.show("lo")["mtu"], 70000);
    // Several problems are reported together.
    let out = lab.hlctl(&["set", &lab.a, "mtu", "70000", "feature", "warp-drive", "on"]);
    let e = stderr(&out);
    assert!(
        e.contains("mtu 70000") && e.contains("feature warp-drive"),
        "{e}"
    );
    // A fixed feature cannot be changed.
    let fixed: Vec<String> = lab
        .ethtool_features(&lab.a)
        .into_iter()
        .filter(|f| f.2)
        .map(|f| (f.0, f.1))
        .map(|(n, on)| format!("{n}={on}"))
        .collect();
    if let Some(f) = fixed.first() {
        let (name, on) = f.split_once('=').unwrap();
        let want = if on == "true" { "off" } else { "on" };
        let out = lab.hlctl(&["set", &lab.a, "feature", name, want]);
        assert_eq!(out.status.code(), Some(2));
        assert!(stderr(&out).contains("fixed"), "{}", stderr(&out));
    }
    let out = lab.hlctl(&["set", "nosuchif0", "mtu", "1500"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("nosuchif0: no such interface"),
        "{}",
        stderr(&out)
    );
    let after = lab.show(&lab.a);
    assert_eq!(before["mtu"], after["mtu"]);
    assert_eq!(before["txqueuelen"], after["txqueuelen"]);
    assert_eq!(before["features"], after["features"]);
    assert_eq!(before["channels"], after["channels"]);
}

/// What the kernel changes on its own (issue 30): `sg off` takes TSO with
/// it. Every offload that moved without being asked for gets a row of its
/// own, `followed`, naming what it follows; `show` marks it
/// `[requested on]`, exactly where `ethtool -k` says `off [requested on]`.
#[test]
fn the_kernels_own_changes_get_rows_and_show_marks_requested() {
    let lab = Lab::new();
    assert!(lab.feature_on(&lab.a, "tx-tcp-segmentation"));
    let r = lab.json(&["set", &lab.a, "feature", "sg", "off"]);
    let rows = r["settings"].as_array().unwrap();
    let row = |name: &str| {
        rows.iter()
            .find(|x| x["setting"] == format!("feature {name}"))
            .unwrap_or_else(|| panic!("no row for {name}: {r}"))
    };
    assert_eq!(row("tx-scatter-gather")["status"], "changed");
    let tso = row("tx-tcp-segmentation");
    assert_eq!(tso["status"], "followed", "{r}");
    assert_eq!(
        (&tso["before"], &tso["after"]),
        (&"on".into(), &"off".into())
    );
    assert!(tso["requested"].is_null(), "{tso}");
    assert!(
        tso["reason"]
            .as_str()
            .unwrap()
            .contains("feature tx-scatter-gather off"),
        "{tso}"
    );
    // Exactly the offloads ethtool now reports as held off against the
    // request are the followed rows.
    let out = lab.ns.exec(&["ethtool", "-k", &lab.a]);
    let k = common::ethtool::parse_k(&String::from_utf8_lossy(&out.stdout));
    let mut held: Vec<String> = k
        .iter()
        .filter(|(_, (on, _, req))| !on && *req == Some(true))
        .map(|(n, _)| format!("feature {n}"))
        .collect();
    let mut followed: Vec<String> = rows
        .iter()
        .filter(|x| x["status"] == "followed")
        .map(|x| x["setting"].as_str().unwrap().to_string())
        .collect();
    held.sort();
    followed.sort();
    assert!(!held.is_empty());
    assert_eq!(followed, held);

    let out = lab.hlctl(&["show", &lab.a]);
    let text = String::from_utf8_lossy(&out.stdout);
    for name in &held {
        let n = name.trim_start_matches("feature ");
        assert!(text.contains(&format!("{n}[requested on]")), "{n}: {text}");
    }
    let text_set = lab.hlctl(&["set", &lab.a, "feature", "sg", "on"]);
    let t = String::from_utf8_lossy(&text_set.stdout);
    assert!(t.contains("changed by the kernel"), "{t}");
    assert!(lab.feature_on(&lab.a, "tx-tcp-segmentation"));
}

#[test]
fn dry_run_changes_nothing() {
    let lab = Lab::new();
    let r = lab.json(&[
        "set",
        &lab.a,
        "mtu",
        "4000",
        "feature",
        "gro",
        "on",
        "--dry-run",
    ]);
    assert_eq!(r["dry_run"], true);
    let mtu = r["settings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["setting"] == "mtu")
        .unwrap()
        .clone();
    assert_eq!(mtu["status"], "planned");
    assert_eq!(mtu["requested"], 4000);
    assert_eq!(lab.ip_link(&lab.a)["mtu"], 1500);
}

#[test]
fn a_failing_later_step_restores_the_earlier_ones() {
    let lab = Lab::new();
    let before = lab.show(&lab.a);
    let gso_before = before["features"]["tx-generic-segmentation"]["active"]
        .as_bool()
        .unwrap();
    let want = if gso_before { "off" } else { "on" };
    // veth reports its link settings but refuses LINKMODES_SET at apply time:
    // mtu and the feature are applied first, then the link step fails.
    let out = lab.hlctl(&[
        "set",
        &lab.a,
        "mtu",
        "3000",
        "txqueuelen",
        "77",
        "feature",
        "gso",
        want,
        "link",
        "speed",
        "1000",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["failure"]["step"], "link", "{r}");
    for s in r["settings"].as_array().unwrap() {
        let want = if s["setting"] == "link speed" {
            "not_applied"
        } else {
            "restored"
        };
        assert_eq!(s["status"], want, "{s}");
    }
    let ip = lab.ip_link(&lab.a);
    assert_eq!(ip["mtu"], before["mtu"]);
    assert_eq!(ip["txqlen"], before["txqueuelen"]);
    let after = lab.show(&lab.a);
    assert_eq!(
        after["features"]["tx-generic-segmentation"]["active"],
        gso_before
    );
    let text = lab.hlctl(&["set", &lab.a, "mtu", "3000", "link", "speed", "1000"]);
    let t = String::from_utf8_lossy(&text.stdout);
    assert!(
        t.contains("FAILED at link") && t.contains("was restored"),
        "{t}"
    );
}

#[test]
fn sysctls_change_inside_the_namespace_only_and_persist() {
    let lab = Lab::new();
    let host = std::fs::read_to_string("/proc/sys/net/ipv4/tcp_rmem").unwrap();
    let r = lab.json(&[
        "sysctl",
        "net.ipv4.tcp_rmem=4096\t65536   1048576",
        "net.ipv4.tcp_slow_start_after_idle=0",
        "--persist",
    ]);
    assert!(r["failed"].is_null(), "{r}");
    let inside =
        String::from_utf8_lossy(&lab.ns.exec(&["cat", "/proc/sys/net/ipv4/tcp_rmem"]).stdout)
            .to_string();
    assert_eq!(
        inside.split_whitespace().collect::<Vec<_>>(),
        ["4096", "65536", "1048576"]
    );
    assert_eq!(
        std::fs::read_to_string("/proc/sys/net/ipv4/tcp_rmem").unwrap(),
        host,
        "host value must not change"
    );
    let file = std::fs::read_to_string(lab.dir.path().join("sysctl.d/90-hlctl.conf")).unwrap();
    assert!(
        file.contains("net.ipv4.tcp_rmem = 4096 65536 1048576\n"),
        "{file}"
    );
    assert!(
        file.contains("net.ipv4.tcp_slow_start_after_idle = 0\n"),
        "{file}"
    );
    // Rewriting keeps lines we do not own and replaces ours.
    std::fs::write(
        lab.dir.path().join("sysctl.d/90-hlctl.conf"),
        format!("# mine\nvm.swappiness = 5\n{file}"),
    )
    .unwrap();
    lab.json(&[
        "sysctl",
        "net.ipv4.tcp_rmem=4096 131072 2097152",
        "--persist",
    ]);
    let file = std::fs::read_to_string(lab.dir.path().join("sysctl.d/90-hlctl.conf")).unwrap();
    assert!(file.starts_with("# mine\nvm.swappiness = 5\n"), "{file}");
    assert_eq!(file.matches("net.ipv4.tcp_rmem").count(), 1, "{file}");
    assert!(
        file.contains("net.ipv4.tcp_rmem = 4096 131072 2097152"),
        "{file}"
    );
    // Same value with other whitespace is not a change.
    let r = lab.json(&["sysctl", "net.ipv4.tcp_rmem=4096  131072\t2097152"]);
    let c = &r["changes"][0];
    assert_eq!(c["before"], c["requested"]);
    // The read view shows the set, with the namespace's values.
    let shown = lab.json(&["sysctl"]);
    let rmem = shown["sysctls"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["key"] == "net.ipv4.tcp_rmem")
        .unwrap()
        .clone();
    assert_eq!(rmem["value"], "4096 131072 2097152");
}

#[test]
fn invalid_sysctls_exit_2_and_change_nothing() {
    let lab = Lab::new();
    let read = || {
        String::from_utf8_lossy(
            &lab.ns
                .exec(&[
                    "cat",
                    "/proc/sys/net/ipv4/tcp_wmem",
                    "/proc/sys/net/ipv4/tcp_congestion_control",
                ])
                .stdout,
        )
        .to_string()
    };
    let before = read();
    let cases: &[(&str, &str)] = &[
        ("net.ipv4.tcp_wmem=4096 1 2", "min ≤ default ≤ max"),
        ("net.ipv4.tcp_wmem=4096 16384", "three integers"),
        ("net.ipv4.tcp_congestion_control=warp", "is not available"),
        ("kernel.panic=1", "keys must start with 'net.'"),
        ("net.ipv4.tcp_sack=7", "allowed 0 to 1"),
        ("net.ipv4.no_such_key=1", "no such key"),
    ];
    for (arg, msg) in cases {
        // A valid assignment alongside must not be applied either.
        let out = lab.hlctl(&["sysctl", "net.ipv4.tcp_wmem=4096 20000 400000", arg]);
        assert_eq!(out.status.code(), Some(2), "{arg}: {}", stderr(&out));
        assert!(
            stderr(&out).contains(msg),
            "{arg}: expected '{msg}' in {}",
            stderr(&out)
        );
    }
    assert_eq!(read(), before);
}

#[test]
fn persisted_nic_settings_export_as_a_systemd_link_file() {
    let lab = Lab::new();
    let r = lab.json(&[
        "set",
        &lab.a,
        "mtu",
        "9000",
        "feature",
        "gro",
        "on",
        "--persist",
    ]);
    assert!(r["persisted"].is_string(), "{r}");
    let state: Value = serde_json::from_str(
        &std::fs::read_to_string(lab.dir.path().join("state/nic-settings.json")).unwrap(),
    )
    .unwrap();
    let e = &state["interfaces"][0];
    assert_eq!(e["name"], lab.a.as_str());
    assert_eq!(e["settings"]["mtu"], 9000);
    assert_eq!(e["settings"]["features"]["rx-gro"], true);
    let mac = lab.show(&lab.a)["mac"].clone();
    assert_eq!(e["mac"], mac);
    let out = lab.hlctl(&["export", &lab.a, "--format", "systemd-link"]);
    let t = String::from_utf8_lossy(&out.stdout);
    assert!(
        t.contains(&format!("MACAddress={}", mac.as_str().unwrap())),
        "{t}"
    );
    assert!(
        t.contains("MTUBytes=9000") && t.contains("GenericReceiveOffload=yes"),
        "{t}"
    );
    let out = lab.hlctl(&["export", &lab.b]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("no persisted settings"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn without_hlctld_an_unprivileged_caller_reads_in_process_and_changes_get_exit_4() {
    let lab = Lab::new();
    let home = tempfile::tempdir().unwrap();
    std::fs::set_permissions(
        home.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o777),
    )
    .unwrap();
    let xdg = format!("XDG_STATE_HOME={}", home.path().display());
    let as_nobody = |args: &[&str]| {
        let mut v = vec![
            "env",
            xdg.as_str(),
            // No bus here: hlctld cannot answer.
            "DBUS_SYSTEM_BUS_ADDRESS=unix:path=/nonexistent/hlctl-test-bus",
            "setpriv",
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            HLCTL,
        ];
        v.extend_from_slice(args);
        lab.ns.exec_raw(&v)
    };
    // Without hlctld (none runs here) reads need no privilege, as with `ip`
    // and `ethtool`: `show` works in this process, and says so once.
    for args in [
        &["show", &lab.a, "--json"][..],
        &["--local", "show", &lab.a, "--json"],
    ] {
        let out = as_nobody(args);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["interfaces"][0]["name"], lab.a.as_str());
        assert_eq!(v["interfaces"][0]["mtu"], lab.ip_link(&lab.a)["mtu"]);
    }
    assert!(stderr(&as_nobody(&["show", &lab.a])).contains("running in this process as uid 65534"),);
    // A change is still root's or hlctld's: refused, with how to start it.
    let out = as_nobody(&["set", &lab.a, "mtu", "2000", "txqueuelen", "10"]);
    assert_eq!(out.status.code(), Some(4), "no daemon: {}", stderr(&out));
    assert!(
        stderr(&out).contains("systemctl start hlctld"),
        "{}",
        stderr(&out)
    );
    let out = as_nobody(&["--local", "set", &lab.a, "mtu", "2000"]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let out = as_nobody(&["sysctl", "net.ipv4.tcp_sack=0"]);
    assert_eq!(
        out.status.code(),
        Some(4),
        "{} {}",
        String::from_utf8_lossy(&out.stdout),
        stderr(&out)
    );
    let ip = lab.ip_link(&lab.a);
    assert_eq!(
        (ip["mtu"].as_u64(), ip["txqlen"].as_u64()),
        (Some(1500), Some(1000))
    );
    let sack = lab.ns.exec(&["cat", "/proc/sys/net/ipv4/tcp_sack"]);
    assert_eq!(String::from_utf8_lossy(&sack.stdout).trim(), "1");
    // A measurement too, with its row in the user's own history.
    let out = as_nobody(&["bench", "cpu", "--time", "1", "--threads", "1", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = as_nobody(&["history", "--json"]);
    let v: Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", stderr(&out)));
    let rows = v["results"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{v}");
    assert_eq!(rows[0]["kind"], "cpu");
    assert_eq!(rows[0]["uid"], 65534);
    assert!(home.path().join("hlctl/history.db").exists());
}

/// hlctl `args` inside the lab's namespace with the ethtool settings forced
/// through the SIOCETHTOOL ioctl (`HLCTL_ETHTOOL_IOCTL=1`, as on kernels
/// before 5.6), prefixed by `wrap` (e.g. strace), unchecked.
fn hlctl_via_ioctl(lab: &Lab, wrap: &[&str], args: &[&str]) -> Output {
    let argv = common::lab::hlctl_argv(lab.dir.path(), args);
    let mut v: Vec<&str> = vec!["env", "HLCTL_ETHTOOL_IOCTL=1"];
    v.extend_from_slice(wrap);
    v.extend(argv.iter().map(String::as_str));
    lab.ns.exec_raw(&v)
}

fn json_via_ioctl(lab: &Lab, args: &[&str]) -> Value {
    let args = common::lab::with_json(args);
    common::lab::json_of(&args, hlctl_via_ioctl(lab, &[], &args))
}

/// SIOCETHTOOL calls of `hlctl show IFACE` (strace), with and without the knob.
fn ethtool_ioctls(lab: &Lab, forced: bool) -> usize {
    let strace = [
        "strace",
        "-f",
        "-qq",
        "-e",
        "trace=ioctl",
        "-o",
        "/dev/stderr",
    ];
    let args = ["show", lab.a.as_str(), "--json"];
    let out = if forced {
        hlctl_via_ioctl(lab, &strace, &args)
    } else {
        let mut v = strace.to_vec();
        v.push(HLCTL);
        v.extend_from_slice(&args);
        lab.ns.exec_raw(&v)
    };
    assert!(out.status.success(), "{}", stderr(&out));
    stderr(&out)
        .lines()
        .filter(|l| l.contains("SIOCETHTOOL"))
        .count()
}

#[test]
fn the_ioctl_fallback_shows_and_sets_what_netlink_does() {
    let lab = Lab::new();
    // The knob really moves the ethtool reads to the ioctl (netlink: drvinfo and stats only).
    let (nl_calls, io_calls) = (ethtool_ioctls(&lab, false), ethtool_ioctls(&lab, true));
    eprintln!("SIOCETHTOOL calls of show: netlink {nl_calls}, forced ioctl {io_calls}");
    assert!(io_calls >= nl_calls + 6, "{nl_calls} vs {io_calls}");
    // veth: features, channels, link (10000 Mb/s full, no modes); rings,
    // pause, coalesce null. Also a bridge with `a` as its port, and lo.
    let br = common::unique("br");
    lab.ns.ip(&["link", "add", &br, "type", "bridge"]);
    lab.ns.ip(&["link", "set", &lab.a, "master", &br]);
    lab.ns.ip(&["link", "set", &br, "up"]);
    let names = ["lo", br.as_str(), lab.a.as_str(), lab.b.as_str()];
    let mut args = vec!["show"];
    args.extend_from_slice(&names);
    let (all_nl, all_io) = (lab.json(&args), json_via_ioctl(&lab, &args));
    for (i, name) in names.iter().enumerate() {
        let (nl, io) = (&all_nl["interfaces"][i], &all_io["interfaces"][i]);
        assert_eq!(io["name"], *name);
        for key in [
            "features", "channels", "link", "rings", "pause", "coalesce", "driver",
        ] {
            assert_eq!(io[key], nl[key], "{name}: {key} via ioctl vs netlink");
        }
    }
    let nl = all_nl["interfaces"][2].clone();
    let io = all_io["interfaces"][2].clone();
    assert_eq!(io["link"]["speed_mbps"], 10000);
    assert!(io["features"]["rx-gro"].is_object(), "{}", io["features"]);
    // Set through the ioctl; read back from outside with ethtool (netlink).
    let gro = lab.feature_on(&lab.a, "rx-gro");
    let max = nl["channels"]["rx_max"].as_u64().unwrap();
    let rx = nl["channels"]["rx"].as_u64().unwrap();
    let want_rx = if rx == max { 1 } else { max };
    let gro_word = if gro { "off" } else { "on" };
    let r = json_via_ioctl(
        &lab,
        &[
            "set",
            &lab.a,
            "feature",
            "gro",
            gro_word,
            "channels",
            "rx",
            &want_rx.to_string(),
        ],
    );
    assert!(r["failure"].is_null(), "{r}");
    assert_eq!(
        lab.feature_on(&lab.a, "rx-gro"),
        !gro,
        "rx-gro per ethtool -k"
    );
    assert_eq!(ethtool_l_rx(&lab), want_rx, "rx per ethtool -l");
    // And back, again through the ioctl.
    let back = if gro { "on" } else { "off" };
    let r = json_via_ioctl(
        &lab,
        &[
            "set",
            &lab.a,
            "feature",
            "gro",
            back,
            "channels",
            "rx",
            &rx.to_string(),
        ],
    );
    assert!(r["failure"].is_null(), "{r}");
    assert_eq!(lab.feature_on(&lab.a, "rx-gro"), gro, "rx-gro restored");
    assert_eq!(ethtool_l_rx(&lab), rx, "rx restored");
}

/// The current RX channel count per `ethtool -l`.
fn ethtool_l_rx(lab: &Lab) -> u64 {
    let l = String::from_utf8_lossy(&lab.ns.exec(&["ethtool", "-l", &lab.a]).stdout).to_string();
    let current = l
        .split("Current hardware settings:")
        .nth(1)
        .unwrap_or_else(|| panic!("{l}"));
    current
        .lines()
        .find_map(|line| line.strip_prefix("RX:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("{l}"))
}
