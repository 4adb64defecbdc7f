use super::*;
use crate::cpu::report::{CoreReport, CoreUse};
use crate::doctor::inputs::{IfaceSample, PeerData, Throughput};
use crate::nic::model::{Channels, Coalesce, Rps};
use crate::path::Peer;
use crate::path::throughput::{Sample, Series};

fn core(cpu: u32, busy: f64, net_rx: u64) -> CoreUse {
    CoreUse {
        cpu,
        busy_percent: busy,
        net_rx,
        ..Default::default()
    }
}

/// CPU1 did the receive work at 99 % while CPU0 had room.
fn hot() -> Vec<CoreUse> {
    vec![core(0, 30.0, 100), core(1, 99.0, 9_000)]
}

/// Both cores shared the work: no finding.
fn shared() -> Vec<CoreUse> {
    vec![core(0, 30.0, 100), core(1, 40.0, 9_000)]
}

/// A single-queue device with RPS as `rps` and no coalescing.
fn veth(rps: &str) -> Interface {
    Interface {
        name: "veth0".into(),
        rps: Some(Rps {
            cpus: rps.into(),
            flow_cnt: Some(0),
        }),
        ..Default::default()
    }
}

/// `veth0`'s channels `combined now of max`, coalescing as `co`.
fn nic(combined: (u32, u32), co: Option<Coalesce>) -> Interface {
    Interface {
        channels: Some(Channels {
            combined: Some(combined.0),
            combined_max: Some(combined.1),
            ..Default::default()
        }),
        coalesce: co,
        ..veth("none")
    }
}

/// The doctor's inputs with `i` as the peer's interface and `cpus` as the
/// download's per-core report.
fn inputs(i: &Interface, cpus: Vec<CoreUse>) -> Inputs {
    let mut inp = Inputs::default();
    inp.interfaces.push(IfaceSample {
        first: i.clone(),
        second: None,
        interval_s: 1.0,
    });
    let series = |cores: Option<CoreReport>| Series {
        samples: vec![Sample {
            bps: 1e9,
            cores,
            ..Default::default()
        }],
    };
    let r = CoreReport {
        seconds: 1.0,
        cpus,
        ..Default::default()
    };
    inp.peer = Some(PeerData {
        peer: Peer::parse("peer").unwrap(),
        interface: Some(i.name.clone()),
        rtt: Err("-".into()),
        pmtu: Err("-".into()),
        throughput: Ok(Throughput {
            upload: series(None),
            download: series(Some(r)),
            method: "test".into(),
        }),
    });
    inp
}

/// The candidates for `i` with `cpus`, and the notes.
fn plan(i: &Interface, cpus: Vec<CoreUse>) -> (Vec<Candidate>, Vec<String>) {
    let mut notes = Vec::new();
    let c = candidates(&inputs(i, cpus), i, &mut notes);
    (c, notes)
}

fn ids(c: &[Candidate]) -> Vec<&str> {
    c.iter().map(|c| c.id.as_str()).collect()
}

fn adaptive(on: bool) -> Option<Coalesce> {
    Some(Coalesce {
        adaptive_rx: Some(on),
        rx_usecs: Some(8),
        ..Default::default()
    })
}

fn rx_usecs(u: u32) -> Option<Coalesce> {
    Some(Coalesce {
        rx_usecs: Some(u),
        ..Default::default()
    })
}

#[test]
fn a_hot_receive_core_on_one_queue_gets_rps_over_the_others() {
    let (c, _) = plan(&veth("none"), hot());
    assert_eq!(ids(&c), ["rps"]);
    assert_eq!(
        c[0].change.nic.rps.as_ref().unwrap().cpus.as_deref(),
        Some("0")
    );
    assert!(
        c[0].reason.starts_with("CPU1 did the receive work"),
        "{}",
        c[0].reason
    );
}

