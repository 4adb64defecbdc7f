//! `hlctl tune` on the guest's multi-queue virtio NIC (issue 36 §4), run
//! last: the NIC set to 1 of its 2 combined channels, its queue vectors'
//! interrupts and hlctl itself on vCPU1 (a single-queue NIC's receive path
//! with the application on one core), against `iperf3 -s` on the tap's
//! host side (in the test's namespace). When the tune's baseline shows one
//! core doing the receive work (`core-one-does-the-work`), the `channels`
//! candidate (to 2) must be tried, measured and kept or reverted, RPS left
//! for the next tune, and `ethtool -l` must then show what the report says;
//! without the finding, no channels candidate and the channel left at 1.

use serde_json::Value;

use super::common::vm::VmOutput;
use super::{field, ok};

/// The host side of the virtio NIC's tap, and the peer's port there.
pub(crate) const PEER: &str = "10.216.0.1";
pub(crate) const PORT: u16 = 5201;

/// The sections printed to the log.
pub(crate) const SHOWN: &[&str] = &[
    "t-l0",
    "t-c",
    "t-irqs",
    "t-l1",
    "t-c1",
    "t-irqs1",
    "t-seconds",
];

/// The guest script: after every other phase (it leaves the NIC changed).
pub(crate) fn script() -> String {
    format!(
        r#"# ---- tune: channels on a NIC whose one core does the receive work ----
t_prep() {{
  ip addr add 10.216.0.2/24 dev eth1 && ethtool -L eth1 combined 1 || return 1
  wait_carrier eth1 20 || return 1
  for n in $(v_irqs | awk '$2 ~ /put\.0$/ {{ print $1 }}'); do
    echo 1 > /proc/irq/$n/smp_affinity_list || return 1
  done
}}
section t-prep t_prep
section t-l0 ethtool -l eth1
section t-c ethtool -c eth1
section t-irqs v_irqs
T0=$(cut -d' ' -f1 /proc/uptime)
section t-tune taskset 2 hlctl --state-dir /tmp/t --sysctl-dir /tmp/td tune eth1 --peer {PEER}:{PORT} --yes --runs 2 --time 2 --no-mtu --json
section t-seconds echo "$T0 $(cut -d' ' -f1 /proc/uptime)"
section t-l1 ethtool -l eth1
section t-c1 ethtool -c eth1
section t-irqs1 v_irqs
section t-state cat /tmp/t/nic-settings.json
"#
    )
}

/// (max combined, current combined) from `ethtool -l`.
fn combined(text: &str) -> (u64, u64) {
    let (max, cur) = text
        .split_once("Current hardware settings:")
        .unwrap_or_else(|| panic!("ethtool -l output:\n{text}"));
    let n = |t: &str| {
        field(t, "Combined:")
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("Combined: in {t}"))
    };
    (n(max), n(cur))
}

fn items<'a>(r: &'a Value, key: &str) -> &'a [Value] {
    r[key].as_array().map_or(&[], Vec::as_slice)
}

/// The download's `core-one-does-the-work` finding of the tune's baseline.
fn receive_hot_core(r: &Value) -> Option<&Value> {
    items(r, "findings").iter().find(|f| {
        f["id"] == "core-one-does-the-work"
            && items(f, "evidence")
                .iter()
                .any(|e| e["name"] == "direction" && e["value"] == "download")
    })
}

pub(crate) fn check(out: &VmOutput) {
    ok(out, "t-prep");
    assert_eq!(combined(&ok(out, "t-l0")), (2, 1));
    let tune = out.section("t-tune");
    assert_eq!(tune.rc, 0, "tune failed:\n{}", out.guest_output());
    let r = out.json("t-tune");
    assert_eq!(r["outcome"], "done", "{r}");
    let seconds: Vec<f64> = ok(out, "t-seconds")
        .split_whitespace()
        .map(|s| s.parse().unwrap())
        .collect();
    eprintln!(
        "tune phase: {:.1} s; findings {}\nplan notes {}\nsteps {}",
        seconds[1] - seconds[0],
        serde_json::to_string_pretty(&r["findings"]).unwrap(),
        serde_json::to_string_pretty(&r["plan_notes"]).unwrap(),
        serde_json::to_string_pretty(&r["steps"]).unwrap()
    );
    let plan: Vec<&str> = items(&r, "plan")
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    let now = combined(&ok(out, "t-l1"));
    affinity_as_reported(out, &r);
    let Some(hot) = receive_hot_core(&r) else {
        eprintln!("no core-one-does-the-work finding in the baseline: channels not tried");
        assert!(!plan.contains(&"channels"), "{plan:?}");
        assert_eq!(now, (2, 1), "no candidate, the channel stays as it was");
        return;
    };
    assert!(
        items(hot, "fix")
            .iter()
            .any(|f| f == "hlctl set eth1 channels combined 2"),
        "{hot}"
    );
    assert!(
        plan.contains(&"channels") && !plan.contains(&"rps"),
        "{plan:?}"
    );
    assert!(
        items(&r, "plan_notes").iter().any(|n| n
            .as_str()
            .unwrap()
            .starts_with("RPS: not tried in this tune")),
        "{}",
        r["plan_notes"]
    );
    let step = items(&r, "steps")
        .iter()
        .find(|s| s["candidate"] == "channels")
        .expect("a channels step");
    let kept = match step["status"].as_str() {
        Some("kept") => true,
        Some("reverted") => false,
        other => panic!("channels neither kept nor reverted ({other:?}): {step}"),
    };
    assert!(step["runs"].as_u64() >= Some(1), "{step}");
    assert!(!items(step, "deltas").is_empty(), "measured: {step}");
    let row = &items(step, "settings")[0];
    assert_eq!(
        (&row["setting"], &row["before"], &row["tried"]),
        (&"channels combined".into(), &"1".into(), &"2".into()),
        "{step}"
    );
    let reported = if kept { 2 } else { 1 };
    assert_eq!(
        now,
        (2, reported),
        "ethtool -l after a {} channels step",
        step["status"]
    );
    let kept_channels = &r["kept"]["nic"]["channels"]["combined"];
    assert_eq!(kept_channels.as_u64(), kept.then_some(2), "{}", r["kept"]);
    if kept {
        let state: Value = serde_json::from_str(&ok(out, "t-state")).expect("nic-settings.json");
        assert!(holds_channels(&state, 2), "persisted: {state}");
    }
    coalescing_as_reported(out, &r, &plan);
}

