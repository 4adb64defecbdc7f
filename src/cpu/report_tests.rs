use std::time::{Duration, Instant};

use super::*;
use crate::cpu::{interrupts, softirqs, softnet, stat, tasks};

/// A snapshot from the text of the four files (written, in the kernel's format).
fn snap(at: Instant, st: &str, si: &str, sn: &str, irq: &str, own: &str) -> Snapshot {
    Snapshot {
        at,
        stat: stat::parse(st).unwrap(),
        softirqs: softirqs::parse(si).unwrap(),
        softnet: softnet::parse(sn).unwrap(),
        irqs: interrupts::parse(irq).unwrap(),
        own: tasks::parse(own).ok(),
        threads: vec![tasks::parse(own).unwrap()],
    }
}

const IRQ_HEAD: &str = "  CPU0 CPU1\n";

fn own(ticks: u64) -> String {
    format!(
        "9 (hlctl) R 1 1 1 0 -1 0 0 0 0 0 {ticks} 0 0 0 20 0 1 0 5 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 1 0"
    )
}

/// CPU1 spent 91 of 100 ticks in softirq and took all of eth2's
/// interrupts; CPU0 12 of 100 busy; 3 packets dropped on CPU1.
fn one_core_does_the_receive_work() -> CoreReport {
    let t0 = Instant::now();
    let a = snap(
        t0,
        "cpu0 100 0 100 1000 0 0 0 0\ncpu1 100 0 100 1000 0 0 0 0\n",
        "  CPU0 CPU1\n NET_RX: 10 20\n NET_TX: 1 2\n",
        "0 0 0 0 0 0 0 0 0 0 0 0 0\na 1 5 0 0 0 0 0 0 0 0 0 1\n",
        &format!(
            "{IRQ_HEAD} 121: 5 100 PCI-MSI 1-edge eth2-TxRx-0\n 125: 1 0 PCI-MSI 2-edge eth2\n"
        ),
        &own(0),
    );
    let b = snap(
        t0 + Duration::from_secs(1),
        "cpu0 110 0 102 1088 0 0 0 0\ncpu1 102 0 106 1001 0 0 91 0\n",
        "  CPU0 CPU1\n NET_RX: 10 5020\n NET_TX: 3 2\n",
        "0 0 0 0 0 0 0 0 0 0 0 0 0\n3f2 4 5 0 0 0 0 0 0 0 0 0 1\n",
        &format!(
            "{IRQ_HEAD} 121: 5 900 PCI-MSI 1-edge eth2-TxRx-0\n 125: 2 0 PCI-MSI 2-edge eth2\n"
        ),
        &own(50),
    );
    let d = DeviceIds {
        ifname: "eth2".into(),
        ..Default::default()
    };
    between(&a, &b, Some(&d))
}

#[test]
fn the_deltas_land_on_their_cpus() {
    let r = one_core_does_the_receive_work();
    assert_eq!(r.seconds, 1.0);
    let c1 = &r.cpus[1];
    assert_eq!(
        (c1.cpu, c1.busy_percent, c1.softirq_percent),
        (1, 99.0, 91.0)
    );
    assert_eq!(
        (c1.net_rx, c1.processed, c1.dropped, c1.time_squeeze),
        (5000, 1000, 3, 0)
    );
    assert_eq!(c1.device_interrupts, 800);
    assert_eq!(
        (
            r.cpus[0].busy_percent,
            r.cpus[0].net_tx,
            r.cpus[0].device_interrupts
        ),
        (12.0, 2, 0)
    );
    assert_eq!(r.backlog_dropped, 3);
    // The "other" vector eth2 is not a queue.
    assert_eq!(r.queue_vectors.len(), 1);
    assert_eq!(r.queue_vectors[0].per_cpu, vec![(1, 800)]);
    let own = r.own.unwrap();
    let hz = tasks::ticks_per_second();
    assert_eq!(own.percent, (50.0 / hz * 1000.0).round() / 10.0);
    assert_eq!(own.threads.len(), 1);
}

#[test]
fn the_compact_line_names_the_core_its_softirq_share_and_the_queue() {
    let mut r = one_core_does_the_receive_work();
    r.own = None;
    assert_eq!(
        crate::cpu::text::line("download", &r),
        "download: CPU1 99 % (softirq 91 %), CPU0 12 %; eth2's 1 queue vector interrupts CPU1 only; \
         backlog dropped 3"
    );
    r.device = Some("veth0".into());
    r.queue_vectors.clear();
    r.time_squeeze = 7;
    let l = crate::cpu::text::line("upload", &r);
    assert!(
        l.contains("veth0 has no queue interrupts; backlog dropped 3, budget ran out 7 times"),
        "{l}"
    );
}

#[test]
fn a_json_round_trip_keeps_everything() {
    let r = one_core_does_the_receive_work();
    let back: CoreReport = serde_json::from_value(serde_json::to_value(&r).unwrap()).unwrap();
    assert_eq!(back, r);
}
