//! Bridge stacks for real, in network namespaces: `here` holds bridge `vmbr0`
//! whose port is a veth to the peer namespace (a Proxmox host in small).
//! `show` and `doctor` by the upper and by the port's name find the same
//! stack; offloads planted off on the port are found and fixed; MTU 9000 is
//! tuned on the bridge and its port as one change, kept when the peer
//! carries it (and rolled back as one), reverted as one when it does not.
//! (Bonds need the bonding driver, which this kernel lacks: see vm_stacks.rs.)

mod common;

use common::lab::{Lab, step};
use common::report::{finding, finding_ids, passed, sorted_strings, step_settings};
use serde_json::Value;

#[test]
fn the_stack_is_found_from_the_upper_and_from_the_port() {
    let _serial = common::lab::serial();
    let lab = Lab::new();
    let br = lab.bridge();
    let port = lab.a.as_str();

    // show: the stack in JSON, the same from both names; the text names the roles.
    let by_upper = lab.json(&["show", br]);
    let by_port = lab.json(&["show", port]);
    let st = &by_upper["interfaces"][0]["stack"];
    assert_eq!(st["top"], br, "{st}");
    assert_eq!(st, &by_port["interfaces"][0]["stack"]);
    let names: Vec<&Value> = st["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| &m["name"])
        .collect();
    assert_eq!(names, [br, port]);
    assert_eq!(st["members"][1]["master"], br);
    assert_eq!(st["members"][1]["port_state"], "forwarding");
    let text = String::from_utf8_lossy(&lab.hlctl(&["show", port]).stdout).into_owned();
    assert!(
        text.contains(&format!("stack     {port}: port of {br} (forwarding)")),
        "{text}"
    );
    assert!(
        text.contains(&format!("{br}: bridge, ports {port}")),
        "{text}"
    );

    // doctor by either name examines both devices and reports the same stack.
    lab.here.exec(&[
        "ethtool", "-K", port, "gso", "off", "tso", "off", "sg", "off",
    ]);
    let d_upper = lab.json(&["doctor", br, "--stress", "0"]);
    let d_port = lab.json(&["doctor", port, "--stress", "0"]);
    for d in [&d_upper, &d_port] {
        let mut want = vec![br, port];
        want.sort();
        assert_eq!(sorted_strings(&d["interfaces"]), want, "{d}");
        assert_eq!(d["stacks"].as_array().unwrap().len(), 1);
        // The planted offloads are found on the port.
        let off = finding(d, "offload-off")
            .unwrap_or_else(|| panic!("no offload-off in {:?}", finding_ids(d)));
        assert_eq!(off["interface"], port, "{off}");
        assert!(passed(d, "stack-mtu"), "{d}");
    }
    assert_eq!(d_upper["stacks"], d_port["stacks"]);

    // An MTU that differs inside the stack is a finding on the stack.
    lab.here.ip(&["link", "set", br, "mtu", "1400"]);
    let d = lab.json(&["doctor", port, "--stress", "0"]);
    assert!(
        finding(&d, "stack-mtu-mismatch").is_some(),
        "{:?}",
        finding_ids(&d)
    );
}

#[test]
fn offloads_planted_off_on_the_port_are_fixed_by_tuning_the_bridge() {
    let _serial = common::lab::serial();
    let lab = Lab::new();
    let br = lab.bridge();
    lab.here.exec(&[
        "ethtool", "-K", &lab.a, "gso", "off", "tso", "off", "sg", "off",
    ]);
    let srv = lab.iperf3_server();
    let peer = lab.peer_arg(&srv);
    let r = lab.tune_until_kept(
        &[
            "tune", br, "--peer", &peer, "--yes", "--runs", "3", "--time", "1", "--no-mtu",
        ],
        "offloads-on",
        |s| {
            assert!(
                !lab.feature_on("tx-generic-segmentation"),
                "not reverted: {s}"
            )
        },
    );
    let s = step(&r, "offloads-on");
    assert_eq!(s["status"], "kept", "{s}");
    // The change was made on the port, named as such in the report.
    let settings = step_settings(s);
    assert!(
        settings.contains(&format!("{}: feature tx-generic-segmentation", lab.a).as_str()),
        "{settings:?}"
    );
    assert!(lab.feature_on("tx-generic-segmentation") && lab.feature_on("tx-tcp-segmentation"));
    assert_eq!(
        r["kept"]["stack"][&lab.a]["features"]["tx-generic-segmentation"],
        true
    );
}

#[test]
fn mtu_9000_on_the_whole_stack_kept_when_the_peer_carries_it_and_reverted_as_one_when_not() {
    let _serial = common::lab::serial();
    let lab = Lab::new();
    let br = lab.bridge();
    let port = lab.a.clone();
    let srv = lab.iperf3_server();
    let peer = lab.peer_arg(&srv);

    // The peer carries only 1500: the probe fails, bridge and port go back together.
    let r = lab.json(&[
        "tune", br, "--peer", &peer, "--yes", "--runs", "2", "--time", "1",
    ]);
    let s = step(&r, "mtu-jumbo");
    assert_eq!(s["status"], "reverted", "{s}");
    assert!(
        s["reason"]
            .as_str()
            .unwrap()
            .contains("does not reach the peer"),
        "{s}"
    );
    assert_eq!(step_settings(s), ["mtu", &format!("{port}: mtu")], "{s}");
    assert_eq!((lab.mtu_of(br), lab.mtu_of(&port)), (1500, 1500));

    // The peer carries 9000 and segments in software (its offloads off), so
    // the larger segments show in the download: kept on both devices.
    lab.peer.ip(&["link", "set", &lab.b, "mtu", "9000"]);
    lab.peer.exec(&[
        "ethtool", "-K", &lab.b, "gso", "off", "tso", "off", "sg", "off",
    ]);
    let r = lab.tune_until_kept(
        &[
            "tune", &port, "--peer", &peer, "--yes", "--runs", "3", "--time", "1",
        ],
        "mtu-jumbo",
        |s| assert_eq!((lab.mtu_of(br), lab.mtu_of(&port)), (1500, 1500), "{s}"),
    );
    let s = step(&r, "mtu-jumbo");
    assert_eq!(s["status"], "kept", "{s}");
    assert_eq!((lab.mtu_of(br), lab.mtu_of(&port)), (9000, 9000));
    // Persisted for both, and `hlctl rollback` restores both as one.
    let state: Value = serde_json::from_str(
        &std::fs::read_to_string(lab.state_dir().join("nic-settings.json")).unwrap(),
    )
    .unwrap();
    let mtus: Vec<(String, u64)> = state["interfaces"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| {
            Some((
                e["name"].as_str()?.to_string(),
                e["settings"]["mtu"].as_u64()?,
            ))
        })
        .collect();
    assert!(
        mtus.contains(&(br.to_string(), 9000)) && mtus.contains(&(port.clone(), 9000)),
        "{state}"
    );
    let rb = lab.json(&["rollback", &port]);
    assert_eq!(rb["undone"].as_array().unwrap().len(), 1, "{rb}");
    assert_eq!((lab.mtu_of(br), lab.mtu_of(&port)), (1500, 1500));
    let state: Value = serde_json::from_str(
        &std::fs::read_to_string(lab.state_dir().join("nic-settings.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(state["interfaces"].as_array().unwrap().len(), 0, "{state}");
}