/// The queue vectors' interrupts all on vCPU1 during the baseline (pair 0
/// pinned there, pair 1 idle at 1 channel): the `irq-affinity` candidate
/// spreads them queue by queue (`0/0/1/1`), measured and kept or reverted;
/// the guest's smp_affinity_list afterwards is what the report says.
fn affinity_as_reported(out: &VmOutput, r: &Value) {
    let lists = |section: &str| -> String {
        ok(out, section)
            .lines()
            .filter(|l| l.contains("put."))
            .map(|l| l.split_whitespace().nth(2).unwrap().to_string())
            .collect::<Vec<_>>()
            .join("/")
    };
    let before = lists("t-irqs");
    let after = lists("t-irqs1");
    let Some(step) = items(r, "steps")
        .iter()
        .find(|s| s["candidate"] == "irq-affinity")
    else {
        assert!(
            !items(r, "findings")
                .iter()
                .any(|f| f["id"] == "irqs-on-one-cpu"),
            "the finding without the candidate: {}",
            r["plan_notes"]
        );
        assert_eq!(after, before);
        return;
    };
    let row = &items(step, "settings")[0];
    assert_eq!(row["setting"], "irq-affinity cpus", "{step}");
    assert_eq!(row["tried"], "0/0/1/1", "{step}");
    // A channels step before it changes the channels and back: virtio_net
    // lays the vectors' affinity out again each time (pair 0 back to all
    // CPUs), so the affinity the step found is the driver's, not t-irqs'.
    let channels_first = items(r, "steps")
        .iter()
        .any(|s| s["candidate"] == "channels");
    if !channels_first {
        assert_eq!(row["before"], before.as_str(), "{step}");
    }
    let want = match step["status"].as_str() {
        Some("kept") => "0/0/1/1".to_string(),
        Some("reverted") => row["before"].as_str().unwrap().to_string(),
        other => panic!("irq-affinity neither kept nor reverted ({other:?}): {step}"),
    };
    assert_eq!(after, want, "{step}");
}

/// Whether some object in `v` holds `"channels": {"combined": n}`.
fn holds_channels(v: &Value, n: u64) -> bool {
    match v {
        Value::Object(m) => {
            m.get("channels")
                .is_some_and(|c| c["combined"].as_u64() == Some(n))
                || m.values().any(|x| holds_channels(x, n))
        }
        Value::Array(a) => a.iter().any(|x| holds_channels(x, n)),
        _ => false,
    }
}

/// The coalescing step, when planned: refused by the driver (virtio_net of
/// Debian 12's kernel reports rx-usecs 0 but refuses to set it without the
/// host's notification-coalescing feature) or measured; `ethtool -c` then
/// shows rx-usecs as the report says.
fn coalescing_as_reported(out: &VmOutput, r: &Value, plan: &[&str]) {
    let before = field(&ok(out, "t-c"), "rx-usecs:").map(str::to_string);
    let after = field(&ok(out, "t-c1"), "rx-usecs:").map(str::to_string);
    if !plan.contains(&"coalescing") {
        assert_eq!(after, before);
        return;
    }
    let step = items(r, "steps")
        .iter()
        .find(|s| s["candidate"] == "coalescing")
        .expect("a coalescing step");
    let want = match step["status"].as_str() {
        Some("failed") => {
            let why = step["reason"].as_str().unwrap();
            assert!(why.starts_with("the kernel refused it"), "{step}");
            before
        }
        Some("reverted") => before,
        Some("kept") => items(step, "settings")
            .iter()
            .find(|row| row["setting"] == "coalesce rx-usecs")
            .map(|row| row["tried"].as_str().unwrap().to_string())
            .or(before),
        other => panic!("coalescing not tried ({other:?}): {step}"),
    };
    assert_eq!(after, want, "{step}");
}
