//! The measurements the doctor, the tuner, `report` and `check` use, built
//! from the benchmark library, run in hlctl or in hlctld; and the history row
//! of a report.

use crate::bench::progress::{Cancel, NoProgress};
use crate::path::Peer;
use crate::path::throughput::Measure;
use crate::report::{Figure, Figures, Measured};

/// A network benchmark towards `peer`, `time_s` seconds per run.
pub(crate) fn for_peer(peer: &Peer, time_s: u32) -> Box<dyn Measure> {
    crate::path::measure_for(peer, time_s)
}

fn fig(name: &str, value: f64, unit: &str) -> Figure {
    Figure {
        name: name.into(),
        value,
        unit: unit.into(),
    }
}

/// Disk figures for a directory, as a home lab's quarterly check measures them:
/// sequential write and read of `size` bytes (dd-like, 1 MiB blocks), then
/// 4 KiB random reads for up to `seconds`.
pub(crate) fn disk(dir: &str, size: u64, seconds: u64, cancel: &Cancel) -> Figures {
    use crate::bench::disk::seqdd;
    let mut cfg = seqdd::SeqDdConfig::new(dir);
    cfg.size = size;
    let dd = seqdd::run_seq_dd(&cfg, &NoProgress, cancel.clone()).map_err(|e| e.to_string())?;
    let mut out = vec![
        fig("seq-write", dd.write.bytes_per_second, "B/s"),
        fig("seq-read", dd.read.bytes_per_second, "B/s"),
    ];
    let rr = randread(dir, size, seconds, cancel)?;
    out.extend(rr.figures);
    Ok(Measured {
        figures: out,
        warnings: rr.warnings,
    })
}

/// 4 KiB random reads in `dir` (a `size`-byte file, hlctl's defaults: QD32,
/// O_DIRECT) for up to `seconds`: the figure `randread-4k` in IOPS.
pub(crate) fn randread(dir: &str, size: u64, seconds: u64, cancel: &Cancel) -> Figures {
    use crate::bench::disk::{self, DiskConfig};
    let mut rr = DiskConfig::new(dir);
    rr.size = size;
    rr.runtime = std::time::Duration::from_secs(seconds);
    let r = disk::run(&rr, &NoProgress, cancel.clone()).map_err(|e| e.to_string())?;
    Ok(Measured {
        figures: vec![fig("randread-4k", r.iops, "IOPS")],
        warnings: r.warnings,
    })
}

/// CPU events per second (sysbench-like) with `threads` threads for `seconds`.
pub(crate) fn cpu(threads: u32, seconds: u64, cancel: &Cancel) -> Figures {
    use crate::bench::cpu::{self, CpuConfig};
    let cfg = CpuConfig {
        threads: threads as usize,
        time: std::time::Duration::from_secs(seconds),
        single_thread_baseline: false,
        ..CpuConfig::new()
    };
    let r = cpu::run(&cfg, &NoProgress, cancel.clone()).map_err(|e| e.to_string())?;
    Ok(Measured {
        figures: vec![fig("events", r.run.events_per_second, "events/s")],
        warnings: r.warnings,
    })
}

/// The settings snapshot of these interfaces and the network sysctls.
pub(crate) fn settings_snapshot(
    paths: &crate::paths::Paths,
    ifaces: &[String],
) -> crate::history::settings::Snapshot {
    let mut list = Vec::new();
    if let Ok(mut nl) = crate::nic::netlink::Netlink::new() {
        for i in ifaces {
            if let Ok(x) = crate::nic::read::interface(&mut nl, i) {
                list.push(x);
            }
        }
    }
    crate::history::settings::snapshot(&list, &crate::doctor::gather::sysctls(paths))
}

/// How long and how much `hlctl report` measures.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ReportSpan {
    /// Seconds per network run.
    pub(crate) time_s: u32,
    /// Bytes written and read per disk.
    pub(crate) disk_size: u64,
    /// Seconds for the random-read disk run and for each CPU run.
    pub(crate) bench_time_s: u64,
}

/// The benchmark report: network to each peer, disk in each directory, CPU.
pub(crate) fn run_report(
    peers: &[Peer],
    dirs: &[String],
    span: ReportSpan,
    progress: &dyn crate::bench::progress::Progress,
    cancel: &Cancel,
) -> crate::report::Report {
    let net = move |p: &Peer| for_peer(p, span.time_s);
    let disk = move |d: &str, c: &Cancel| disk(d, span.disk_size, span.bench_time_s, c);
    let cpu = move |t: u32, c: &Cancel| cpu(t, span.bench_time_s, c);
    crate::report::run(
        peers,
        dirs,
        &crate::report::Benches {
            net: &net,
            disk: &disk,
            cpu: &cpu,
        },
        progress,
        cancel,
    )
}
