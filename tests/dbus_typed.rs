//! The typed D-Bus API from outside Rust: `busctl --json=short` and a small
//! Python client (python3-dbus) read a link's settings groups and apply a
//! change against hlctld on a private bus with the real polkitd, each value
//! cross-checked with the real `ethtool`; and every `a{sv}` key the
//! introspection XML documents is produced by the daemon, none undocumented.

mod common;

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

use common::bus::BUS_NAME;
// A bus, polkitd, a namespace with a veth pair and hlctld serving it; the
// typed calls this test makes are methods added below.
use common::bus::DaemonLab as Lab;
use serde_json::{Value, json};
use zbus::OwnedVariant;

const LINK: &str = "org.hlctl.Daemon1.Link";
const MANAGER: &str = "org.hlctl.Daemon1.Manager";
const ROOT: (u32, u32) = (0, 0);
const NOBODY: (u32, u32) = (65534, 65534);
const PYTHON: &str = "/usr/bin/python3";

impl Lab {
    fn call<B>(&self, path: &str, iface: &str, method: &str, body: &B) -> zbus::Message
    where
        B: serde::Serialize + zbus::wire::DynamicType,
    {
        self.rig
            .rt
            .block_on(
                self.rig
                    .conn
                    .call_method(Some(BUS_NAME), path, Some(iface), method, body),
            )
            .unwrap_or_else(|e| panic!("{method}: {e}\n{}", self.daemon.log()))
    }

    fn prop(&self, path: &str, iface: &str, name: &str) -> OwnedVariant {
        let r = self.call(
            path,
            "org.freedesktop.DBus.Properties",
            "Get",
            &(iface, name),
        );
        r.body().deserialize::<OwnedVariant>().unwrap()
    }

