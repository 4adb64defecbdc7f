//! Every history row is built here, from the result of the operation that
//! ran and the settings snapshot taken when it ran: benchmarks, doctor,
//! report, tune and check. [`super::row_store`] stores them under the uid that
//! asked.

use crate::doctor::{Inputs, Report as DoctorReport};
use crate::history::Kind;
use crate::history::settings::{self, Snapshot};
use crate::history::store::{Metric, NewResult, net_metric, net_metrics};
use crate::paths::Paths;

/// The settings snapshot of the doctor's inputs.
pub(crate) fn snapshot_of(inp: &Inputs) -> Snapshot {
    let ifaces: Vec<_> = inp.interfaces.iter().map(|s| s.now().clone()).collect();
    settings::snapshot(&ifaces, &inp.sysctls)
}

/// `doctor`: its findings, and the peer's throughput and RTT when measured.
pub(crate) fn doctor(r: &DoctorReport, inp: &Inputs) -> NewResult {
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

/// `report`: every figure, with the settings of its interfaces.
pub(crate) fn report(paths: &Paths, r: &crate::report::Report) -> NewResult {
    let ifaces: Vec<String> = r
        .network
        .iter()
        .filter_map(|n| n.interface.clone())
        .collect();
    NewResult {
        kind: Kind::Report,
        host: r.host.clone(),
        interface: ifaces.first().cloned(),
        peer: r.network.first().map(|n| n.peer.clone()),
        settings: crate::measure::settings_snapshot(paths, &ifaces),
        result: serde_json::to_value(r).unwrap_or_default(),
        metrics: r.metrics(),
        ts: Some(r.timestamp),
        uid: None,
    }
}

/// `check`: the report's figures, with the settings of its interfaces.
pub(crate) fn check(paths: &Paths, r: &crate::check::CheckReport) -> NewResult {
    let ifaces: Vec<String> = r
        .report
        .network
        .iter()
        .filter_map(|n| n.interface.clone())
        .collect();
    let mut unique = ifaces.clone();
    unique.dedup();
    NewResult {
        kind: Kind::Check,
        host: r.report.host.clone(),
        interface: ifaces.first().cloned(),
        peer: r.report.network.first().map(|n| n.peer.clone()),
        settings: crate::measure::settings_snapshot(paths, &unique),
        result: serde_json::to_value(r).unwrap_or_default(),
        metrics: r
            .report
            .metrics()
            .into_iter()
            .chain(
                r.files
                    .iter()
                    .filter_map(|e| e.file.as_ref())
                    .flat_map(crate::history::store::file_metrics),
            )
            .collect(),
        ts: Some(r.report.timestamp),
        uid: None,
    }
}

/// `tune`: its metrics are the throughput after the kept changes.
pub(crate) fn tune(r: &crate::tune::TuneReport, settings: Snapshot) -> NewResult {
    let metrics = r
        .after
        .as_ref()
        .map(|a| {
            a.each()
                .map(|(d, s)| net_metric(&r.peer, d, s.median_bps))
                .collect()
        })
        .unwrap_or_default();
    NewResult {
        kind: Kind::Tune,
        host: r.host.clone(),
        interface: Some(r.interface.clone()),
        peer: Some(r.peer.clone()),
        settings,
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
    use crate::bench::net::TestDirection as D;
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

/// `bench file`: each direction's bytes per second, named by protocol
/// and direction, at the place measured (`user@host:port:/dir` or the
/// directory); the run's JSON holds the mount's options, the SSH cipher
/// and the verdicts.
pub(crate) fn bench_file(r: &crate::protocol::FileRun, settings: Snapshot) -> NewResult {
    let m = crate::history::store::file_metrics(&r.file);
    let v = serde_json::to_value(r).unwrap_or_default();
    row(Kind::File, None, Some(r.file.place.clone()), settings, v, m)
}

/// `bench cpu`: events per second, multi- and single-threaded.
pub(crate) fn bench_cpu(r: &crate::bench::cpu::CpuReport, settings: Snapshot) -> NewResult {
    let mut m = vec![Metric::new(
        &crate::history::store::cpu_metric_name(r.run.threads),
        "",
        r.run.events_per_second,
        "events/s",
    )];
    if let Some(s) = &r.single_thread {
        m.push(Metric::new(
            &crate::history::store::cpu_metric_name(1),
            "",
            s.events_per_second,
            "events/s",
        ));
    }
    let v = serde_json::to_value(r).unwrap_or_default();
    row(Kind::Cpu, None, None, settings, v, m)
}
