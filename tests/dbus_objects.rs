//! The bus as a client other than hlctl sees it: a Python client written
//! against the published XML only, with GLib's Gio.DBusObjectManagerClient
//! (tests/python/objects_client.py), watches hlctld's ObjectManager on a
//! private system bus with the real polkitd. It must find every link of the
//! namespace with typed properties equal to what the kernel says, see a
//! veth pair come and go (InterfacesAdded/InterfacesRemoved), and follow a
//! benchmark job it starts from its appearance (StartedByUID, Objects
//! naming the link, Progress rising) to its removal after the linger time.

mod common;

use common::bus::DaemonLab as Lab;
use serde_json::{Value, json};

const PYTHON: &str = "/usr/bin/python3";

fn kernel_link(lab: &Lab, iface: &str) -> Value {
    let out = lab.ns.exec(&["ip", "-j", "link", "show", "dev", iface]);
    serde_json::from_slice::<Value>(&out.stdout).unwrap()[0].clone()
}

#[test]
fn a_gio_object_manager_client_sees_links_and_jobs_come_and_go() {
    assert!(
        std::process::Command::new(PYTHON)
            .args(["-c", "from gi.repository import Gio"])
            .status()
            .is_ok_and(|s| s.success()),
        "{PYTHON} with gi (Debian's python3-gi, installed by scripts/setup.sh) is needed"
    );
    let lab = Lab::new(&["--job-linger", "1"]);
    let (new_a, new_b) = (common::unique("oa"), common::unique("ob"));
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/python/objects_client.py"
    );
    let out = std::process::Command::new(PYTHON)
        .args([
            script,
            &lab.rig.address,
            &lab.ns.name,
            &new_a,
            &new_b,
            &lab.a,
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}\ndaemon log:\n{}",
        common::output_text(&out),
        lab.daemon.log()
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();

    for iface in [&lab.a, &lab.b] {
        let k = kernel_link(&lab, iface);
        let l = &v["links"][iface.as_str()];
        assert_eq!(l["Mtu"], json!(["u", k["mtu"]]), "{iface}: {v}");
        assert_eq!(l["Mac"], json!(["s", k["address"]]), "{iface}: {v}");
        assert_eq!(l["Ifindex"], json!(["u", k["ifindex"]]), "{iface}: {v}");
        assert_eq!(l["Features"], "a{s(bbb)}", "{iface}: {v}");
    }
    assert_eq!(
        v["saw_added"], true,
        "no InterfacesAdded for {new_a}/{new_b}: {v}"
    );
    assert_eq!(
        v["saw_removed"], true,
        "no InterfacesRemoved for {new_a}/{new_b}: {v}"
    );

    assert_eq!(
        v["job_interfaces"][0]
            .as_array()
            .map(|a| a.iter().any(|i| i == "org.hlctl.Daemon1.Job")),
        Some(true),
        "{v}"
    );
    assert_eq!(v["StartedByUID"], json!(["u", 0]), "{v}");
    let link_path = &v["links"][lab.a.as_str()]["path"];
    assert_eq!(v["Objects"], json!(["ao", [link_path]]), "{v}");
    assert_eq!(v["Cancelable"], json!(["b", true]), "{v}");
    assert_eq!(v["ProgressValid"], json!(["b", true]), "{v}");
    let progress: Vec<f64> = v["progress"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_f64)
        .collect();
    assert!(
        progress.len() >= 2 && progress.last() > progress.first(),
        "Progress did not rise: {progress:?}"
    );
    assert_eq!(v["job_removed"], true, "the job object stayed: {v}");
}