#[test]
fn no_candidate_without_a_hot_core_or_when_rps_is_already_there() {
    assert!(plan(&veth("none"), shared()).0.is_empty());
    assert!(plan(&veth("0"), hot()).0.is_empty());
}

/// 1 of 4 combined channels on 2 cores: channels to 2 (not 4), and RPS
/// waits for the next tune, with a note that says so.
#[test]
fn spare_channels_are_raised_to_the_cores_before_rps() {
    let (c, notes) = plan(&nic((1, 4), None), hot());
    assert_eq!(ids(&c), ["channels"]);
    let set = c[0].change.nic.channels.as_ref().unwrap();
    assert_eq!((set.combined, set.rx), (Some(2), None));
    assert_eq!(c[0].title, "combined channels to 2");
    assert!(
        c[0].reason
            .contains("combined 1 of max 4 channels for 2 cores"),
        "{}",
        c[0].reason
    );
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("RPS: not tried in this tune, veth0's channels are tried first")),
        "{notes:?}"
    );
}

/// A driver with separate rx channels gets more rx channels.
#[test]
fn separate_rx_channels_are_raised_as_rx() {
    let i = Interface {
        channels: Some(Channels {
            rx: Some(1),
            rx_max: Some(8),
            tx: Some(1),
            tx_max: Some(8),
            ..Default::default()
        }),
        ..veth("none")
    };
    let (c, _) = plan(&i, hot());
    let set = c[0].change.nic.channels.as_ref().unwrap();
    assert_eq!((set.rx, set.combined), (Some(2), None));
}

/// At their maximum (1 of 1) the device gets RPS; with as many queues as
/// cores (2 of 4) neither; without a hot core nothing.
#[test]
fn channels_at_their_maximum_or_at_the_cores_are_not_raised() {
    let (c, notes) = plan(&nic((1, 1), None), hot());
    assert_eq!(ids(&c), ["rps"]);
    assert!(
        !notes.iter().any(|n| n.contains("tried first")),
        "{notes:?}"
    );
    assert!(plan(&nic((2, 4), None), hot()).0.is_empty());
    assert!(plan(&nic((1, 4), None), shared()).0.is_empty());
}

/// On a bridge or bond none of the three is tried, and one note says why.
#[test]
fn nothing_is_tried_on_a_bridge_or_bond() {
    let i = Interface {
        stack: Some(crate::nic::stack::bridge_with_port("vmbr0", "veth0")),
        ..nic((1, 4), adaptive(false))
    };
    let (c, notes) = plan(&i, hot());
    assert!(c.is_empty(), "{:?}", ids(&c));
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0].starts_with(
            "channels, RPS and coalescing: not tried, veth0 is part of a bridge or bond"
        ),
        "{notes:?}"
    );
}

/// adaptive-rx off where the driver has it: on, after the channels.
#[test]
fn adaptive_rx_off_is_turned_on_after_the_channels() {
    let (c, _) = plan(&nic((1, 4), adaptive(false)), hot());
    assert_eq!(ids(&c), ["channels", "coalescing"]);
    let set = c[1].change.nic.coalesce.as_ref().unwrap();
    assert_eq!(
        set,
        &CoalesceSet {
            adaptive_rx: Some(true),
            ..Default::default()
        }
    );
    assert!(c[1].reason.contains("adaptive-rx off"), "{}", c[1].reason);
}

/// adaptive-rx already on, or rx-usecs already at 50 or more: nothing;
/// without a hot core: nothing.
#[test]
fn coalescing_already_adaptive_or_long_enough_is_left_alone() {
    assert!(
        plan(&nic((1, 1), adaptive(true)), hot())
            .0
            .iter()
            .all(|c| c.id != "coalescing")
    );
    assert!(
        plan(&nic((1, 1), rx_usecs(50)), hot())
            .0
            .iter()
            .all(|c| c.id != "coalescing")
    );
    assert!(plan(&nic((1, 1), rx_usecs(3)), shared()).0.is_empty());
}

