use super::*;
use crate::cpu::report::{CoreUse, VectorUse};
use crate::doctor::inputs::{PeerData, Throughput};
use crate::nic::model::{IrqAffinity, Xps};
use crate::path::Peer;
use crate::path::throughput::{Sample, Series};

fn core(cpu: u32, busy: f64, irqs: u64) -> CoreUse {
    CoreUse {
        cpu,
        busy_percent: busy,
        device_interrupts: irqs,
        ..Default::default()
    }
}

/// A virtio NIC's four queue vectors (2 queue pairs), their interrupts as
/// `per_cpu` gives them for each.
fn vectors(per_cpu: &[&[(u32, u64)]]) -> Vec<VectorUse> {
    [
        "virtio0-input.0",
        "virtio0-output.0",
        "virtio0-input.1",
        "virtio0-output.1",
    ]
    .iter()
    .zip(per_cpu)
    .enumerate()
    .map(|(k, (n, p))| VectorUse {
        irq: 24 + k as u32,
        name: n.to_string(),
        per_cpu: p.to_vec(),
    })
    .collect()
}

fn report(cpus: Vec<CoreUse>, v: Vec<VectorUse>) -> CoreReport {
    CoreReport {
        seconds: 3.0,
        cpus,
        queue_vectors: v,
        ..Default::default()
    }
}

/// Every interrupt on CPU1.
fn on_cpu1() -> CoreReport {
    report(
        vec![core(0, 40.0, 0), core(1, 95.0, 9_000)],
        vectors(&[&[(1, 5_000)], &[(1, 1_000)], &[(1, 2_000)], &[(1, 1_000)]]),
    )
}

/// Interrupts on both CPUs.
fn shared() -> CoreReport {
    report(
        vec![core(0, 60.0, 4_000), core(1, 70.0, 5_000)],
        vectors(&[&[(0, 4_000)], &[(0, 1)], &[(1, 5_000)], &[(1, 1)]]),
    )
}

fn eth1(affinity: &str, xps: &str) -> Interface {
    Interface {
        name: "eth1".into(),
        irq_affinity: Some(IrqAffinity {
            cpus: affinity.into(),
            vectors: 4,
        }),
        xps: Some(Xps {
            cpus: xps.into(),
            queues: 2,
        }),
        ..Default::default()
    }
}

fn inputs(up: CoreReport, down: CoreReport, irqbalance: Option<u32>) -> Inputs {
    let series = |r: CoreReport| Series {
        samples: vec![Sample {
            bps: 1e9,
            cores: Some(r),
            ..Default::default()
        }],
    };
    Inputs {
        irqbalance_pid: irqbalance,
        peer: Some(PeerData {
            peer: Peer::parse("peer").unwrap(),
            interface: Some("eth1".into()),
            rtt: Err("-".into()),
            pmtu: Err("-".into()),
            throughput: Ok(Throughput {
                upload: series(up),
                download: series(down),
                method: "test".into(),
            }),
        }),
        ..Default::default()
    }
}

fn plan(inp: &Inputs, i: &Interface) -> (Vec<Candidate>, Vec<String>) {
    let mut notes = Vec::new();
    let c = candidates(inp, i, &mut notes);
    (c, notes)
}

fn ids(c: &[Candidate]) -> Vec<&str> {
    c.iter().map(|c| c.id.as_str()).collect()
}

#[test]
fn interrupts_all_on_one_cpu_are_spread_queue_by_queue() {
    let (c, notes) = plan(&inputs(shared(), on_cpu1(), None), &eth1("1/1/1/1", "0/1"));
    assert_eq!(ids(&c), ["irq-affinity"], "{notes:?}");
    let set = c[0].change.nic.irq_affinity.as_ref().unwrap();
    assert_eq!(set.cpus.as_deref(), Some("0/0/1/1"));
    assert!(
        c[0].reason
            .starts_with("all 4 of eth1's queue vectors interrupted CPU1 only (affinity 1/1/1/1)"),
        "{}",
        c[0].reason
    );
}

#[test]
fn interrupts_already_shared_or_already_spread_are_left_alone() {
    let (c, _) = plan(
        &inputs(shared(), shared(), None),
        &eth1("0-1/0-1/0-1/0-1", "0/1"),
    );
    assert!(c.is_empty(), "{:?}", ids(&c));
    // All on one CPU although the affinity already spreads them (the
    // effective affinity of the interrupt controller disagrees): the same
    // map again would change nothing.
    let (c, _) = plan(&inputs(shared(), on_cpu1(), None), &eth1("0/0/1/1", "0/1"));
    assert!(c.is_empty(), "{:?}", ids(&c));
}

#[test]
fn under_irqbalance_no_affinity_candidate_and_a_note_naming_it() {
    // Both directions on one CPU: one note, not one per direction.
    let (c, notes) = plan(
        &inputs(on_cpu1(), on_cpu1(), Some(812)),
        &eth1("1/1/1/1", "0/1"),
    );
    assert!(c.is_empty(), "{:?}", ids(&c));
    assert_eq!(
        notes,
        [
            "interrupt affinity: not tried, irqbalance (pid 812) owns eth1's IRQs (all on CPU1); hlctl does not fight it"
        ]
    );
}

#[test]
fn a_renumbered_device_is_noted_not_spread() {
    let mut i = eth1("1/1", "0/1");
    i.irq_affinity.as_mut().unwrap().vectors = 2;
    let (c, notes) = plan(&inputs(shared(), on_cpu1(), None), &i);
    assert!(c.is_empty());
    assert!(
        notes[0].contains("2 queue vectors now, 4 during the baseline"),
        "{notes:?}"
    );
}

#[test]
fn a_saturated_upload_on_several_transmit_queues_without_xps_gets_a_queue_per_core() {
    let busy_up = report(vec![core(0, 97.0, 10), core(1, 30.0, 10)], Vec::new());
    let (c, _) = plan(
        &inputs(busy_up.clone(), shared(), None),
        &eth1("0/0/1/1", "none"),
    );
    assert_eq!(ids(&c), ["xps"]);
    let set = c[0].change.nic.xps.as_ref().unwrap();
    assert_eq!(set.cpus.as_deref(), Some("0/1"));
    assert!(
        c[0].reason
            .starts_with("CPU0 was 97 % busy during the upload"),
        "{}",
        c[0].reason
    );
    // XPS already set, one transmit queue (no XPS to read), or no
    // saturated core: nothing.
    assert!(
        plan(
            &inputs(busy_up.clone(), shared(), None),
            &eth1("0/0/1/1", "1/0")
        )
        .0
        .is_empty()
    );
    let mut one_queue = eth1("0/0/1/1", "none");
    one_queue.xps = None;
    assert!(
        plan(&inputs(busy_up, shared(), None), &one_queue)
            .0
            .is_empty()
    );
    assert!(
        plan(&inputs(shared(), shared(), None), &eth1("0/0/1/1", "none"))
            .0
            .is_empty()
    );
}

#[test]
fn nothing_on_a_bridge_or_bond() {
    let i = Interface {
        stack: Some(crate::nic::stack::bridge_with_port("vmbr0", "eth1")),
        ..eth1("1/1/1/1", "none")
    };
    let busy_up = report(vec![core(0, 97.0, 10), core(1, 30.0, 10)], Vec::new());
    assert!(plan(&inputs(busy_up, on_cpu1(), None), &i).0.is_empty());
}