    /// `busctl --json=short ARGS` as `who`, parsed.
    fn busctl(&self, who: (u32, u32), args: &[&str]) -> Value {
        let mut v = vec!["--json=short"];
        v.extend_from_slice(args);
        let out = self.rig.busctl_as(who.0, who.1, &v);
        assert!(
            out.status.success(),
            "busctl {args:?}: {}\ndaemon log:\n{}",
            common::output_text(&out),
            self.daemon.log()
        );
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "busctl {args:?}: not JSON ({e}): {}",
                common::output_text(&out)
            )
        })
    }

    fn ethtool(&self, args: &[&str]) -> std::process::Output {
        let mut v = vec!["ethtool"];
        v.extend_from_slice(args);
        self.ns.exec_raw(&v)
    }

    fn ethtool_k(&self, iface: &str) -> BTreeMap<String, (bool, bool, Option<bool>)> {
        let out = self.ethtool(&["-k", iface]);
        assert!(out.status.success(), "{}", common::output_text(&out));
        common::ethtool::parse_k(&String::from_utf8_lossy(&out.stdout))
    }

    /// `ethtool -l`: (maxima, current) as rx/tx/other/combined → n.
    fn ethtool_l(&self, iface: &str) -> (BTreeMap<String, u32>, BTreeMap<String, u32>) {
        let out = self.ethtool(&["-l", iface]);
        assert!(out.status.success(), "{}", common::output_text(&out));
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let (max, cur) = text
            .split_once("Current hardware settings:")
            .expect("ethtool -l output");
        let read = |t: &str| -> BTreeMap<String, u32> {
            t.lines()
                .filter_map(|l| {
                    let (k, v) = l.trim().split_once(':')?;
                    let n = v.trim().parse().ok()?;
                    Some((k.trim().to_lowercase(), n))
                })
                .collect()
        };
        (read(max), read(cur))
    }

    /// Start a benchmark job and wait for it to end; its typed result.
    fn benchmark(
        &self,
        kind: &str,
        params: HashMap<&str, zbus::Variant<'_>>,
    ) -> (String, HashMap<String, OwnedVariant>, Value) {
        let opts: HashMap<&str, zbus::Variant<'_>> = HashMap::new();
        let r = self.call(
            "/org/hlctl/Daemon1",
            MANAGER,
            "StartBenchmark",
            &(kind, params, opts),
        );
        self.finished(kind, r)
    }

    /// Start a Manager job that takes one `a{sv}` (Doctor, Report) and wait
    /// for it to end; its typed result.
    fn manager_job(
        &self,
        method: &str,
        options: HashMap<&str, zbus::Variant<'_>>,
    ) -> (String, HashMap<String, OwnedVariant>, Value) {
        let r = self.call("/org/hlctl/Daemon1", MANAGER, method, &(options,));
        self.finished(method, r)
    }

    /// Wait for the job whose path `r` returned to end; (state, Result, ResultJson).
    fn finished(
        &self,
        kind: &str,
        r: zbus::Message,
    ) -> (String, HashMap<String, OwnedVariant>, Value) {
        let job = r
            .body()
            .deserialize::<zbus::OwnedObjectPath>()
            .unwrap()
            .to_string();
        let job_iface = "org.hlctl.Daemon1.Job";
        let until = Instant::now() + Duration::from_secs(60);
        loop {
            let state = String::try_from(self.prop(&job, job_iface, "State")).unwrap();
            if state != "running" {
                let result: HashMap<String, OwnedVariant> =
                    self.prop(&job, job_iface, "Result").try_into().unwrap();
                let json = String::try_from(self.prop(&job, job_iface, "ResultJson")).unwrap();
                return (state, result, serde_json::from_str(&json).unwrap());
            }
            assert!(
                Instant::now() < until,
                "job {kind} still running\n{}",
                self.daemon.log()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

fn feature_on_and_changeable(lab: &Lab, iface: &str) -> String {
    // An offload on by default on veth, that the driver lets change.
    let k = lab.ethtool_k(iface);
    let name = "tx-tcp-segmentation";
    let (on, fixed, _) = k[name];
    assert!(
        on && !fixed,
        "veth's {name} should be on and changeable: {k:?}"
    );
    name.to_string()
}

#[test]
fn busctl_reads_typed_groups_and_applies_a_change() {
    let lab = Lab::new(&[]);
    let path = lab.link_path(&lab.a);
    let get = |prop: &str| lab.busctl(NOBODY, &["get-property", BUS_NAME, &path, LINK, prop]);

    // Features: a{s(bbb)}, (active, requested, fixed) as ethtool -k prints them.
    let f = get("Features");
    assert_eq!(f["type"], "a{s(bbb)}", "{f}");
    let k = lab.ethtool_k(&lab.a);
    assert!(k.len() > 20, "{k:?}");
    for (name, (on, fixed, _)) in &k {
        let d = &f["data"][name];
        assert_eq!(d[0], json!(on), "{name}: {d} vs ethtool {on}");
        assert_eq!(d[2], json!(fixed), "{name}: {d} vs ethtool fixed {fixed}");
    }

    // Rings: a{su}. veth has none (ethtool -g: not supported): an empty dictionary.
    let r = get("Rings");
    assert_eq!(r["type"], "a{su}", "{r}");
    let g = lab.ethtool(&["-g", &lab.a]);
    assert!(
        !g.status.success(),
        "veth grew ring parameters: {}",
        common::output_text(&g)
    );
    assert_eq!(r["data"], json!({}), "{r}");

    // Channels: a{su}, as ethtool -l.
    let c = get("Channels");
    assert_eq!(c["type"], "a{su}", "{c}");
    let (max, cur) = lab.ethtool_l(&lab.a);
    for k in ["rx", "tx"] {
        assert_eq!(c["data"][k], json!(cur[k]), "{k}: {c} vs ethtool {cur:?}");
        assert_eq!(
            c["data"][format!("{k}-max")],
            json!(max[k]),
            "{k} max: {c} vs {max:?}"
        );
    }

    // LinkModes: a{sv}; veth says 10000 Mb/s full duplex.
    let m = get("LinkModes");
    assert_eq!(m["type"], "a{sv}", "{m}");
    assert_eq!(
        m["data"]["speed"],
        json!({"type": "u", "data": 10000}),
        "{m}"
    );
    assert_eq!(
        m["data"]["duplex"],
        json!({"type": "s", "data": "full"}),
        "{m}"
    );
    let p = get("Pause");
    assert_eq!(p, json!({"type": "(bbb)", "data": [false, false, false]}));
    let n = get("Counters");
    assert_eq!(n["type"], "a{st}", "{n}");
    assert!(n["data"]["rx-packets"].is_u64(), "{n}");

    // Apply a change; the reply is typed rows and a typed summary, and the
    // Features property announces the new value.
    let feature = feature_on_and_changeable(&lab, &lab.a);
    let changes = lab.rig.rt.block_on(async {
        let rule = zbus::MatchRule::builder()
            .msg_type(zbus::message::Type::Signal)
            .interface("org.freedesktop.DBus.Properties")
            .member("PropertiesChanged")
            .path(path.as_str())
            .build()
            .unwrap();
        zbus::MessageStream::for_match_rule(rule, &lab.rig.conn, None)
            .await
            .unwrap()
    });
    let key = format!("feature.{feature}");
    let out = lab.busctl(
        ROOT,
        &[
            "call",
            BUS_NAME,
            &path,
            LINK,
            "ApplyChanges",
            "a{sv}a{sv}",
            "1",
            &key,
            "b",
            "false",
            "0",
        ],
    );
    assert_eq!(out["type"], "a(ssssss)a{sv}", "{out}");
    let rows = out["data"][0].as_array().unwrap();
    assert_eq!(
        rows[0],
        json!([
            format!("feature.{feature}"),
            "on",
            "off",
            "off",
            "changed",
            ""
        ]),
        "{out}"
    );
    // The rest are what the kernel turned off with it (tx-tcp-segmentation
    // takes its mangleid variant along), each "followed", requested "".
    for r in &rows[1..] {
        assert_eq!((&r[2], &r[4]), (&json!(""), &json!("followed")), "{out}");
        assert_eq!(r[5], format!("follows feature {feature} off"), "{out}");
    }
    let summary = &out["data"][1];
    let followed = rows.len() - 1;
    assert_eq!(
        summary["changed"],
        json!({"type": "u", "data": 1 + followed}),
        "{out}"
    );
    let mut statuses = json!({"changed": 1});
    if followed > 0 {
        statuses["followed"] = json!(followed);
    }
    assert_eq!(
        summary["statuses"],
        json!({"type": "a{su}", "data": statuses}),
        "{out}"
    );
    assert_eq!(
        summary["interface"],
        json!({"type": "s", "data": lab.a}),
        "{out}"
    );
    assert_eq!(
        summary["failed_step"],
        json!({"type": "s", "data": ""}),
        "{out}"
    );
    assert!(
        !lab.ethtool_k(&lab.a)[&feature].0,
        "ethtool still sees {feature} on"
    );
    assert_eq!(
        get("Features")["data"][&feature],
        json!([false, false, false])
    );
    // PropertiesChanged carried the typed Features.
    let mut changes = changes;
    let seen = lab.rig.rt.block_on(async {
        tokio::time::timeout(Duration::from_secs(5), async {
            while let Some(Ok(m)) = hlctl::dbus::wire::next(&mut changes).await {
                let Ok((_, changed, _)) =
                    m.body()
                        .deserialize::<(String, HashMap<String, OwnedVariant>, Vec<String>)>()
                else {
                    continue;
                };
                if let Some(v) = changed.get("Features") {
                    let f: HashMap<String, (bool, bool, bool)> =
                        v.try_clone().unwrap().try_into().unwrap();
                    return Some(f);
                }
            }
            None
        })
        .await
        .ok()
        .flatten()
    });
    let seen =
        seen.unwrap_or_else(|| panic!("no PropertiesChanged with Features\n{}", lab.daemon.log()));
    assert_eq!(seen[&feature], (false, false, false));
}

#[test]
fn a_python_client_reads_and_applies_typed_values() {
    assert!(
        std::path::Path::new(PYTHON).exists()
            && std::process::Command::new(PYTHON)
                .args(["-c", "import dbus"])
                .status()
                .is_ok_and(|s| s.success()),
        "{PYTHON} with the dbus module (Debian's python3-dbus, installed by scripts/setup.sh) is needed"
    );
    let lab = Lab::new(&[]);
    let feature = "tx-scatter-gather";
    let (on, fixed, _) = lab.ethtool_k(&lab.b)[feature];
    assert!(on && !fixed, "veth's {feature} should be on and changeable");
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/python/typed_client.py");
    let out = std::process::Command::new(PYTHON)
        .args([script, &lab.rig.address, &lab.b, feature])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}\ndaemon log:\n{}",
        common::output_text(&out),
        lab.daemon.log()
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["rings_signature"], "su", "{v}");
    assert_eq!(v["rings"], json!({}), "veth has no rings: {v}");
    assert_eq!(v["channels_signature"], "su", "{v}");
    assert_eq!(v["channel_value_types"], json!(["UInt32"]), "{v}");
    let (max, cur) = lab.ethtool_l(&lab.b);
    assert_eq!(v["channels"]["rx"], json!(cur["rx"]), "{v}");
    assert_eq!(v["channels"]["tx-max"], json!(max["tx"]), "{v}");
    assert_eq!(v["features_signature"], "s(bbb)", "{v}");
    assert_eq!(v["feature_value_types"], json!(["Boolean"]), "{v}");
    assert_eq!(v["features"][feature], json!([true, true, false]), "{v}");
    assert_eq!(v["pause_type"], "Struct", "{v}");
    assert_eq!(
        (v["speed"].clone(), v["speed_type"].clone()),
        (json!(10000), json!("UInt32"))
    );
    assert_eq!(v["duplex"], "full");
    assert_eq!(
        v["rows"][0],
        json!([
            format!("feature.{feature}"),
            "on",
            "off",
            "off",
            "changed",
            ""
        ]),
        "{v}"
    );
    // One requested change, and what the kernel changed with it.
    let followed = v["rows"].as_array().unwrap().len() - 1;
    assert_eq!(
        (v["changed"].clone(), v["changed_type"].clone()),
        (json!(1 + followed), json!("UInt32")),
        "{v}"
    );
    let mut want = json!({"changed": 1});
    if followed > 0 {
        want["followed"] = json!(followed);
    }
    assert_eq!(v["statuses"], want, "{v}");
    assert_eq!(v["after"], json!([false, false, false]), "{v}");
    // The client wrote the feature back on under the very key its reply's
    // row named (the key it read is the key it writes).
    assert_eq!(v["back_key"], format!("feature.{feature}"), "{v}");
    assert_eq!(
        v["back_rows"][0],
        json!([
            format!("feature.{feature}"),
            "off",
            "on",
            "on",
            "changed",
            ""
        ]),
        "{v}"
    );
    assert_eq!(v["back"], json!([true, true, false]), "{v}");
    assert!(
        lab.ethtool_k(&lab.b)[feature].0,
        "ethtool sees {feature} off after the client wrote it back on"
    );
}

/// The keys the XML documents: (member, section) → key → type, from the
/// `Keys:` and `Keys[SECTION]:` lists in the comment above each member.
fn documented() -> BTreeMap<(String, String), BTreeMap<String, String>> {
    let xml = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/dbus/org.hlctl.Daemon1.xml"
    ))
    .unwrap();
    let mut out = BTreeMap::new();
    let mut rest = xml.as_str();
    while let Some(i) = rest.find("<!--") {
        let end = rest[i..].find("-->").map(|j| i + j).unwrap();
        let comment = &rest[i + 4..end];
        rest = &rest[end + 3..];
        // The member the comment documents: the element right after it (the
        // file's header comment, before <node>, documents none).
        let next = rest.trim_start();
        if !["<method", "<property", "<signal"]
            .iter()
            .any(|e| next.starts_with(e))
        {
            continue;
        }
        let member = next.split('"').nth(1).unwrap_or_default().to_string();
        // A list runs from `Keys...:` to the next full stop.
        let flat = comment.split_whitespace().collect::<Vec<_>>().join(" ");
        let mut text = flat.as_str();
        while let Some(k) = text.find("Keys") {
            let after = &text[k + 4..];
            let (section, list) = match after.strip_prefix('[') {
                Some(s) => {
                    let (sec, tail) = s.split_once(']').unwrap();
                    (sec.to_string(), tail)
                }
                None => (String::new(), after),
            };
            let Some(list) = list.strip_prefix(':') else {
                text = after;
                continue;
            };
            let stop = list.find('.').unwrap_or(list.len());
            let keys: BTreeMap<String, String> = list[..stop]
                .split(',')
                .filter_map(|e| {
                    let mut w = e.split_whitespace();
                    Some((
                        w.next()?.trim_matches('`').to_string(),
                        w.next()?.to_string(),
                    ))
                })
                .collect();
            out.insert((member.clone(), section), keys);
            text = &list[stop..];
        }
    }
    out
}

