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

use crate::common::vm::VmOutput;
use serde_json::Value;

/// One refused change set: `prefix` groups succeed, then `failing` is refused.
pub(crate) struct Case {
    pub(crate) name: &'static str,
    /// "E" for the e1000e NIC, "V" for the virtio_net one (shell variables).
    pub(crate) nic: &'static str,
    pub(crate) prefix: &'static [&'static str],
    pub(crate) failing: &'static str,
    pub(crate) group: &'static str,
    pub(crate) errno: i32,
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

macro_rules! at {
    ($name:literal, $nic:literal, $p:expr, $n:literal, $f:expr, $g:literal, $e:expr) => {
        Case {
            name: $name,
            nic: $nic,
            prefix: $p.split_at($n).0,
            failing: $f,
            group: $g,
            errno: $e,
        }
    };
}

pub(crate) const CASES: [Case; 15] = [
    at!(
        "rf-link-1",
        "E",
        E_PREFIX,
        0,
        FORCED_1000,
        "link",
        libc::EINVAL
    ),
    at!(
        "rf-link-2",
        "E",
        E_PREFIX,
        1,
        FORCED_1000,
        "link",
        libc::EINVAL
    ),
    at!(
        "rf-link-3",
        "E",
        E_PREFIX,
        2,
        FORCED_1000,
        "link",
        libc::EINVAL
    ),
    at!(
        "rf-link-4",
        "E",
        E_PREFIX,
        3,
        FORCED_1000,
        "link",
        libc::EINVAL
    ),
    at!(
        "rf-link-5",
        "E",
        E_PREFIX,
        4,
        FORCED_1000,
        "link",
        libc::EINVAL
    ),
    at!(
        "rf-link-6",
        "E",
        E_PREFIX,
        5,
        FORCED_1000,
        "link",
        libc::EINVAL
    ),
    at!(
        "rf-link-7",
        "E",
        E_PREFIX,
        6,
        FORCED_1000,
        "link",
        libc::EINVAL
    ),
    at!(
        "rf-coal-1",
        "E",
        E_PREFIX,
        0,
        "coalesce rx-usecs 5",
        "coalesce",
        libc::EINVAL
    ),
    at!(
        "rf-coal-2",
        "E",
        E_PREFIX,
        1,
        "coalesce rx-usecs 5",
        "coalesce",
        libc::EINVAL
    ),
    at!(
        "rf-coal-3",
        "E",
        E_PREFIX,
        2,
        "coalesce rx-usecs 5",
        "coalesce",
        libc::EINVAL
    ),
    at!(
        "rf-vbusy-1",
        "V",
        V_PREFIX,
        0,
        "coalesce tx-frames 0",
        "coalesce",
        libc::EBUSY
    ),
    at!(
        "rf-vbusy-2",
        "V",
        V_PREFIX,
        1,
        "coalesce tx-frames 0",
        "coalesce",
        libc::EBUSY
    ),
    at!(
        "rf-vbusy-3",
        "V",
        V_PREFIX,
        2,
        "coalesce tx-frames 0",
        "coalesce",
        libc::EBUSY
    ),
    at!(
        "rf-vinval-3",
        "V",
        V_PREFIX,
        2,
        "coalesce rx-frames 2",
        "coalesce",
        libc::EINVAL
    ),
    at!(
        "rf-vnosup-3",
        "V",
        V_PREFIX,
        2,
        "coalesce rx-usecs 10",
        "coalesce",
        libc::EOPNOTSUPP
    ),
];

/// The guest script: the helpers, then each case between two snapshots.
pub(crate) fn script() -> String {
    let mut s = String::from(
        r#"# ---- driver refusals half-way ----
E=eth0
V=$(for d in /sys/class/net/*; do [ "$(basename "$(readlink "$d/device/driver")")" = virtio_net ] && basename "$d"; done)
ip link set "$V" up
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
"#,
    );
    for c in &CASES {
        let words: Vec<&str> = c.prefix.iter().copied().chain([c.failing]).collect();
        s.push_str(&format!(
            "refuse {} \"${}\" {}\n",
            c.name,
            c.nic,
            words.join(" ")
        ));
    }
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
    let r = out.section(c.name);
    assert_eq!(r.rc, 1, "{}: exit code (class failed)\n{}", c.name, r.text);
    let j = out.json(c.name);
    let f = &j["failure"];
    assert_eq!(f["step"], c.group, "{}: {j}", c.name);
    assert_eq!(f["errno"], c.errno, "{}: {j}", c.name);
    let iface = j["interface"].as_str().expect("interface");
    let error = f["error"].as_str().expect("error text");
    assert!(
        error.contains(&format!(" on {iface}: ")),
        "{}: {error}",
        c.name
    );
    assert!(
        error.contains(&format!("(errno {})", c.errno)),
        "{}: {error}",
        c.name
    );
    // ethtool's core adds its own extended ack when a driver refuses link
    // modes (net/ethtool/linkmodes.c); the drivers here send none.
    let ack = (c.group == "link").then_some("link settings update failed");
    assert_eq!(f["extack"].as_str(), ack, "{}: {j}", c.name);
    if let Some(ack) = ack {
        assert!(error.ends_with(&format!(": {ack}")), "{}: {error}", c.name);
    }
    assert!(j["restore_errors"].is_null(), "{}: {j}", c.name);
    let before = statuses(c, &j);
    let (s0, s1) = (format!("{}-show0", c.name), format!("{}-show1", c.name));
    assert_eq!(
        settings(out, &s1),
        settings(out, &s0),
        "{}: show after vs before",
        c.name
    );
    let (e0, e1) = (format!("{}-eth0", c.name), format!("{}-eth1", c.name));
    assert_eq!(
        out.section(&e1).text,
        out.section(&e0).text,
        "{}: ethtool",
        c.name
    );
    format!(
        "| {iface} | {} | {} | {before} | {} | restored | {error} |",
        c.group,
        c.prefix.len() + 1,
        errno_name(c.errno),
    )
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
    let rows: Vec<String> = CASES.iter().map(|c| check(out, c)).collect();
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
