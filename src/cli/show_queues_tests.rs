use std::path::Path;

use super::*;
use crate::nic::model::Channels;

fn fixture() -> Interface {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/layout-ixgbe-eth2");
    let q = crate::cpu::layout::read_under(&root.join("sys"), &root.join("proc"), "eth2");
    Interface {
        name: "eth2".into(),
        channels: Some(Channels {
            combined: Some(2),
            combined_max: Some(63),
            other: Some(1),
            other_max: Some(1),
            ..Default::default()
        }),
        queues: Some(q),
        ..Default::default()
    }
}

#[test]
fn the_fixture_trees_block_reads_as_the_tree_says() {
    let text = queue_lines(&fixture()).join("\n");
    let want = [
        "  queues    2 rx / 2 tx (channels other 1 of max 1, combined 2 of max 63; 2 physical cores), numa node 0 (local cpus 0-3)",
        "  rps       rx-0 cpus - (flow cnt 0), rx-1 cpus 2-3 (flow cnt 2048); sock flow entries 32768",
        "  xps       tx-0 cpus 0, tx-1 cpus 1",
        "  rss       not supported by driver",
        "  irqs      irq 121 eth2-TxRx-0 -> cpus 0-3 (effective 0)",
        "            irq 122 eth2-TxRx-1 -> cpus 0-3 (effective 1)",
        "            irq 123 eth2-TxRx-2 -> cpus 0-3 (effective 2)",
        "            irq 124 eth2-TxRx-3 -> cpus 0-3 (effective 3)",
        "  irqbalance running (pid 4242)",
    ]
    .join("\n");
    assert_eq!(text, want);
}

#[test]
fn a_veth_without_channels_irqs_or_irqbalance() {
    let mut i = fixture();
    i.channels = None;
    let q = i.queues.as_mut().unwrap();
    q.vectors.clear();
    q.irqbalance_pid = None;
    q.numa_node = Some(-1);
    q.physical_cores = Some(1);
    q.tx.clear();
    let text = queue_lines(&i).join("\n");
    assert!(
        text.starts_with(
            "  queues    2 rx / 0 tx (channels not supported by driver; 1 physical core)\n"
        ),
        "{text}"
    );
    assert!(
        text.contains("\n  xps       none\n  rss       not supported by driver"),
        "{text}"
    );
    assert!(
        text.contains("\n  irqs      none\n  irqbalance not running"),
        "{text}"
    );
    i.queues = None;
    assert!(queue_lines(&i).is_empty());
}

/// RSS as ixgbe gives it (a table over the queues and a key; the driver
/// is not on the machines here, so the values are typed in) and as
/// virtio_net without qemu's RSS feature gives it (the hash function only).
#[test]
fn rss_with_a_table_and_a_key_and_without() {
    let mut i = fixture();
    let q = i.queues.as_mut().unwrap();
    q.rss = Some(crate::cpu::layout::Rss {
        hash_function: Some("toeplitz".into()),
        indirection: (0..128).map(|k| k % 2).collect(),
        hash_key: Some("6d:5a:56:da".into()),
    });
    let text = queue_lines(&i).join("\n");
    assert!(
        text.contains("\n  rss       hash toeplitz; indirection 128 entries (queue 0: 64, queue 1: 64); key 4 bytes 6d:5a:56:da\n"),
        "{text}"
    );
    let q = i.queues.as_mut().unwrap();
    q.rss = Some(crate::cpu::layout::Rss {
        hash_function: Some("toeplitz".into()),
        ..Default::default()
    });
    let text = queue_lines(&i).join("\n");
    assert!(
        text.contains("\n  rss       hash toeplitz; indirection table none (the driver gives none); key none\n"),
        "{text}"
    );
}

#[test]
fn masks_become_cpu_lists() {
    for (mask, want) in [
        (Some("0"), "-"),
        (Some("00000000,00000000"), "-"),
        (Some("3"), "0-1"),
        (Some("00000001,0000002d"), "0,2-3,5,32"),
        (Some("ff"), "0-7"),
        (None, "-"),
        (Some("zz"), "zz"),
    ] {
        assert_eq!(mask_text(mask), want, "{mask:?}");
    }
}