/// Keys of a dictionary with the D-Bus type of each value.
fn produced(v: &OwnedVariant) -> BTreeMap<String, String> {
    let sig = v.value_signature().to_string();
    let v = v.try_clone().unwrap();
    let typed = |keys: Vec<String>, t: &str| keys.into_iter().map(|k| (k, t.to_string())).collect();
    match sig.as_str() {
        "a{sv}" => {
            let m: HashMap<String, OwnedVariant> = v.try_into().unwrap();
            m.into_iter()
                .map(|(k, x)| (k, x.value_signature().to_string()))
                .collect()
        }
        "a{su}" => typed(
            HashMap::<String, u32>::try_from(v)
                .unwrap()
                .into_keys()
                .collect(),
            "u",
        ),
        "a{st}" => typed(
            HashMap::<String, u64>::try_from(v)
                .unwrap()
                .into_keys()
                .collect(),
            "t",
        ),
        other => panic!("not a dictionary this test knows: {other}"),
    }
}

#[test]
fn every_documented_key_is_produced_and_none_undocumented() {
    let lab = Lab::new(&[]);
    let docs = documented();
    let mut seen: BTreeMap<(String, String), BTreeMap<String, String>> = BTreeMap::new();
    let mut add = |member: &str, section: &str, keys: BTreeMap<String, String>| {
        seen.entry((member.to_string(), section.to_string()))
            .or_default()
            .extend(keys);
    };
    // Every dictionary property of every link (both veth ends and lo). A
    // documented key a link lacks must be one its driver does not report:
    // null (or the whole group null) in the link's full model, `Describe()`.
    let mut unreported: BTreeMap<(String, String), usize> = BTreeMap::new();
    let links = [lab.a.as_str(), lab.b.as_str(), "lo"];
    for iface in links {
        let path = lab.link_path(iface);
        let described = lab.call(&path, LINK, "Describe", &());
        let model: Value =
            serde_json::from_str(&described.body().deserialize::<String>().unwrap()).unwrap();
        for (prop, group) in [
            ("Rings", "rings"),
            ("Channels", "channels"),
            ("Coalesce", "coalesce"),
            ("LinkModes", "link"),
            ("Counters", "counters"),
        ] {
            let keys = produced(&lab.prop(&path, LINK, prop));
            for k in docs[&(prop.to_string(), String::new())].keys() {
                if keys.contains_key(k) {
                    continue;
                }
                // The model's JSON field (snake case) of a bus key (registry
                // spelling: words joined by `-`).
                let field = match k.as_str() {
                    "speed" => "speed_mbps".to_string(),
                    "advertise" => "advertised_modes".to_string(),
                    "supported" | "partner" => format!("{k}_modes"),
                    other => other.replace('-', "_"),
                };
                let v = &model[group];
                assert!(
                    v.is_null() || v[&field].is_null(),
                    "{iface}: {prop} lacks documented key {k}, but the model has {group}.{field} = {}",
                    v[&field]
                );
                *unreported.entry((prop.to_string(), k.clone())).or_default() += 1;
            }
            add(prop, "", keys);
        }
    }
    // ApplyChanges' summary (a dry run changes nothing).
    let path = lab.link_path(&lab.a);
    let mut s: HashMap<&str, zbus::Variant<'_>> = HashMap::new();
    s.insert("mtu", zbus::Variant::U32(9000));
    let mut o: HashMap<&str, zbus::Variant<'_>> = HashMap::new();
    o.insert("dry_run", zbus::Variant::Bool(true));
    let r = lab.call(&path, LINK, "ApplyChanges", &(s, o));
    let (_, summary): (
        Vec<hlctl::dbus::wire::set_rows::Row>,
        HashMap<String, OwnedVariant>,
    ) = r.body().deserialize().unwrap();
    add(
        "ApplyChanges",
        "summary",
        produced(&OwnedVariant::from(summary)),
    );
    // SetSysctl's rows and summary (a dry run changes nothing), and
    // ShowSysctl's rows, against the kernel's own files.
    let mut o: HashMap<&str, zbus::Variant<'_>> = HashMap::new();
    o.insert("dry_run", zbus::Variant::Bool(true));
    let r = lab.call(
        "/org/hlctl/Daemon1",
        MANAGER,
        "SetSysctl",
        &(vec![("net.ipv4.tcp_sack", "1")], o),
    );
    let (rows, summary): (
        Vec<hlctl::dbus::wire::sysctl::SetRow>,
        HashMap<String, OwnedVariant>,
    ) = r.body().deserialize().unwrap();
    let in_ns = |key: &str| -> Option<String> {
        let file = format!("/proc/sys/{}", key.replace('.', "/"));
        let out = lab.ns.exec_raw(&["cat", &file]);
        out.status.success().then(|| {
            // hlctl shows a vector's fields separated by one space.
            let text = String::from_utf8_lossy(&out.stdout);
            text.split_whitespace().collect::<Vec<_>>().join(" ")
        })
    };
    let sack = in_ns("net.ipv4.tcp_sack").unwrap();
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(
        (rows[0].0.as_str(), rows[0].1.as_str(), rows[0].3.as_str()),
        ("net.ipv4.tcp_sack", sack.as_str(), ""),
        "a dry run reads before and leaves after empty"
    );
    assert!(bool::try_from(&summary["dry_run"]).unwrap());
    add(
        "SetSysctl",
        "summary",
        produced(&OwnedVariant::from(summary)),
    );
    // The tuning set (no keys), each row as the namespace's /proc/sys has it
    // (a global-only key is absent from a namespace: exists false, value "").
    let no_keys: Vec<&str> = Vec::new();
    let r = lab.call("/org/hlctl/Daemon1", MANAGER, "ShowSysctl", &(no_keys,));
    let shown: Vec<hlctl::dbus::wire::sysctl::ShowRow> = r.body().deserialize().unwrap();
    assert!(shown.len() >= 5, "{shown:?}");
    for (key, exists, value) in &shown {
        match in_ns(key) {
            Some(v) => assert_eq!((*exists, value.as_str()), (true, v.as_str()), "{key}"),
            None => assert_eq!((*exists, value.as_str()), (false, ""), "{key}"),
        }
    }
    // Job.Result of every benchmark kind, and of a job that failed.
    let server = common::lab::iperf3_server_in(&lab.ns, &lab.ns, "127.0.0.1");
    let mut net: HashMap<&str, zbus::Variant<'_>> = HashMap::new();
    net.insert("host", zbus::Variant::from("127.0.0.1"));
    net.insert("port", zbus::Variant::U16(server.port));
    net.insert("time_s", zbus::Variant::U32(1));
    let dir = lab.state.path().to_str().unwrap().to_string();
    let mut disk: HashMap<&str, zbus::Variant<'_>> = HashMap::new();
    disk.insert("dir", zbus::Variant::from(dir.as_str()));
    disk.insert("size", zbus::Variant::U64(4 << 20));
    disk.insert("runtime_s", zbus::Variant::F64(0.3));
    let mut cpu: HashMap<&str, zbus::Variant<'_>> = HashMap::new();
    cpu.insert("threads", zbus::Variant::U32(2));
    cpu.insert("time_s", zbus::Variant::F64(0.3));
    let mut stress: HashMap<&str, zbus::Variant<'_>> = HashMap::new();
    stress.insert("time_s", zbus::Variant::F64(0.5));
    stress.insert("cpu", zbus::Variant::U32(1));
    stress.insert("vm", zbus::Variant::U32(0));
    let mut file: HashMap<&str, zbus::Variant<'_>> = HashMap::new();
    file.insert("dir", zbus::Variant::from(dir.as_str()));
    file.insert("size", zbus::Variant::U64(1 << 20));
    file.insert("no_crypto", zbus::Variant::Bool(true));
    let mut failing: HashMap<&str, zbus::Variant<'_>> = HashMap::new();
    failing.insert("dir", zbus::Variant::from("/nonexistent-hlctl-typed/x"));
    for (kind, params, want) in [
        ("net", net, "succeeded"),
        ("disk", disk, "succeeded"),
        ("cpu", cpu, "succeeded"),
        ("stress", stress, "succeeded"),
        ("file", file, "succeeded"),
        ("disk", failing, "failed"),
    ] {
        let (state, result, json) = lab.benchmark(kind, params);
        assert_eq!(state, want, "{kind}: {json}\n{}", lab.daemon.log());
        let section = if state == "failed" {
            "failure".to_string()
        } else {
            format!("benchmark:{kind}")
        };
        // The typed figures are the report's own.
        match kind {
            "net" if state == "succeeded" => assert_eq!(
                f64::try_from(&result["bps"]).unwrap(),
                json["received_bps"].as_f64().unwrap()
            ),
            "cpu" => assert_eq!(
                f64::try_from(&result["events_per_second"]).unwrap(),
                json["events_per_second"].as_f64().unwrap()
            ),
            "disk" if state == "succeeded" => assert_eq!(
                f64::try_from(&result["latency_p99_us"]).unwrap(),
                json["latency_us"]["p99"].as_f64().unwrap()
            ),
            "file" => assert_eq!(
                f64::try_from(&result["write_bytes_per_second"]).unwrap(),
                json["file"]["write"]["bytes_per_second"].as_f64().unwrap()
            ),
            _ => {}
        }
        add("Result", &section, produced(&OwnedVariant::from(result)));
    }
    drop(server);
    // Job.Result of the doctor and of a report (CPU only: no peer, no dir).
    let mut doctor: HashMap<&str, zbus::Variant<'_>> = HashMap::new();
    doctor.insert("interfaces", zbus::Variant::from(vec![lab.a.as_str()]));
    let (state, result, json) = lab.manager_job("Doctor", doctor);
    assert_eq!(state, "succeeded", "doctor: {json}\n{}", lab.daemon.log());
    let findings: Vec<(String, String, String, String)> =
        result["findings"].try_clone().unwrap().try_into().unwrap();
    assert_eq!(findings.len(), json["findings"].as_array().unwrap().len());
    assert_eq!(
        u32::try_from(&result["passed"]).unwrap() as usize,
        json["passed"].as_array().unwrap().len()
    );
    add("Result", "doctor", produced(&OwnedVariant::from(result)));
    let mut report: HashMap<&str, zbus::Variant<'_>> = HashMap::new();
    report.insert("bench_time_s", zbus::Variant::U32(1));
    let (state, result, json) = lab.manager_job("Report", report);
    assert_eq!(state, "succeeded", "report: {json}\n{}", lab.daemon.log());
    let figures: Vec<(String, String, String, f64, String)> =
        result["figures"].try_clone().unwrap().try_into().unwrap();
    let cpu_figures: usize = json["cpu"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["figures"].as_array().map_or(0, Vec::len))
        .sum();
    assert!(cpu_figures > 0, "{json}");
    assert_eq!(figures.len(), cpu_figures);
    add("Result", "report", produced(&OwnedVariant::from(result)));

    // Nothing produced is undocumented, with the documented type.
    for ((member, section), keys) in &seen {
        let doc = docs
            .get(&(member.clone(), section.clone()))
            .unwrap_or_else(|| {
                panic!("{member} [{section}] produces {keys:?} but the XML lists no keys for it")
            });
        for (k, t) in keys {
            assert_eq!(
                doc.get(k),
                Some(t),
                "{member} [{section}]: key {k} ({t}) is not documented as such: {doc:?}"
            );
        }
    }
    // Every documented key is produced: by some link here, unless no driver
    // here reports it (checked against the model above: veth and lo have no
    // rings and no coalescing, ethtool says not supported) -- and the tune's
    // result, which needs a tune (dbus_tune runs those; the keys come from
    // one table, `dbus::wire::headline::KEYS`, unit-tested on a tune report).
    let mut skipped: Vec<String> = Vec::new();
    for ((member, section), keys) in &docs {
        if (member.as_str(), section.as_str()) == ("Result", "tune") {
            skipped.push("Result[tune]".into());
            continue;
        }
        let got = seen.get(&(member.clone(), section.clone()));
        for (k, t) in keys {
            if got.and_then(|g| g.get(k)).is_none()
                && unreported.get(&(member.clone(), k.clone())) == Some(&links.len())
            {
                skipped.push(format!("{member}.{k}"));
                continue;
            }
            assert_eq!(
                got.and_then(|g| g.get(k)),
                Some(t),
                "{member} [{section}]: documented key {k} ({t}) not produced; produced {got:?}"
            );
        }
    }
    assert!(seen.len() >= 9, "{seen:?}");
    println!(
        "documented keys checked against the daemon; not reported by any driver here: {skipped:?}"
    );
}

