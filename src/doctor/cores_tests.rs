use super::*;
use crate::cpu::report::VectorUse;
use crate::doctor::inputs::{IfaceSample, PeerData, Throughput};
use crate::nic::model::Interface;
use crate::path::Peer;
use crate::path::throughput::{Sample, Series};

/// A core: busy and softirq percent, NET_RX softirqs, device interrupts.
fn core(cpu: u32, busy: f64, softirq: f64, net_rx: u64, irqs: u64) -> CoreUse {
    CoreUse {
        cpu,
        busy_percent: busy,
        softirq_percent: softirq,
        net_rx,
        device_interrupts: irqs,
        ..Default::default()
    }
}

fn report(cpus: Vec<CoreUse>) -> CoreReport {
    CoreReport {
        seconds: 2.0,
        device: Some("eth2".into()),
        cpus,
        ..Default::default()
    }
}

/// CPU0 does the receive work at 98 % while CPU1 idles at 5 %.
fn one_hot_core() -> CoreReport {
    report(vec![
        core(0, 98.0, 91.0, 40_000, 9_000),
        core(1, 5.0, 0.0, 300, 0),
    ])
}

fn inputs(download: CoreReport, channels: Option<Channels>) -> Inputs {
    let mut inp = Inputs::default();
    inp.interfaces.push(IfaceSample {
        first: Interface {
            name: "eth2".into(),
            physical: true,
            channels,
            ..Default::default()
        },
        second: None,
        interval_s: 1.0,
    });
    let series = |cores: Option<CoreReport>| Series {
        samples: vec![Sample {
            bps: 6.87e9,
            cores,
            ..Default::default()
        }],
    };
    inp.peer = Some(PeerData {
        peer: Peer::parse("nas").unwrap(),
        interface: Some("eth2".into()),
        rtt: Err("not probed".into()),
        pmtu: Err("not probed".into()),
        throughput: Ok(Throughput {
            upload: series(None),
            download: series(Some(download)),
            method: "test".into(),
        }),
    });
    inp
}

fn run(inp: &Inputs) -> Outcome {
    let mut out = Outcome::default();
    check(inp, &mut out);
    out
}

/// The one-core finding of `out`, if any.
fn hot_finding(out: &Outcome) -> Option<&Finding> {
    out.findings
        .iter()
        .find(|f| f.id == "core-one-does-the-work")
}

fn combined(now: u32, max: u32) -> Channels {
    Channels {
        combined: Some(now),
        combined_max: Some(max),
        ..Default::default()
    }
}

#[test]
fn one_busy_core_and_spare_queues_asks_for_as_many_channels_as_cores() {
    let out = run(&inputs(one_hot_core(), Some(combined(1, 8))));
    let f = &out.findings[0];
    assert_eq!(f.id, "core-one-does-the-work");
    assert!(
        f.title.starts_with("CPU0 did 99 % of eth2's receive work"),
        "{}",
        f.title
    );
    // Two cores: two queues, not the device's eight.
    assert_eq!(f.fix, ["hlctl set eth2 channels combined 2"]);
}

#[test]
fn a_single_queue_device_gets_rps_over_the_other_cores() {
    for ch in [None, Some(combined(1, 1))] {
        let out = run(&inputs(one_hot_core(), ch));
        let f = &out.findings[0];
        assert_eq!(f.id, "core-one-does-the-work");
        assert_eq!(f.fix, ["hlctl set eth2 rps cpus 1"]);
    }
}

#[test]
fn the_receive_hot_core_is_found_for_the_tune() {
    let inp = inputs(one_hot_core(), None);
    let (cpu, r) = receive_hot_core(&inp).expect("hot core");
    assert_eq!(cpu, 0);
    assert_eq!(rps_cpus(cpu, r), "1");
    let calm = report(vec![
        core(0, 40.0, 10.0, 500, 0),
        core(1, 30.0, 5.0, 400, 0),
    ]);
    assert!(receive_hot_core(&inputs(calm, None)).is_none());
    assert_eq!(queue_count(None), 1);
    assert_eq!(queue_count(Some(&combined(4, 8))), 4);
}

