//! Issue 39 §4, "the driver refuses half-way": change sets whose N-th
//! kernel request a real driver refuses (e1000e and virtio_net in the same
//! guest), for every position the group can take in hlctl's safe order.
//! After each: `hlctl show` and ethtool/ip equal what they were before, and
//! the failure names the step, the interface, the errno and the kernel's
//! extended ack when it sent one.
//!
//! Debian 12's kernel (6.1) is built without CONFIG_NETDEVSIM, so the
//! refusals are the drivers' own:
//! - e1000e refuses a forced 1000/half (EINVAL, "Unsupported Speed/Duplex
//!   configuration" in dmesg, no extack) after setting `mac->autoneg = 0`:
//!   a refusal that half-applies;
//! - e1000e refuses rx-usecs 5 (between 4 and its minimum of 10: EINVAL);
//! - virtio_net refuses to change tx-frames (its NAPI weight) while the link
//!   is up (EBUSY), any rx-frames but 1 (EINVAL) and rx-usecs without
//!   VIRTIO_NET_F_NOTF_COAL, which qemu does not offer (EOPNOTSUPP).
//!
//! The drivers refuse only those groups. Every other group, at every
//! position, with EBUSY, EOPNOTSUPP, EINVAL and ERANGE, is refused by
//! `failnic` (tests/vm/failnic: a NIC built for the guest's kernel that
//! makes its N-th setting request fail with a chosen errno). A refused
//! feature request is answered with success by the kernel, which keeps the
//! features as they were: hlctl reads it back and fails that step (errno 0,
//! "the driver kept …").

use crate::common::vm::VmOutput;
use serde_json::Value;

/// One refused change set: `prefix` groups succeed, then `failing` is refused.
pub(crate) struct Case {
    pub(crate) name: String,
    /// "E" for the e1000e NIC, "V" for the virtio_net one, "F" for failnic
    /// (shell variables).
    pub(crate) nic: &'static str,
    pub(crate) prefix: Vec<&'static str>,
    pub(crate) failing: &'static str,
    pub(crate) group: &'static str,
    /// The errno the failure carries (0: read back, the kernel said success).
    pub(crate) errno: i32,
    /// failnic: the errno it is told to refuse with; its request count is
    /// armed at the failing position.
    pub(crate) armed: Option<i32>,
}

const E_PREFIX: [&str; 6] = [
    "txqueuelen 500",
    "feature gro on",
    "coalesce rx-usecs 30",
    "pause rx off tx off",
    "ring rx 512 tx 512",
    "mtu 1500",
];
const V_PREFIX: [&str; 2] = ["txqueuelen 500", "feature gro off"];
const FORCED_1000: &str = "link speed 1000 duplex half autoneg off";