/// A bus of its own in the VM guest: anyone may talk, root owns the name
/// (no polkitd in the guest: hlctld allows root, as documented).
const GUEST_BUS_CONF: &str = r#"<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path=/run/hlbus</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_destination="*"/>
    <allow receive_sender="*"/>
  </policy>
</busconfig>
"#;

#[test]
fn busctl_reads_and_sets_the_rings_of_a_real_e1000e_through_hlctld() {
    let dir = tempfile::tempdir().unwrap();
    let conf = dir.path().join("hlbus.conf");
    std::fs::write(&conf, GUEST_BUS_CONF).unwrap();
    let script = r#"ip link set eth0 up
wait_carrier eth0
dbus-daemon --config-file=/etc/hlbus.conf --fork --print-pid >/tmp/bus.pid
hlctld --bus unix:path=/run/hlbus --state-dir /tmp/hlstate 2>/tmp/hlctld.log &
i=0
until busctl --address=unix:path=/run/hlbus status org.hlctl.Daemon1 >/dev/null 2>&1; do
    i=$((i + 1)); [ $i -gt 300 ] && break; sleep 0.1
done
B="busctl --address=unix:path=/run/hlbus --json=short"
L=$(busctl --address=unix:path=/run/hlbus call org.hlctl.Daemon1 /org/hlctl/Daemon1 org.hlctl.Daemon1.Manager GetLink s eth0 | cut -d'"' -f2)
section e-g ethtool -g eth0
section rings $B get-property org.hlctl.Daemon1 $L org.hlctl.Daemon1.Link Rings
section pause $B get-property org.hlctl.Daemon1 $L org.hlctl.Daemon1.Link Pause
section coalesce $B get-property org.hlctl.Daemon1 $L org.hlctl.Daemon1.Link Coalesce
section e-c ethtool -c eth0
section apply $B call org.hlctl.Daemon1 $L org.hlctl.Daemon1.Link ApplyChanges 'a{sv}a{sv}' 2 ring.rx u 4096 ring.tx u 1024 0
wait_carrier eth0
section rings-after $B get-property org.hlctl.Daemon1 $L org.hlctl.Daemon1.Link Rings
section e-g-after ethtool -g eth0
section text busctl --address=unix:path=/run/hlbus get-property org.hlctl.Daemon1 $L org.hlctl.Daemon1.Link Rings Pause
section log cat /tmp/hlctld.log
true
"#;
    let out = common::vm::Vm::builder()
        .binary("/usr/sbin/ethtool")
        .iproute2()
        .binary("/usr/bin/dbus-daemon")
        .binary("/usr/bin/busctl")
        .binary(env!("CARGO_BIN_EXE_hlctld"))
        .file(&conf, "/etc/hlbus.conf")
        .nic_e1000e()
        .script(script)
        .timeout(300)
        .run();
    eprintln!("VM boot to power-off: {:.1} s", out.elapsed.as_secs_f64());
    out.assert_success();
    let ok = |name: &str| {
        let s = out.section(name);
        assert_eq!(
            s.rc,
            0,
            "{name} failed in the guest:\n{}",
            out.guest_output()
        );
        serde_json::from_str::<Value>(&s.text)
            .unwrap_or_else(|e| panic!("{name}: not JSON ({e}):\n{}", out.guest_output()))
    };
    // (max rx, max tx, rx, tx) as ethtool -g prints them.
    let ethtool_g = |name: &str| -> [u64; 4] {
        let s = out.section(name);
        assert_eq!(s.rc, 0, "{}", out.guest_output());
        let (max, cur) = s.text.split_once("Current hardware settings:").unwrap();
        let n = |t: &str, k: &str| -> u64 {
            t.lines()
                .find_map(|l| l.trim().strip_prefix(k))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or_else(|| panic!("{k} in {t}"))
        };
        [n(max, "RX:"), n(max, "TX:"), n(cur, "RX:"), n(cur, "TX:")]
    };
    let rings = ok("rings");
    assert_eq!(rings["type"], "a{su}", "{rings}");
    let [rx_max, tx_max, rx, tx] = ethtool_g("e-g");
    assert_eq!(
        rings["data"],
        json!({"rx": rx, "tx": tx, "rx-max": rx_max, "tx-max": tx_max}),
        "Rings against ethtool -g"
    );
    assert!(rx_max >= 4096 && rx != 4096, "e1000e as recorded: {rings}");
    assert_eq!(
        ok("pause"),
        json!({"type": "(bbb)", "data": [true, true, true]})
    );
    let coalesce = ok("coalesce");
    assert_eq!(coalesce["type"], "a{sv}", "{coalesce}");
    let e_c = out.section("e-c").text;
    let rx_usecs: u64 = e_c
        .lines()
        .find_map(|l| l.trim().strip_prefix("rx-usecs:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("rx-usecs in {e_c}"));
    assert_eq!(
        coalesce["data"]["rx-usecs"],
        json!({"type": "u", "data": rx_usecs})
    );

    let apply = ok("apply");
    assert_eq!(apply["type"], "a(ssssss)a{sv}", "{apply}");
    assert_eq!(
        apply["data"][0],
        json!([
            ["ring.rx", rx.to_string(), "4096", "4096", "changed", ""],
            ["ring.tx", tx.to_string(), "1024", "1024", "changed", ""]
        ]),
        "{apply}"
    );
    assert_eq!(apply["data"][1]["changed"], json!({"type": "u", "data": 2}));
    let after = ok("rings-after");
    assert_eq!(after["data"]["rx"], 4096, "{after}");
    assert_eq!(after["data"]["tx"], 1024, "{after}");
    assert_eq!(ethtool_g("e-g-after")[2..], [4096, 1024]);
    eprintln!("{}", out.section("text").text);
}

/// The keys `Link.ApplyChanges` takes, as the XML's header lists them
/// (`ring.rx u`, `mtu u`, `feature.NAME b`, ...): key → D-Bus type.
fn write_keys() -> BTreeMap<String, String> {
    let xml = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/dbus/org.hlctl.Daemon1.xml"
    ))
    .unwrap();
    let start = xml.find("Link.ApplyChanges settings (a{sv})").unwrap();
    let block = &xml[start..];
    let block = &block[block.find('\n').unwrap()..block.find("Integer keys").unwrap()];
    // Without the remarks in parentheses.
    let (mut depth, mut text) = (0, String::new());
    for c in block.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            c if depth == 0 => text.push(c),
            _ => {}
        }
    }
    text.split(',')
        .filter_map(|e| {
            let mut w = e.split_whitespace();
            Some((
                w.next()?.to_string(),
                w.next()?.trim_end_matches('.').to_string(),
            ))
        })
        .collect()
}

