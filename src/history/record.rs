//! Turn doctor and report results into history rows (the tuner writes its own:
//! `tune/session.rs`, so that history does not depend on tune).

use super::Kind;
use super::settings::{self, Snapshot};
use super::store::{Metric, NewResult};
use crate::doctor::{Inputs, Report};
use crate::path::measure::Direction;

/// The settings snapshot of the doctor's inputs.
pub(crate) fn snapshot_of(inp: &Inputs) -> Snapshot {
    let ifaces: Vec<_> = inp.interfaces.iter().map(|s| s.now().clone()).collect();
    settings::snapshot(&ifaces, &inp.sysctls)
}

pub(crate) fn net_metrics(peer: &str, upload_bps: f64, download_bps: f64) -> Vec<Metric> {
    vec![
        Metric::new(
            &format!("net {}", Direction::Upload),
            peer,
            upload_bps,
            "bit/s",
        ),
        Metric::new(
            &format!("net {}", Direction::Download),
            peer,
            download_bps,
            "bit/s",
        ),
    ]
}

pub(crate) fn doctor(r: &Report, inp: &Inputs) -> NewResult {
    let mut metrics = Vec::new();
    let mut peer = None;
    if let Some(p) = &r.peer {
        peer = Some(p.peer.label());
        if let Ok(t) = &p.throughput {
            metrics = net_metrics(&p.peer.label(), t.upload.median(), t.download.median());
        }
        if let Ok(rtt) = &p.rtt {
            let mut m = Metric::new("rtt", &p.peer.label(), rtt.ms, "ms");
            m.higher_is_better = false;
            metrics.push(m);
        }
    }
    NewResult {
        kind: Kind::Doctor,
        host: r.host.clone(),
        interface: r.interfaces.first().cloned(),
        peer,
        settings: snapshot_of(inp),
        result: serde_json::to_value(r).unwrap_or_default(),
        metrics,
        ts: Some(r.timestamp),
    }
}
