//! The candidates for a host where a core, not the wire, is the limit
//! (`docs/cpu-bound.md`), drawn from the doctor's per-core report of its
//! own transfers ([`crate::doctor::cores`]): RPS when one core did the
//! receive work of a device with fewer queues than cores.

use super::change::{Candidate, Change};
use super::runs::Pair;
use crate::doctor::cores::{queue_count, receive_hot_core, rps_cpus};
use crate::doctor::inputs::Throughput;
use crate::doctor::{Finding, Inputs};
use crate::nic::model::{Interface, RpsSet};

/// The doctor's inputs with the tune's baseline as their transfers: the
/// tuner measures throughput itself, so the per-core reports of its
/// baseline runs are what the doctor's cores checks and the plan read.
pub(crate) fn with_baseline(inputs: &Inputs, baseline: &Pair, method: String) -> Inputs {
    let mut inp = inputs.clone();
    if let Some(p) = &mut inp.peer {
        p.throughput = Ok(Throughput {
            upload: baseline.0.clone(),
            download: baseline.1.clone(),
            method,
        });
    }
    inp
}

/// The doctor's findings on the cores during the baseline.
pub(crate) fn findings(inp: &Inputs) -> Vec<Finding> {
    let mut out = crate::doctor::finding::Outcome::default();
    crate::doctor::cores::check(inp, &mut out);
    out.findings
}

/// RPS over the other cores, when the doctor saw one core do the download's
/// receive work of `i`, a device with fewer receive queues than cores.
pub(crate) fn rps(inp: &Inputs, i: &Interface, notes: &mut Vec<String>) -> Option<Candidate> {
    let (hot, report) = receive_hot_core(inp)?;
    let name = i.name.as_str();
    let Some(now) = &i.rps else {
        notes.push(format!("RPS: not tried, {name} has no rps_cpus in sysfs"));
        return None;
    };
    if i.stack.is_some() {
        notes.push(format!(
            "RPS: not tried, {name} is part of a bridge or bond; set it on the port that receives (hlctl set PORT rps cpus LIST)"
        ));
        return None;
    }
    let cores = report.cpus.len() as u32;
    let queues = queue_count(i.channels.as_ref());
    if queues >= cores {
        return None;
    }
    let want = rps_cpus(hot, report);
    if want == now.cpus || want == crate::cpu::cpulist::NONE {
        return None;
    }
    let mut change = Change::default();
    change.nic.rps = Some(RpsSet {
        cpus: Some(want.clone()),
        flow_cnt: None,
    });
    Some(Candidate {
        id: "rps".into(),
        title: format!("receive packet steering to CPUs {want}"),
        reason: format!(
            "CPU{hot} did the receive work of {name} alone ({queues} queue{} for {cores} cores, RPS {}): the other cores take its packets' protocol work",
            if queues == 1 { "" } else { "s" },
            now.cpus
        ),
        change,
        probe_mtu: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::report::{CoreReport, CoreUse};
    use crate::doctor::inputs::{IfaceSample, PeerData, Throughput};
    use crate::nic::model::Rps;
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

    fn inputs(cpus: Vec<CoreUse>, rps: &str) -> (Inputs, Interface) {
        let i = Interface {
            name: "veth0".into(),
            rps: Some(Rps {
                cpus: rps.into(),
                flow_cnt: Some(0),
            }),
            ..Default::default()
        };
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
            interface: Some("veth0".into()),
            rtt: Err("-".into()),
            pmtu: Err("-".into()),
            throughput: Ok(Throughput {
                upload: series(None),
                download: series(Some(r)),
                method: "test".into(),
            }),
        });
        (inp, i)
    }

    #[test]
    fn a_hot_receive_core_on_one_queue_gets_rps_over_the_others() {
        let (inp, i) = inputs(vec![core(0, 30.0, 10), core(1, 99.0, 900)], "none");
        let mut notes = Vec::new();
        let c = rps(&inp, &i, &mut notes).expect("candidate");
        assert_eq!(c.id, "rps");
        assert_eq!(c.change.nic.rps.unwrap().cpus.as_deref(), Some("0"));
        assert!(
            c.reason.starts_with("CPU1 did the receive work"),
            "{}",
            c.reason
        );
    }

    #[test]
    fn no_candidate_without_a_hot_core_or_when_rps_is_already_there() {
        let (inp, i) = inputs(vec![core(0, 30.0, 10), core(1, 40.0, 900)], "none");
        assert!(rps(&inp, &i, &mut Vec::new()).is_none());
        let (inp, i) = inputs(vec![core(0, 30.0, 10), core(1, 99.0, 900)], "0");
        assert!(rps(&inp, &i, &mut Vec::new()).is_none());
    }
}