/// rx-usecs settable and below 50 (0 included), without adaptive-rx: to 50.
#[test]
fn short_rx_usecs_without_adaptive_rx_is_raised_to_50() {
    for u in [0, 3, 49] {
        let (c, _) = plan(&nic((1, 1), rx_usecs(u)), hot());
        assert_eq!(ids(&c), ["rps", "coalescing"], "rx-usecs {u}");
        let set = c[1].change.nic.coalesce.as_ref().unwrap();
        assert_eq!((set.rx_usecs, set.adaptive_rx), (Some(50), None));
        assert!(
            c[1].reason.contains(&format!("at rx-usecs {u}:")),
            "{}",
            c[1].reason
        );
    }
}

/// e1000e's rx-usecs 3 is its dynamic conservative mode: not replaced by a
/// fixed interval (a note says why); its 0 (throttling off) is raised.
#[test]
fn an_intel_drivers_own_throttling_mode_is_not_replaced() {
    let e1000e = |u| Interface {
        driver: Some("e1000e".into()),
        ..nic((1, 1), rx_usecs(u))
    };
    let (c, notes) = plan(&e1000e(3), hot());
    assert_eq!(ids(&c), ["rps"]);
    assert!(
        notes
            .iter()
            .any(|n| n.contains("rx-usecs 3 is its driver's own adaptive")),
        "{notes:?}"
    );
    assert_eq!(ids(&plan(&e1000e(0), hot()).0), ["rps", "coalescing"]);
}

/// A device without coalescing, or with neither parameter: not tried, noted.
#[test]
fn a_device_without_coalescing_is_noted() {
    let (_, notes) = plan(&veth("none"), hot());
    assert!(
        notes
            .iter()
            .any(|n| n == "coalescing: not tried, veth0's driver reports no interrupt coalescing"),
        "{notes:?}"
    );
    let only_tx = Some(Coalesce {
        tx_frames: Some(64),
        ..Default::default()
    });
    let (c, notes) = plan(&nic((1, 1), only_tx), hot());
    assert_eq!(ids(&c), ["rps"]);
    assert!(
        notes.iter().any(|n| n
            .starts_with("coalescing: not tried, veth0 reports neither adaptive-rx nor rx-usecs")),
        "{notes:?}"
    );
}

/// Four CPUs that are two cores' hyperthreads: channels to 2 (the physical
/// cores), not 4; RPS still counts every CPU.
#[test]
fn channels_stop_at_the_physical_cores_not_the_hyperthreads() {
    let four = vec![
        core(0, 30.0, 100),
        core(1, 99.0, 9_000),
        core(2, 20.0, 50),
        core(3, 25.0, 40),
    ];
    let i = nic((1, 8), None);
    let mut inp = inputs(&i, four.clone());
    inp.physical_cores = Some(2);
    let mut notes = Vec::new();
    let c = candidates(&inp, &i, &mut notes);
    assert_eq!(ids(&c), ["channels"]);
    assert_eq!(c[0].change.nic.channels.as_ref().unwrap().combined, Some(2));
    assert!(c[0].reason.contains("for 2 cores"), "{}", c[0].reason);
    // Unknown topology: the CPUs sampled.
    let c = candidates(&inputs(&i, four.clone()), &i, &mut notes);
    assert_eq!(c[0].change.nic.channels.as_ref().unwrap().combined, Some(4));
    // Already at the physical cores: RPS over the other CPUs instead.
    let at2 = nic((2, 8), None);
    let mut inp = inputs(&at2, four);
    inp.physical_cores = Some(2);
    let c = candidates(&inp, &at2, &mut notes);
    assert_eq!(ids(&c), ["rps"]);
    assert_eq!(
        c[0].change.nic.rps.as_ref().unwrap().cpus.as_deref(),
        Some("0,2-3")
    );
}
