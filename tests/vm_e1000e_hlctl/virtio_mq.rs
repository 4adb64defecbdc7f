//! The multi-queue virtio NIC of `vm_e1000e_hlctl`'s guest (2 queue pairs,
//! 2 vCPUs under multi-threaded TCG): what `hlctl show` and `hlctl set`
//! say of its queues and interrupts, against `ethtool -l`, /proc/interrupts,
//! /proc/irq/N/ and the queues' sysfs in the same guest.

use serde_json::Value;

use super::common::vm::VmOutput;
use super::{field, ok};

/// The sections printed to the log (the figures of the run).
pub(crate) const SHOWN: &[&str] = &[
    "v-nproc",
    "v-l",
    "v-x",
    "v-irqs",
    "v-queues",
    "v-show-text",
    "v-spread-irqs",
    "v-spread-queues",
    "v-ch1-l",
    "v-ch1-queues",
    "v-ch2-l",
    "v-ch2-queues",
    "v-ch2-irqs",
    "v-ch2-rpsxps",
    "v-aff-bad",
    "v-aff-irqs",
    "v-aff-queues",
    "e-l",
    "e-irqs",
];

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

fn queues(out: &VmOutput, section: &str) -> Value {
    ok(out, section);
    out.json(section)["interfaces"][0]["queues"].clone()
}

/// (irq, name, smp_affinity_list, effective_affinity_list) of the queue
/// vectors (input.N / output.N; not the config vector), as hlctl shows them.
fn shown_vectors(q: &Value) -> Vec<(String, String, String, String)> {
    q["vectors"]
        .as_array()
        .expect("vectors")
        .iter()
        .map(|v| {
            let s = |k: &str| v[k].as_str().unwrap_or("-").to_string();
            (
                v["irq"].to_string(),
                s("name"),
                s("smp_affinity_list"),
                s("effective_affinity_list"),
            )
        })
        .collect()
}

/// The same, as the guest read /proc/interrupts and /proc/irq/N/.
fn guest_vectors(text: &str) -> Vec<(String, String, String, String)> {
    text.lines()
        .filter(|l| l.contains("put."))
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            assert_eq!(f.len(), 4, "{l}");
            (f[0].into(), f[1].into(), f[2].into(), f[3].into())
        })
        .collect()
}

/// hlctl's vectors (`show` section `shown`) against the guest's reads just
/// before and just after it: the same IRQs, names and affinity lists, and
/// each effective CPU as one of the two reads saw it (x86 moves an MSI
/// lazily, at its next interrupt, which may fall between two reads).
fn vectors_agree(out: &VmOutput, q: &Value, before: &str, after: &str) {
    let shown = shown_vectors(q);
    let (b, a) = (
        guest_vectors(&ok(out, before)),
        guest_vectors(&ok(out, after)),
    );
    let fixed = |v: &[(String, String, String, String)]| -> Vec<(String, String, String)> {
        v.iter()
            .map(|(n, name, list, _)| (n.clone(), name.clone(), list.clone()))
            .collect()
    };
    assert_eq!(fixed(&shown), fixed(&a), "{q}");
    assert_eq!(fixed(&b), fixed(&a), "{before} / {after}");
    for (i, s) in shown.iter().enumerate() {
        assert!(
            s.3 == b[i].3 || s.3 == a[i].3,
            "{}: effective {} shown, {} before, {} after",
            s.1,
            s.3,
            b[i].3,
            a[i].3
        );
    }
}

/// rx-N RPS_CPUS RPS_FLOW_CNT / tx-N XPS_CPUS, as hlctl shows them.
fn shown_queues(q: &Value) -> Vec<String> {
    let s = |v: &Value| v.as_str().map_or("-".to_string(), str::to_string);
    let rx = q["rx"].as_array().expect("rx").iter().map(|r| {
        format!(
            "rx-{} {} {}",
            r["index"],
            s(&r["rps_cpus"]),
            r["rps_flow_cnt"]
        )
    });
    let tx = q["tx"].as_array().expect("tx").iter();
    rx.chain(tx.map(|t| format!("tx-{} {}", t["index"], s(&t["xps_cpus"]))))
        .collect()
}

