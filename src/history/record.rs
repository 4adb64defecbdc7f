//! Turn results into history rows: benchmarks, doctor and report (the tuner
//! writes its own: `tune/session.rs`, so that history does not depend on
//! tune). The caller passes the settings snapshot taken when the work ran.

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
        uid: None,
    }
}

fn row(
    kind: Kind,
    interface: Option<String>,
    peer: Option<String>,
    settings: Snapshot,
    result: serde_json::Value,
    metrics: Vec<Metric>,
) -> NewResult {
    NewResult {
        kind,
        host: crate::host::HostInfo::current(),
        interface,
        peer,
        settings,
        result,
        metrics,
        ts: None,
        uid: None,
    }
}

/// `bench net`: the direction(s) measured against `peer` (`HOST:PORT`),
/// leaving through `interface`.
pub(crate) fn bench_net(
    peer: String,
    interface: Option<String>,
    r: &crate::bench::net::NetReport,
    settings: Snapshot,
) -> NewResult {
    use crate::bench::net::Direction as D;
    let up = |bps: f64| Metric::new("net upload", &peer, bps, "bit/s");
    let down = |bps: f64| Metric::new("net download", &peer, bps, "bit/s");
    let mut m = Vec::new();
    match r.direction {
        D::Forward => m.push(up(r.main.received_bps)),
        D::Reverse => m.push(down(r.main.received_bps)),
        D::Bidir => {
            m.push(up(r.main.received_bps));
            if let Some(rev) = &r.reverse {
                m.push(down(rev.received_bps));
            }
        }
    }
    let v = serde_json::to_value(r).unwrap_or_default();
    row(Kind::Net, interface, Some(peer), settings, v, m)
}

/// `bench disk`: IOPS and throughput of the mode run, in `dir`.
pub(crate) fn bench_disk(
    dir: &str,
    r: &crate::bench::disk::DiskReport,
    settings: Snapshot,
) -> NewResult {
    let mode = serde_json::to_value(r.rw)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    let m = vec![
        Metric::new(&format!("disk {mode} iops"), dir, r.iops, "IOPS"),
        Metric::new(&format!("disk {mode}"), dir, r.bytes_per_second, "B/s"),
    ];
    let v = serde_json::to_value(r).unwrap_or_default();
    row(Kind::Disk, None, Some(dir.to_string()), settings, v, m)
}

/// `bench cpu`: events per second, multi- and single-threaded.
pub(crate) fn bench_cpu(r: &crate::bench::cpu::CpuReport, settings: Snapshot) -> NewResult {
    let mut m = vec![Metric::new(
        &format!("cpu {} threads", r.run.threads),
        "",
        r.run.events_per_second,
        "events/s",
    )];
    if let Some(s) = &r.single_thread {
        m.push(Metric::new(
            "cpu 1 threads",
            "",
            s.events_per_second,
            "events/s",
        ));
    }
    let v = serde_json::to_value(r).unwrap_or_default();
    row(Kind::Cpu, None, None, settings, v, m)
}
