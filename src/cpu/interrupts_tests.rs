use super::*;

fn fixture(name: &str) -> Vec<IrqRow> {
    let p = format!("{}/tests/fixtures/proc/{name}", env!("CARGO_MANIFEST_DIR"));
    parse(&std::fs::read_to_string(&p).unwrap()).unwrap()
}

fn dev(ifname: &str) -> DeviceIds {
    DeviceIds {
        ifname: ifname.into(),
        ..Default::default()
    }
}

fn names(v: &[(&IrqRow, &str)]) -> Vec<String> {
    v.iter().map(|(_, a)| a.to_string()).collect()
}

#[test]
fn the_captured_virtio_guest_names_its_nics_queues_by_the_virtio_device() {
    let rows = fixture("captured-kvm-virtio-2cpu.interrupts");
    let d = DeviceIds {
        virtio: Some("virtio2".into()),
        ..dev("eth0")
    };
    let q = queue_vectors(&rows, &d);
    assert_eq!(names(&q), vec!["virtio2-input.0", "virtio2-output.0"]);
    assert_eq!(q[0].0.irq, "38");
    assert_eq!(q[0].0.counts.len(), 2);
    assert_eq!(q[0].0.counts[0].0, 0);
    // virtio0 (the balloon) and virtio3 (vsock's rx/tx) are other devices.
    assert!(q.iter().all(|(r, _)| r.actions[0].starts_with("virtio2-")));
    let loc = rows.iter().find(|r| r.irq == "LOC").unwrap();
    assert!(loc.actions.is_empty() && loc.total() > 0);
}

#[test]
fn ixgbe_has_four_queue_vectors_on_cpu0_and_its_other_vector_is_not_one() {
    let rows = fixture("written-ixgbe-eth2-4cpu.interrupts");
    let q = queue_vectors(&rows, &dev("eth2"));
    assert_eq!(
        names(&q),
        vec!["eth2-TxRx-0", "eth2-TxRx-1", "eth2-TxRx-2", "eth2-TxRx-3"]
    );
    for (r, _) in &q {
        assert!(r.counts[0].1 > 0 && r.counts[1..].iter().all(|c| c.1 == 0));
    }
    // eth3's vector is not eth2's; the shared line keeps both names.
    let shared = rows.iter().find(|r| r.irq == "16").unwrap();
    assert_eq!(shared.actions, vec!["ehci_hcd:usb1", "i801_smbus"]);
    let err = rows.iter().find(|r| r.irq == "ERR").unwrap();
    assert_eq!(err.counts, vec![(0, 0)]);
}

#[test]
fn offline_cpu_3_shifts_the_columns_to_cpu_4() {
    let rows = fixture("written-nfp-i40e-8cpu-cpu3-offline.interrupts");
    let q = queue_vectors(&rows, &dev("ens1f0"));
    assert_eq!(names(&q).len(), 4, "{:?}", names(&q));
    assert_eq!(q[3].1, "ens1f0-rxtx-3");
    let busy: Vec<u32> = q[3]
        .0
        .counts
        .iter()
        .filter(|c| c.1 > 0)
        .map(|c| c.0)
        .collect();
    assert_eq!(busy, vec![4]);
    // i40e puts its own name first.
    let i40e = queue_vectors(&rows, &dev("ens2f0"));
    assert_eq!(
        names(&i40e),
        vec!["i40e-ens2f0-TxRx-0", "i40e-ens2f0-TxRx-1"]
    );
}

#[test]
fn iwlwifi_is_named_by_its_driver_and_an_msi_only_nic_by_its_irqs() {
    let rows = fixture("written-nfp-i40e-8cpu-cpu3-offline.interrupts");
    let wifi = DeviceIds {
        driver: Some("iwlwifi".into()),
        ..dev("wlp0s20f3")
    };
    let q = queue_vectors(&rows, &wifi);
    assert_eq!(
        names(&q),
        vec![
            "iwlwifi: default queue",
            "iwlwifi: queue 1",
            "iwlwifi: queue 2"
        ]
    );
    // e1000e with MSI: one vector named after the device carries everything.
    assert_eq!(names(&queue_vectors(&rows, &dev("enp1s0"))), vec!["enp1s0"]);
    // By msi_irqs alone (a driver naming its vectors after the PCI address).
    let by_irq = DeviceIds {
        msi_irqs: vec![41, 42],
        ..dev("nomatch")
    };
    assert_eq!(queue_vectors(&rows, &by_irq).len(), 2);
    // eth2 is not a prefix match of eth20.
    assert!(queue_vectors(&rows, &dev("ens1")).is_empty());
}

#[test]
fn arm_gic_lines_and_a_nic_of_two_unnamed_vectors() {
    let rows = fixture("written-arm64-gic-eth0.interrupts");
    let q = queue_vectors(&rows, &dev("eth0"));
    assert_eq!(
        q.iter().map(|(r, _)| r.irq.as_str()).collect::<Vec<_>>(),
        vec!["29", "30"]
    );
    assert_eq!(rows[0].actions, vec!["arch_timer"]);
    assert!(rows.iter().any(|r| r.irq == "IPI0" && r.counts.len() == 4));
}

#[test]
fn bad_lines_are_named() {
    assert!(parse("").is_err());
    let e = parse("  CPU0\n 5: x IO-APIC 5-edge foo\n").unwrap_err();
    assert!(e.to_string().contains("IRQ 5 has no count"), "{e}");
    assert_eq!(e.line, 2);
    assert!(parse("  CPU0\n a b: 1\n").is_err());
    // A line without a colon is not a vector.
    assert!(parse("  CPU0\n\n").unwrap().is_empty());
}
