//! Storing results in the history database. A caller who may not write the
//! state directory (an unprivileged user of the daemon) stores nothing,
//! silently; any other failure warns and goes on (the result was printed).

use crate::history::store::Metric;
use crate::history::{History, HistoryError, Kind, NewResult};
use crate::host::HostInfo;
use crate::paths::Paths;

pub(crate) fn store(paths: &Paths, r: &NewResult) -> Option<i64> {
    match History::open(&paths.state_dir).and_then(|mut h| h.add(r)) {
        Ok(id) => Some(id),
        Err(HistoryError::Open { .. }) if !nix::unistd::Uid::effective().is_root() => None,
        Err(e) => {
            eprintln!("hlctl: warning: not stored in the history: {e}");
            None
        }
    }
}

fn result(
    kind: Kind,
    paths: &Paths,
    iface: Option<String>,
    peer: Option<String>,
    value: serde_json::Value,
    metrics: Vec<Metric>,
) -> NewResult {
    let ifaces: Vec<String> = iface.iter().cloned().collect();
    NewResult {
        kind,
        host: HostInfo::current(),
        interface: iface,
        peer,
        settings: crate::measure::settings_snapshot(paths, &ifaces),
        result: value,
        metrics,
        ts: None,
    }
}

/// `hlctl bench net`: the direction(s) measured, against `host:port`.
pub(crate) fn bench_net(paths: &Paths, host: &str, port: u16, r: &crate::bench::net::NetReport) {
    use crate::bench::net::Direction;
    let peer = crate::path::Peer {
        host: host.to_string(),
        port,
    }
    .label();
    let iface = crate::path::Peer {
        host: host.to_string(),
        port,
    }
    .ip()
    .ok()
    .and_then(crate::path::route::egress_interface);
    let mut m = Vec::new();
    let up = |bps: f64| Metric::new("net upload", &peer, bps, "bit/s");
    let down = |bps: f64| Metric::new("net download", &peer, bps, "bit/s");
    match r.direction {
        Direction::Forward => m.push(up(r.main.received_bps)),
        Direction::Reverse => m.push(down(r.main.received_bps)),
        Direction::Bidir => {
            m.push(up(r.main.received_bps));
            if let Some(rev) = &r.reverse {
                m.push(down(rev.received_bps));
            }
        }
    }
    let v = serde_json::to_value(r).unwrap_or_default();
    store(paths, &result(Kind::Net, paths, iface, Some(peer), v, m));
}

/// `hlctl bench disk`: IOPS and throughput of the mode run, in `dir`.
pub(crate) fn bench_disk(paths: &Paths, dir: &str, r: &crate::bench::disk::DiskReport) {
    let mode = serde_json::to_value(r.rw)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    let m = vec![
        Metric::new(&format!("disk {mode} iops"), dir, r.iops, "IOPS"),
        Metric::new(&format!("disk {mode}"), dir, r.bytes_per_second, "B/s"),
    ];
    let v = serde_json::to_value(r).unwrap_or_default();
    store(
        paths,
        &result(Kind::Disk, paths, None, Some(dir.to_string()), v, m),
    );
}

/// `hlctl bench cpu`: events per second, multi- and single-threaded.
pub(crate) fn bench_cpu(paths: &Paths, r: &crate::bench::cpu::CpuReport) {
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
    store(paths, &result(Kind::Cpu, paths, None, None, v, m));
}