fn sorted_lines(text: &str) -> Vec<String> {
    let mut v: Vec<String> = text.lines().map(str::to_string).collect();
    v.sort();
    v
}

pub(crate) fn check(out: &VmOutput) {
    assert_eq!(ok(out, "v-nproc").trim(), "2");
    layout_matches_the_guest(out);
    spread_written_in_sysfs_is_shown(out);
    channels_1_then_2(out);
    affinity_and_xps_set_by_hlctl(out);
}

/// `hlctl set eth1 irq-affinity cpus 0/0/1/1 xps cpus 1/0`: each queue
/// vector's smp_affinity_list (in IRQ order: input.0, output.0, input.1,
/// output.1) and each transmit queue's xps_cpus as given, and `show` reads
/// both back; a map of 2 lists for the 4 vectors is refused, naming them.
fn affinity_and_xps_set_by_hlctl(out: &VmOutput) {
    let bad = out.section("v-aff-bad");
    assert_ne!(bad.rc, 0, "{}", bad.text);
    let err = out.section("v-aff-bad.stderr").text;
    assert!(
        err.contains("irq-affinity cpus 0/1: names 2 queues, eth1 has 4 queue vectors"),
        "{err}"
    );
    let set = out.json("v-aff");
    assert!(set["failure"].is_null(), "{set}");
    let guest = guest_vectors(&ok(out, "v-aff-irqs"));
    let names: Vec<&str> = guest
        .iter()
        .map(|v| v.1.rsplit('-').next().unwrap())
        .collect();
    assert_eq!(
        names,
        ["input.0", "output.0", "input.1", "output.1"],
        "{guest:?}"
    );
    let lists: Vec<&str> = guest.iter().map(|v| v.2.as_str()).collect();
    assert_eq!(lists, ["0", "0", "1", "1"], "{guest:?}");
    let tx: Vec<String> = sorted_lines(&ok(out, "v-aff-queues"))
        .into_iter()
        .filter(|l| l.starts_with("tx-"))
        .collect();
    assert_eq!(tx, ["tx-0 2", "tx-1 1"]);
    ok(out, "v-aff-show");
    let s = &out.json("v-aff-show")["interfaces"][0];
    assert_eq!(s["irq_affinity"]["cpus"], "0/0/1/1", "{s}");
    assert_eq!(s["irq_affinity"]["vectors"], 4, "{s}");
    assert_eq!(s["xps"]["cpus"], "1/0", "{s}");
}

/// Channels 2 of 2, two rx and two tx queues, 4 queue vectors: hlctl,
/// ethtool, sysfs and procfs agree.
fn layout_matches_the_guest(out: &VmOutput) {
    let s = &out.json("v-show")["interfaces"][0];
    let (max, cur) = combined(&ok(out, "v-l"));
    assert_eq!((max, cur), (2, 2));
    let ch = &s["channels"];
    assert_eq!(
        (ch["combined_max"].as_u64(), ch["combined"].as_u64()),
        (Some(max), Some(cur)),
        "{ch}"
    );
    let q = &s["queues"];
    assert_eq!(shown_queues(q), sorted_lines(&ok(out, "v-queues")), "{q}");
    assert_eq!(
        (
            q["rx"].as_array().unwrap().len(),
            q["tx"].as_array().unwrap().len()
        ),
        (2, 2)
    );
    vectors_agree(out, q, "v-irqs0", "v-irqs");
    rss_as_ethtool_says(out, q);
    let guest = guest_vectors(&ok(out, "v-irqs"));
    assert_eq!(guest.len(), 4, "2 input + 2 output vectors: {guest:?}");
    assert_eq!(q["physical_cores"].as_u64(), Some(2), "{q}");
    let text = ok(out, "v-show-text");
    assert!(
        text.contains("  queues    2 rx / 2 tx (channels combined 2 of max 2; 2 physical cores)"),
        "{text}"
    );
}