/// RPS steering the receive work to CPU1 (figures of tune_rps_veth's rig,
/// 4 s): the sending core raised nearly as many NET_RX softirqs (each one
/// only sends RPS's IPIs) as the core that did the work, but CPU1
/// processed 93 % of the packets. The share counts the packets; without
/// them (a report that did not sample softnet_stat) NET_RX is all there is,
/// and 54 % is no finding.
#[test]
fn the_receive_share_counts_the_packets_each_core_processed() {
    let mut cpus = vec![
        core(0, 98.0, 5.0, 87_202, 0),
        core(1, 100.0, 40.0, 102_899, 0),
    ];
    cpus[0].processed = 9_719;
    cpus[1].processed = 127_885;
    let out = run(&inputs(report(cpus.clone()), None));
    let f = hot_finding(&out).expect("finding");
    assert!(
        f.title.starts_with("CPU1 did 93 % of eth2's receive work"),
        "{}",
        f.title
    );
    assert_eq!(f.fix, ["hlctl set eth2 rps cpus 0"]);
    let counted = f
        .evidence
        .iter()
        .find(|e| e.name == "work counted as")
        .unwrap();
    assert_eq!(counted.value, "packets each core processed (softnet_stat)");
    for c in &mut cpus {
        c.processed = 0;
    }
    let out = run(&inputs(report(cpus), None));
    assert!(hot_finding(&out).is_none(), "{:?}", out.findings);
}

#[test]
fn queues_in_use_but_one_flow_points_at_the_interrupts_not_more_channels() {
    let out = run(&inputs(one_hot_core(), Some(combined(2, 2))));
    let f = &out.findings[0];
    assert!(
        f.fix[0].starts_with("# spread eth2's queue interrupts"),
        "{:?}",
        f.fix
    );
}

#[test]
fn work_shared_by_the_cores_is_a_pass_with_the_cores_line() {
    let r = report(vec![
        core(0, 70.0, 40.0, 20_000, 4_000),
        core(1, 65.0, 38.0, 19_000, 4_100),
    ]);
    let out = run(&inputs(r, Some(combined(2, 2))));
    assert!(out.findings.is_empty(), "{:?}", out.findings);
    let pass = out.passed.iter().find(|c| c.check == "cores").unwrap();
    assert!(
        pass.detail.starts_with("download: CPU0 70 %"),
        "{}",
        pass.detail
    );
}

#[test]
fn a_saturated_core_that_did_not_do_the_network_work_is_no_finding() {
    // CPU0 is busy with something else: CPU1 took most of the NET_RX.
    let r = report(vec![
        core(0, 97.0, 2.0, 100, 0),
        core(1, 30.0, 25.0, 30_000, 9_000),
    ]);
    let out = run(&inputs(r, Some(combined(1, 4))));
    assert!(hot_finding(&out).is_none(), "{:?}", out.findings);
}

#[test]
fn a_saturated_core_that_took_a_trickle_of_the_directions_softirqs_is_no_finding() {
    // Seen in doctor_veth: an upload over veth raised 3 NET_TX in 2 s, all
    // on the busy CPU0 ("100 % of the send work"): no evidence of anything.
    let mut r = report(vec![core(0, 92.0, 54.0, 3, 0), core(1, 70.0, 13.0, 0, 0)]);
    let out = run(&inputs(r.clone(), Some(combined(1, 2))));
    assert!(hot_finding(&out).is_none(), "{:?}", out.findings);
    // The same cores with a transfer's worth of them are.
    r.cpus[0].net_rx = 2_000;
    let out = run(&inputs(r, Some(combined(1, 2))));
    assert_eq!(out.findings[0].id, "core-one-does-the-work");
}

#[test]
fn other_cores_busy_with_processes_still_have_room_but_not_busy_with_softirqs() {
    // CPU1 runs someone's compile at 100 %: softirqs preempt it.
    let r = report(vec![
        core(0, 98.0, 91.0, 40_000, 9_000),
        core(1, 100.0, 2.0, 300, 0),
    ]);
    let out = run(&inputs(r, None));
    assert_eq!(out.findings[0].id, "core-one-does-the-work");
    // CPU1 spends 70 % in softirqs itself: no room there.
    let r = report(vec![
        core(0, 98.0, 91.0, 40_000, 9_000),
        core(1, 80.0, 70.0, 3_000, 0),
    ]);
    let out = run(&inputs(r, None));
    assert!(hot_finding(&out).is_none(), "{:?}", out.findings);
}

#[test]
fn every_interrupt_of_two_vectors_on_one_cpu_is_found() {
    let mut r = report(vec![
        core(0, 50.0, 30.0, 20_000, 8_000),
        core(1, 40.0, 20.0, 15_000, 0),
    ]);
    r.queue_vectors = vec![
        VectorUse {
            irq: 41,
            name: "eth2-TxRx-0".into(),
            per_cpu: vec![(0, 4_000)],
        },
        VectorUse {
            irq: 42,
            name: "eth2-TxRx-1".into(),
            per_cpu: vec![(0, 4_000)],
        },
    ];
    let out = run(&inputs(r, Some(combined(2, 2))));
    let f = out
        .findings
        .iter()
        .find(|f| f.id == "irqs-on-one-cpu")
        .unwrap();
    assert_eq!(
        f.title,
        "all 2 of eth2's queue vectors interrupted CPU0 only"
    );
    assert!(f.evidence.iter().any(|e| e.value == "41 42"));
    assert_eq!(f.fix, ["hlctl set eth2 irq-affinity cpus 0/1"]);
}

