//! `hlctl show`'s queue layout on a real veth in a namespace the test
//! creates: RPS set on the veth's rx-0 through that namespace's own sysfs
//! (`ip netns exec` mounts it in a private mount namespace), then `show
//! --json` and the text must both report what sysfs reads back.

mod common;

use common::lab::NsLab as Lab;

/// A file of the namespace's sysfs as `cat` reads it there; `None` when it
/// cannot be read (XPS on a single-queue device).
fn sysfs(lab: &Lab, file: &str) -> Option<String> {
    let o = lab.ns.exec_raw(&["cat", file]);
    o.status
        .success()
        .then(|| String::from_utf8_lossy(&o.stdout).trim().to_string())
}

/// A sysfs CPU mask (`00000000,00000001`) as the CPUs it holds.
fn cpus_of(mask: &str) -> Vec<usize> {
    let digits: Vec<u32> = mask
        .chars()
        .filter(|c| *c != ',')
        .map(|c| c.to_digit(16).expect("hex"))
        .collect();
    let mut v = Vec::new();
    for (k, d) in digits.iter().rev().enumerate() {
        for b in 0..4 {
            if d >> b & 1 == 1 {
                v.push(k * 4 + b);
            }
        }
    }
    v
}

#[test]
fn show_reports_the_rps_cpus_and_flow_count_sysfs_reads_back() {
    let lab = Lab::new();
    let q = format!("/sys/class/net/{}/queues", lab.a);
    let before = sysfs(&lab, &format!("{q}/rx-0/rps_cpus")).expect("rps_cpus");
    // CPU 0 is always there; a default veth steers nowhere (mask 0).
    let set = format!("echo 1 > {q}/rx-0/rps_cpus && echo 64 > {q}/rx-0/rps_flow_cnt");
    lab.ns.exec(&["sh", "-c", &set]);
    let rps = sysfs(&lab, &format!("{q}/rx-0/rps_cpus")).expect("rps_cpus");
    let cnt = sysfs(&lab, &format!("{q}/rx-0/rps_flow_cnt")).expect("rps_flow_cnt");
    assert_ne!(rps, before, "writing rps_cpus changed nothing");
    assert_eq!(cpus_of(&rps), vec![0], "{rps}");

    // JSON: sysfs' own text.
    let show = lab.show(&lab.a);
    let queues = &show["queues"];
    assert_eq!(queues["rx"][0]["index"], 0, "{queues}");
    assert_eq!(queues["rx"][0]["rps_cpus"], rps.as_str(), "{queues}");
    assert_eq!(
        queues["rx"][0]["rps_flow_cnt"]
            .as_u64()
            .map(|c| c.to_string()),
        Some(cnt.clone()),
        "{queues}"
    );
    let xps = sysfs(&lab, &format!("{q}/tx-0/xps_cpus"));
    assert_eq!(
        queues["tx"][0]["xps_cpus"].as_str(),
        xps.as_deref(),
        "{queues}"
    );
    // veth has no IRQs, and no RSS (RSS_GET: EOPNOTSUPP, like `ethtool -x`).
    assert_eq!(
        queues["vectors"].as_array().map(Vec::len),
        Some(0),
        "{queues}"
    );
    assert!(queues["rss"].is_null(), "{queues}");

    // Text: the same queue as a CPU list, and the one on the peer end
    // untouched, so the line cannot come from anywhere but rx-0's files.
    let out = lab.hlctl(&["show", &lab.a]);
    assert!(out.status.success(), "{}", common::output_text(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    let list: Vec<String> = cpus_of(&rps).iter().map(usize::to_string).collect();
    let want = format!("  rps       rx-0 cpus {} (flow cnt {cnt})", list.join(","));
    assert!(
        text.lines().any(|l| l.starts_with(&want)),
        "{want:?} in\n{text}"
    );
    assert!(text.contains("\n  irqs      none\n"), "{text}");
    assert!(
        text.contains("\n  rss       not supported by driver"),
        "{text}"
    );
    let peer = lab.hlctl(&["show", &lab.b]);
    let peer = String::from_utf8_lossy(&peer.stdout);
    assert!(
        peer.contains("  rps       rx-0 cpus - (flow cnt 0)"),
        "{peer}"
    );
}