/// RSS against `ethtool -x eth1`: the hash functions ethtool lists as on;
/// the indirection table and key only when ethtool shows them (virtio_net
/// without qemu's RSS feature: "Operation not supported", and hlctl's
/// RSS_GET reply holds neither).
fn rss_as_ethtool_says(out: &VmOutput, q: &Value) {
    let x = ok(out, "v-x");
    let rss = &q["rss"];
    let on: Vec<&str> = x
        .lines()
        .filter_map(|l| l.trim().strip_suffix(": on"))
        .collect();
    assert_eq!(rss["hash_function"], on.join(" "), "{rss}\n{x}");
    let (table, key) = x.split_once("RSS hash key:").expect("ethtool -x output");
    let entries = table
        .lines()
        .filter(|l| {
            l.trim_start()
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_digit())
        })
        .flat_map(|l| l.split_once(':').map(|(_, v)| v.split_whitespace().count()))
        .sum::<usize>();
    assert_eq!(
        rss["indirection"].as_array().map(Vec::len),
        Some(entries),
        "{rss}\n{x}"
    );
    let key_line = key.lines().nth(1).unwrap_or("").trim();
    match rss["hash_key"].as_str() {
        Some(k) => assert_eq!(k, key_line, "{x}"),
        None => assert_eq!(key_line, "Operation not supported", "{x}"),
    }
}

/// RPS, RFS, XPS and an IRQ's affinity written in sysfs/procfs by the guest
/// script: hlctl shows what the kernel then reads back.
fn spread_written_in_sysfs_is_shown(out: &VmOutput) {
    ok(out, "v-spread");
    let q = queues(out, "v-spread-show");
    let sys = sorted_lines(&ok(out, "v-spread-queues"));
    assert_eq!(shown_queues(&q), sys, "{q}");
    assert_eq!(sys, ["rx-0 2 256", "rx-1 1 0", "tx-0 2", "tx-1 1"]);
    assert_eq!(q["rps_sock_flow_entries"].as_u64(), Some(4096), "{q}");
    vectors_agree(out, &q, "v-spread-irqs0", "v-spread-irqs");
    let guest = guest_vectors(&ok(out, "v-spread-irqs"));
    // The effective CPU follows at the vector's next interrupt (x86 moves an
    // MSI lazily): whatever the kernel says, hlctl said it too (above).
    let input0 = guest.iter().find(|v| v.1.ends_with("input.0")).unwrap();
    assert_eq!(input0.2, "1", "{guest:?}");
}

/// `hlctl set eth1 channels combined 1` then `2`: ethtool and the sysfs
/// queue directories follow, and so does hlctl's layout.
fn channels_1_then_2(out: &VmOutput) {
    for (n, section) in [(1, "v-ch1"), (2, "v-ch2")] {
        let set = out.json(section);
        assert!(set["failure"].is_null(), "{set}");
        assert_eq!(combined(&ok(out, &format!("{section}-l"))), (2, n));
        let dirs = sorted_lines(&ok(out, &format!("{section}-queues")));
        let want: Vec<String> = (0..n)
            .map(|i| format!("rx-{i}"))
            .chain((0..n).map(|i| format!("tx-{i}")))
            .collect();
        assert_eq!(dirs, want);
        let q = queues(out, &format!("{section}-show"));
        let names: Vec<String> = shown_queues(&q)
            .iter()
            .map(|l| l.split(' ').next().unwrap().to_string())
            .collect();
        assert_eq!(names, want, "{q}");
    }
    // virtio_net lays out XPS and the vectors' affinity again when the
    // channels change; hlctl shows what it left.
    let q = queues(out, "v-ch2-show");
    vectors_agree(out, &q, "v-ch2-irqs0", "v-ch2-irqs");
    assert_eq!(shown_queues(&q), sorted_lines(&ok(out, "v-ch2-rpsxps")));
}