/// Where irqbalance runs it owns the IRQs: the finding names it, and its
/// fix is irqbalance's, not an hlctl setting.
#[test]
fn irqs_on_one_cpu_under_irqbalance_name_it_and_fight_nothing() {
    let mut r = report(vec![
        core(0, 50.0, 30.0, 20_000, 8_000),
        core(1, 40.0, 20.0, 15_000, 0),
    ]);
    r.queue_vectors = [
        "virtio0-input.0",
        "virtio0-output.0",
        "virtio0-input.1",
        "virtio0-output.1",
    ]
    .iter()
    .enumerate()
    .map(|(k, n)| VectorUse {
        irq: 24 + k as u32,
        name: n.to_string(),
        per_cpu: vec![(0, 100)],
    })
    .collect();
    // A queue's input and output vectors on one CPU, the queues apart.
    assert_eq!(affinity_spread(&r), "0/0/1/1");
    let mut inp = inputs(r, Some(combined(2, 2)));
    inp.irqbalance_pid = Some(812);
    let out = run(&inp);
    let f = out
        .findings
        .iter()
        .find(|f| f.id == "irqs-on-one-cpu")
        .unwrap();
    assert!(f.evidence.iter().any(|e| e.value == "running (pid 812)"));
    assert!(f.fix[0].starts_with("# tell irqbalance"), "{:?}", f.fix);
}

#[test]
fn backlog_drops_and_squeezes_double_their_sysctls() {
    // Both cores saturated (no one core is the limit), squeezed 40 times a second.
    let mut r = report(vec![
        core(0, 90.0, 60.0, 20_000, 0),
        core(1, 88.0, 60.0, 20_000, 0),
    ]);
    r.backlog_dropped = 120;
    r.time_squeeze = 80;
    let mut inp = inputs(r, None);
    inp.sysctls
        .insert("net.core.netdev_max_backlog".into(), "1000".into());
    inp.sysctls
        .insert("net.core.netdev_budget".into(), "300".into());
    let out = run(&inp);
    let fix = |id: &str| {
        out.findings
            .iter()
            .find(|f| f.id == id)
            .unwrap()
            .fix
            .clone()
    };
    assert_eq!(
        fix("softnet-backlog-drops"),
        ["hlctl sysctl net.core.netdev_max_backlog=2000"]
    );
    assert_eq!(
        fix("softnet-time-squeeze"),
        ["hlctl sysctl net.core.netdev_budget=600"]
    );
}

#[test]
fn steal_time_says_no_setting_here_helps() {
    let mut r = report(vec![
        core(0, 60.0, 20.0, 20_000, 0),
        core(1, 55.0, 20.0, 19_000, 0),
    ]);
    r.cpus[1].steal_percent = 23.0;
    let out = run(&inputs(r, None));
    let f = out.findings.iter().find(|f| f.id == "cpu-steal").unwrap();
    assert_eq!(
        f.title,
        "the hypervisor took 23 % of CPU1 during the download"
    );
    assert!(f.why.contains("no setting inside this VM helps"));
    assert!(f.fix.iter().all(|l| l.starts_with('#')));
}

#[test]
fn unsampled_cores_are_not_checked_and_say_why() {
    let mut inp = inputs(one_hot_core(), None);
    if let Some(PeerData {
        throughput: Ok(t), ..
    }) = &mut inp.peer
    {
        t.download.samples[0].cores = None;
    }
    let out = run(&inp);
    assert!(out.findings.is_empty());
    assert!(
        out.not_checked
            .iter()
            .any(|c| c.check == "cores" && c.detail.contains("not sampled"))
    );
}

#[test]
fn a_few_squeezes_or_squeezes_without_a_saturated_core_are_no_finding() {
    let mut r = report(vec![
        core(0, 50.0, 30.0, 20_000, 0),
        core(1, 50.0, 30.0, 20_000, 0),
    ]);
    r.time_squeeze = 3;
    assert!(run(&inputs(r.clone(), None)).findings.is_empty());
    // 100 a second, but no core at its limit: still none.
    r.time_squeeze = 200;
    assert!(run(&inputs(r.clone(), None)).findings.is_empty());
    // A saturated core, but 3 in 2 s: none either.
    r.cpus[0].busy_percent = 95.0;
    r.time_squeeze = 3;
    assert!(run(&inputs(r, None)).findings.is_empty());
}