/// A driver's refusal of `failing` after the first `before` groups of `prefix`.
fn at(
    name: String,
    nic: &'static str,
    prefix: &[&'static str],
    before: usize,
    (failing, group, errno): (&'static str, &'static str, i32),
) -> Case {
    Case {
        name,
        nic,
        prefix: prefix[..before].to_vec(),
        failing,
        group,
        errno,
        armed: None,
    }
}

/// The drivers' own refusals: e1000e's forced link at positions 1-7 and
/// its rx-usecs at 1-3; virtio_net's tx-frames at 1-3, and its other two
/// refusals at 3.
fn driver_cases() -> Vec<Case> {
    let link = (FORCED_1000, "link", libc::EINVAL);
    let e_coal = ("coalesce rx-usecs 5", "coalesce", libc::EINVAL);
    let v_busy = ("coalesce tx-frames 0", "coalesce", libc::EBUSY);
    let mut cases = Vec::new();
    for n in 0..=6 {
        cases.push(at(format!("rf-link-{}", n + 1), "E", &E_PREFIX, n, link));
    }
    for n in 0..=2 {
        cases.push(at(format!("rf-coal-{}", n + 1), "E", &E_PREFIX, n, e_coal));
    }
    for n in 0..=2 {
        cases.push(at(format!("rf-vbusy-{}", n + 1), "V", &V_PREFIX, n, v_busy));
    }
    let v_inval = ("coalesce rx-frames 2", "coalesce", libc::EINVAL);
    let v_nosup = ("coalesce rx-usecs 10", "coalesce", libc::EOPNOTSUPP);
    cases.push(at("rf-vinval-3".into(), "V", &V_PREFIX, 2, v_inval));
    cases.push(at("rf-vnosup-3".into(), "V", &V_PREFIX, 2, v_nosup));
    cases
}

/// failnic's groups in hlctl's safe order, each with a change from its
/// defaults (tests/vm/failnic/failnic.c).
const F_ORDER: [(&str, &str); 7] = [
    ("feature", "feature gro off"),
    ("coalesce", "coalesce rx-usecs 30"),
    ("pause", "pause rx off tx off"),
    ("channels", "channels combined 3"),
    ("ring", "ring rx 512 tx 512"),
    ("mtu", "mtu 1400"),
    ("link", "link speed 1000 duplex full autoneg off"),
];
const F_ERRNOS: [i32; 4] = [libc::EBUSY, libc::EOPNOTSUPP, libc::EINVAL, libc::ERANGE];

/// Every failnic group at every position it can take (after 0 to all of the
/// groups before it), the errnos taking turns: 28 rows.
fn failnic_cases() -> Vec<Case> {
    let mut cases = Vec::new();
    for (i, &(group, failing)) in F_ORDER.iter().enumerate() {
        for before in 0..=i {
            let errno = F_ERRNOS[cases.len() % F_ERRNOS.len()];
            cases.push(Case {
                name: format!("rf-f-{group}-{}", before + 1),
                nic: "F",
                prefix: F_ORDER[..before].iter().map(|&(_, w)| w).collect(),
                failing,
                group,
                errno: if group == "feature" { 0 } else { errno },
                armed: Some(errno),
            });
        }
    }
    cases
}

fn cases() -> Vec<Case> {
    let mut all = driver_cases();
    all.extend(failnic_cases());
    all
}

/// The guest script: the helpers, then each case between two snapshots.
pub(crate) fn script() -> String {
    let mut s = String::from(
        r#"# ---- driver refusals half-way ----
E=eth0
V=$(for d in /sys/class/net/*; do [ "$(basename "$(readlink "$d/device/driver")")" = virtio_net ] && basename "$d"; done)
ip link set "$V" up
section rf-insmod insmod /lib/failnic.ko
F=fail0
ip link set "$F" up
FP=/sys/module/failnic/parameters
settings_of() {
    ethtool -g "$1"; ethtool -c "$1"; ethtool -a "$1"; ethtool -l "$1"; ethtool -k "$1"
    # The link as configured (autonegotiation, advertised modes), not as
    # negotiated: a restored link may still be renegotiating.
    ethtool "$1" | awk '/Auto-negotiation:/ {print} /Advertised link modes:/ {f=1; print; next} /:/ {f=0} f'
    ip -o link show "$1" | grep -o 'mtu [0-9]*\|qlen [0-9]*'
    true
}
refuse() {
    _n=$1; _i=$2; shift 2
    wait_carrier "$_i" 20
    section "$_n-show0" hlctl show "$_i" --json
    section "$_n-eth0" settings_of "$_i"
    section "$_n" hlctl set "$_i" "$@" --json
    wait_carrier "$_i" 20
    section "$_n-show1" hlctl show "$_i" --json
    section "$_n-eth1" settings_of "$_i"
}
# failnic: the N-th setting request from now fails with errno E.
arm() { echo "$2" > $FP/fail_errno; echo "$1" > $FP/fail_in; }
# The count left (0: the armed request was made), then disarmed.
disarm() { section "$1-left" cat $FP/fail_in; echo 0 > $FP/fail_in; }
"#,
    );
    for c in &cases() {
        let words: Vec<&str> = c.prefix.iter().copied().chain([c.failing]).collect();
        if let Some(errno) = c.armed {
            s.push_str(&format!("arm {} {errno}\n", c.prefix.len() + 1));
        }
        s.push_str(&format!(
            "refuse {} \"${}\" {}\n",
            c.name,
            c.nic,
            words.join(" ")
        ));
        if c.armed.is_some() {
            s.push_str(&format!("disarm {}\n", c.name));
        }
    }
    s.push_str("ip link set \"$F\" down\nsection rf-rmmod rmmod failnic\n");
    s.push_str(&format!(
        "section rf-text hlctl set \"$E\" txqueuelen 500 {FORCED_1000}\nwait_carrier \"$E\" 20\n"
    ));
    s
}

/// The settings of `hlctl show --json`'s interface (no counters or state;
/// the link as configured, not the speed it is renegotiating).
fn settings(out: &VmOutput, section: &str) -> Value {
    let i = &out.json(section)["interfaces"][0];
    let link = &i["link"];
    serde_json::json!({
        "mtu": i["mtu"], "txqueuelen": i["txqueuelen"], "rings": i["rings"],
        "coalesce": i["coalesce"], "pause": i["pause"], "channels": i["channels"],
        "features": i["features"],
        "link": [&link["autoneg"], &link["advertised_modes"]],
    })
}

/// One row of the matrix, checked: restored, and the failure named.
fn check(out: &VmOutput, c: &Case) -> String {
    let name = c.name.as_str();
    let r = out.section(name);
    assert_eq!(r.rc, 1, "{name}: exit code (class failed)\n{}", r.text);
    let j = out.json(name);
    let f = &j["failure"];
    assert_eq!(f["step"], c.group, "{name}: {j}");
    assert_eq!(f["errno"], c.errno, "{name}: {j}");
    let iface = j["interface"].as_str().expect("interface");
    let error = f["error"].as_str().expect("error text");
    assert!(error.contains(&format!(" on {iface}: ")), "{name}: {error}");
    if c.errno != 0 {
        assert!(
            error.contains(&format!("(errno {})", c.errno)),
            "{name}: {error}"
        );
    }
    assert_eq!(f["extack"].as_str(), expected_ack(c), "{name}: {j}");
    if let Some(ack) = expected_ack(c) {
        assert!(
            error.ends_with(&format!(": {ack}")) || c.errno == 0,
            "{name}: {error}"
        );
        assert!(error.contains(ack), "{name}: {error}");
    }
    if c.armed.is_some() {
        // The armed request was the one refused: none were left to count.
        let left = out.section(&format!("{name}-left")).text;
        assert_eq!(left.trim(), "0", "{name}: requests left to count");
    }
    assert!(j["restore_errors"].is_null(), "{name}: {j}");
    let before = statuses(c, &j);
    let (s0, s1) = (format!("{name}-show0"), format!("{name}-show1"));
    assert_eq!(
        settings(out, &s1),
        settings(out, &s0),
        "{name}: show after vs before"
    );
    let (e0, e1) = (format!("{name}-eth0"), format!("{name}-eth1"));
    assert_eq!(
        out.section(&e1).text,
        out.section(&e0).text,
        "{name}: ethtool"
    );
    format!(
        "| {iface} | {} | {} | {before} | {} | restored | {error} |",
        c.group,
        c.prefix.len() + 1,
        errno_name(c.errno),
    )
}

/// The extended ack a refusal carries: ethtool's core adds its own when a
/// driver refuses link modes (net/ethtool/linkmodes.c); failnic sends one
/// where the kernel gives a driver the means (rings, coalescing); a refused
/// feature is hlctl's reading back; e1000e and virtio_net send none.
fn expected_ack(c: &Case) -> Option<&'static str> {
    match (c.group, c.armed.is_some()) {
        ("link", _) => Some("link settings update failed"),
        ("ring" | "coalesce", true) => Some("failnic: refused on purpose"),
        ("feature", true) => Some(
            "the driver kept rx-gro on (the kernel answers success and logs the driver's error: see dmesg)",
        ),
        _ => None,
    }
}

/// Each changing setting's status: the failing group's "not_applied", every
/// group before it "restored". Returns the groups applied before the failure.
fn statuses(c: &Case, j: &Value) -> String {
    let earlier: Vec<&str> = c
        .prefix
        .iter()
        .map(|p| p.split(' ').next().unwrap())
        .collect();
    let rows = j["settings"].as_array().expect("settings");
    // A setting that already held the requested value was not part of a step.
    for r in rows.iter().filter(|r| r["status"] != "unchanged") {
        let group = r["setting"].as_str().unwrap().split(' ').next().unwrap();
        let want = if group == c.group {
            "not_applied"
        } else {
            "restored"
        };
        assert!(
            group == c.group || earlier.contains(&group),
            "{}: {group} was not asked for: {j}",
            c.name
        );
        assert_eq!(r["status"], want, "{}: {r}", c.name);
    }
    if earlier.is_empty() {
        "-".into()
    } else {
        earlier.join(", ")
    }
}

fn errno_name(e: i32) -> &'static str {
    match e {
        0 => "none (read back)",
        libc::EINVAL => "EINVAL",
        libc::EBUSY => "EBUSY",
        libc::EOPNOTSUPP => "EOPNOTSUPP",
        libc::ERANGE => "ERANGE",
        _ => "other",
    }
}

/// Every case restored and named; the text form says where it failed. The
/// matrix is printed for the record.
pub(crate) fn assert_all(out: &VmOutput) {
    assert_eq!(out.section("rf-insmod").rc, 0, "failnic loads");
    assert_eq!(out.section("rf-rmmod").rc, 0, "failnic unloads");
    let all = cases();
    let rows: Vec<String> = all.iter().map(|c| check(out, c)).collect();
    let refused: std::collections::BTreeSet<(&str, usize)> = all
        .iter()
        .filter(|c| c.armed.is_some())
        .map(|c| (c.group, c.prefix.len() + 1))
        .collect();
    assert_eq!(refused.len(), 28, "every failnic group at every position");
    eprintln!(
        "| interface | refused group | position | applied before, restored | errno | show/ethtool after | message |"
    );
    eprintln!("|---|---|---|---|---|---|---|");
    for r in &rows {
        eprintln!("{r}");
    }
    let t = out.section("rf-text");
    assert_eq!(t.rc, 1, "{}", t.text);
    assert!(
        t.text.contains("eth0: FAILED at link: ") && t.text.contains("(errno 22)"),
        "{}",
        t.text
    );
}
