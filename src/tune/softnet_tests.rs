//! The backlog and budget candidates on captured softnet deltas: the
//! counters of a 3 s veth download on this 2-core machine (58,000 NET_RX,
//! no drop, 2 squeezes) and the same with the counters moved.

use super::*;
use crate::cpu::report::CoreUse;
use crate::doctor::inputs::{PeerData, Throughput};
use crate::path::Peer;
use crate::path::throughput::{Sample, Series};

fn report(dropped: u64, squeezes: u64, busy: f64) -> CoreReport {
    CoreReport {
        seconds: 3.0,
        cpus: vec![
            CoreUse {
                cpu: 0,
                busy_percent: 31.0,
                processed: 120,
                ..Default::default()
            },
            CoreUse {
                cpu: 1,
                busy_percent: busy,
                softirq_percent: 62.0,
                net_rx: 58_000,
                processed: 61_000,
                dropped,
                time_squeeze: squeezes,
                ..Default::default()
            },
        ],
        backlog_dropped: dropped,
        time_squeeze: squeezes,
        ..Default::default()
    }
}

/// Inputs whose baseline download's runs sampled `runs`, the host's
/// namespace's sysctls as `sysctls`.
fn inputs(runs: Vec<CoreReport>, sysctls: &[(&str, &str)]) -> Inputs {
    let mut inp = Inputs::default();
    for (k, v) in sysctls {
        inp.sysctls.insert(k.to_string(), v.to_string());
    }
    let series = |rs: Vec<CoreReport>| Series {
        samples: rs
            .into_iter()
            .map(|r| Sample {
                bps: 1e9,
                cores: Some(r),
                ..Default::default()
            })
            .collect(),
    };
    inp.peer = Some(PeerData {
        peer: Peer::parse("peer").unwrap(),
        interface: Some("eth2".into()),
        rtt: Err("-".into()),
        pmtu: Err("-".into()),
        throughput: Ok(Throughput {
            upload: series(Vec::new()),
            download: series(runs),
            method: "test".into(),
        }),
    });
    inp
}

const HOST: &[(&str, &str)] = &[
    ("net.core.netdev_max_backlog", "1000"),
    ("net.core.netdev_budget", "300"),
];

fn plan(inp: &Inputs, in_container: bool) -> (Vec<Candidate>, Vec<String>) {
    let mut notes = Vec::new();
    let c = candidates_in(inp, in_container, &mut notes);
    (c, notes)
}

#[test]
fn counters_that_did_not_move_try_nothing() {
    // The captured veth download: no drop, 2 squeezes in 3 s.
    let (c, notes) = plan(&inputs(vec![report(0, 2, 99.0)], HOST), false);
    assert!(c.is_empty(), "{c:?}");
    assert!(notes.is_empty(), "{notes:?}");
}

#[test]
fn a_drop_in_any_baseline_run_doubles_the_backlog() {
    let runs = vec![report(0, 0, 99.0), report(37, 0, 99.0), report(0, 0, 99.0)];
    let (c, _) = plan(&inputs(runs, HOST), false);
    assert_eq!(c.len(), 1, "{c:?}");
    assert_eq!(c[0].id, "backlog");
    assert_eq!(c[0].change.sysctl["net.core.netdev_max_backlog"], "2000");
    assert!(c[0].change.nic.is_empty());
    assert!(
        c[0].reason
            .starts_with("37 packets dropped from full per-CPU backlogs"),
        "{}",
        c[0].reason
    );
    // Doubled from today's value, at least 2000.
    let (c, _) = plan(
        &inputs(
            vec![report(5, 0, 50.0)],
            &[("net.core.netdev_max_backlog", "4096")],
        ),
        false,
    );
    assert_eq!(c[0].change.sysctl["net.core.netdev_max_backlog"], "8192");
}

#[test]
fn frequent_squeezes_with_a_saturated_core_double_the_budget() {
    // 60 in 3 s = 20 a second, CPU1 at 99 %.
    let (c, _) = plan(&inputs(vec![report(0, 60, 99.0)], HOST), false);
    assert_eq!(c.len(), 1, "{c:?}");
    assert_eq!(c[0].id, "budget");
    assert_eq!(c[0].change.sysctl["net.core.netdev_budget"], "600");
    // As many squeezes without a saturated core: the budget is not the limit.
    assert!(
        plan(&inputs(vec![report(0, 60, 70.0)], HOST), false)
            .0
            .is_empty()
    );
    // A few squeezes at saturation: every busy receive's lot.
    assert!(
        plan(&inputs(vec![report(0, 20, 99.0)], HOST), false)
            .0
            .is_empty()
    );
}

#[test]
fn both_counters_moved_try_both_backlog_first() {
    let (c, _) = plan(&inputs(vec![report(9, 90, 99.0)], HOST), false);
    let ids: Vec<&str> = c.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["backlog", "budget"]);
}

/// In a network namespace other than the host's the keys are not there
/// (the way the veth tests run): nothing is tried, a note says why; in a
/// container neither.
#[test]
fn a_global_key_out_of_reach_is_noted_not_tried() {
    let (c, notes) = plan(&inputs(vec![report(9, 90, 99.0)], &[]), false);
    assert!(c.is_empty(), "{c:?}");
    assert_eq!(notes.len(), 2, "{notes:?}");
    assert!(
        notes[0].starts_with("net.core.netdev_max_backlog: not tried (9 packets dropped")
            && notes[0].ends_with("not visible in this one"),
        "{notes:?}"
    );
    let (c, notes) = plan(&inputs(vec![report(9, 0, 99.0)], HOST), true);
    assert!(c.is_empty(), "{c:?}");
    assert!(
        notes[0].ends_with("from a container it would change the whole host"),
        "{notes:?}"
    );
}