/// A typed group property as `a{sv}` (an `a{su}` one's values as `u`).
fn as_dict(v: OwnedVariant) -> HashMap<String, OwnedVariant> {
    if v.value_signature() == "a{su}" {
        return HashMap::<String, u32>::try_from(v)
            .unwrap()
            .into_iter()
            .map(|(k, n)| (k, zbus::Variant::from(n).try_into_owned().unwrap()))
            .collect();
    }
    v.try_into().unwrap()
}

/// The keys of `LinkModes` that are not settings (what only the device has).
const DEVICE_ONLY: &[&str] = &[
    "port",
    "lanes",
    "supported",
    "partner",
    "capabilities",
    "detected",
];

#[test]
fn every_setting_read_from_a_typed_property_is_written_under_the_same_key() {
    let lab = Lab::new(&[]);
    let writes = write_keys();
    assert!(
        writes.get("coalesce.rx-usecs").map(String::as_str) == Some("u")
            && writes.contains_key("link.advertise")
            && writes.contains_key("feature.NAME"),
        "the XML's ApplyChanges keys as read here: {writes:?}"
    );
    let path = lab.link_path(&lab.a);
    // Ok, or the error: the driver's errno (a failed write is a reply
    // whose summary names it), or the bus error.
    let apply = |key: &str, v: &OwnedVariant| -> Result<(), String> {
        let mut s: HashMap<&str, zbus::Variant<'_>> = HashMap::new();
        s.insert(key, zbus::Variant::from(v.try_clone().unwrap()));
        let o: HashMap<&str, zbus::Variant<'_>> = HashMap::new();
        let r = lab
            .rig
            .rt
            .block_on(lab.rig.conn.call_method(
                Some(BUS_NAME),
                path.as_str(),
                Some(LINK),
                "ApplyChanges",
                &(s, o),
            ))
            .map_err(|e| e.to_string())?;
        let (_, summary): (
            Vec<hlctl::dbus::wire::set_rows::Row>,
            HashMap<String, OwnedVariant>,
        ) = r.body().deserialize().unwrap();
        match i32::try_from(&summary["errno"]).unwrap() {
            0 => Ok(()),
            errno => Err(format!(
                "errno {errno}: {}",
                <&str>::try_from(&summary["error"]).unwrap()
            )),
        }
    };
    let (mut written, mut refused) = (Vec::new(), Vec::new());
    for (group, prop) in [
        ("ring", "Rings"),
        ("channels", "Channels"),
        ("coalesce", "Coalesce"),
        ("link", "LinkModes"),
    ] {
        let read = as_dict(lab.prop(&path, LINK, prop));
        for (k, v) in &read {
            let setting = k.strip_suffix("-max").unwrap_or(k);
            if group == "link" && DEVICE_ONLY.contains(&setting) {
                continue;
            }
            // Every key read (and every maximum's) names a key written.
            let w = format!("{group}.{setting}");
            assert!(
                writes.contains_key(&w),
                "{prop}[{k}] is read, but ApplyChanges takes no {w}: {writes:?}"
            );
            if setting != k {
                continue;
            }
            assert_eq!(
                v.value_signature().to_string(),
                writes[&w],
                "{prop}[{k}] is read as another type than {w} is written"
            );
            // A value other than the one held where one is allowed: a count
            // below its maximum one up, a flag turned over.
            let max = read
                .get(&format!("{k}-max"))
                .map(|m| u32::try_from(m).unwrap());
            let want: OwnedVariant = match (u32::try_from(v), bool::try_from(v)) {
                (Ok(n), _) if max.is_some_and(|m| n < m) => zbus::Variant::from(n + 1),
                (_, Ok(b)) => zbus::Variant::from(!b),
                _ => zbus::Variant::from(v.try_clone().unwrap()),
            }
            .try_into_owned()
            .unwrap();
            // An empty list of modes (veth advertises none) is no value to
            // write: ApplyChanges asks for at least one mode.
            if <Vec<String>>::try_from(want.try_clone().unwrap()).is_ok_and(|m| m.is_empty()) {
                refused.push(format!("{w} (empty)"));
                continue;
            }
            match apply(&w, &want) {
                Ok(()) => {
                    let back = as_dict(lab.prop(&path, LINK, prop));
                    assert_eq!(
                        back.get(k.as_str()),
                        Some(&want),
                        "{w} written as {want:?}, {prop}[{k}] read back"
                    );
                    apply(&w, v).unwrap_or_else(|e| panic!("restoring {w}: {e}"));
                    written.push(w);
                }
                Err(e) => {
                    // EOPNOTSUPP: veth has no set_link_ksettings.
                    assert!(
                        e.contains("NotSupported") || e.starts_with("errno 95:"),
                        "{w} = {want:?}: {e}\n{}",
                        lab.daemon.log()
                    );
                    refused.push(w);
                }
            }
        }
    }
    // A feature: read by its kernel name, written as feature.NAME.
    let feature = feature_on_and_changeable(&lab, &lab.a);
    let off = zbus::Variant::from(false).try_into_owned().unwrap();
    apply(&format!("feature.{feature}"), &off).unwrap();
    let f: HashMap<String, (bool, bool, bool)> =
        lab.prop(&path, LINK, "Features").try_into().unwrap();
    assert!(
        !f[&feature].1,
        "feature.{feature} written off: {:?}",
        f[&feature]
    );
    // veth's channels take a change; its link settings (speed, duplex, ...)
    // are read only (the driver has no set_link_ksettings).
    for must in ["channels.rx", "channels.tx"] {
        assert!(
            written.iter().any(|w| w == must),
            "{must} not written: written {written:?}, refused {refused:?}"
        );
    }
    println!("written and read back under the same key: {written:?}; refused by veth: {refused:?}");
}
