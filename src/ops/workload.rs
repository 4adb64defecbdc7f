//! The figures a workload verdict needs, taken from the doctor's report
//! (throughput to the peer, sequential read of the first `--dir`) and, when
//! a workload needs them and the doctor may measure, a CPU run and a random
//! 4 KiB read run of its own.

use crate::bench::progress::{Cancel, Progress, ProgressEvent};
use crate::check::CheckReport;
use crate::doctor::{Options, Report};
use crate::history::latest::Wanted;
use crate::paths::Paths;
use crate::workload::{Answer, Layer, Measured, Workload, judge};

/// Seconds of the CPU run and of the random-read run a workload asks for.
const RUN_S: u64 = 5;

/// Every workload of `opts`, judged against `report` and the runs made
/// here; a layer not measured now takes the history's newest figure
/// ([`from_history`]).
pub(crate) fn answers(
    opts: &Options,
    paths: &Paths,
    report: &Report,
    progress: &dyn Progress,
    cancel: &Cancel,
) -> Vec<Answer> {
    if opts.workloads.is_empty() {
        return Vec::new();
    }
    let wants = |l: Layer| opts.workloads.iter().any(|w| w.needs(l));
    let mut m = Measured::default();
    net(report, &mut m);
    disk_read(opts, report, &mut m);
    if wants(Layer::Cpu) {
        say(progress, "CPU run for the workloads");
        cpu(opts, cancel, &mut m);
    }
    if wants(Layer::DiskRandread) {
        say(progress, "random 4 KiB reads for the workloads");
        randread(opts, cancel, &mut m);
    }
    from_history(opts, paths, &mut m);
    opts.workloads.iter().map(|w| judge(w, &m)).collect()
}

/// A figure from the history counts as measured while it is this young;
/// an older one is still shown, flagged stale with its age.
pub(crate) const FRESH_S: i64 = 7 * 86_400;

/// Every layer a workload needs that was not measured now: the history's
/// newest figure of it (of the same peer or directory when one was given),
/// said to be from the history, with its age; older than [`FRESH_S`], it is
/// flagged stale.
fn from_history(opts: &Options, paths: &Paths, m: &mut Measured) {
    let needed: Vec<(Layer, String)> = m
        .missing
        .iter()
        .filter(|(l, _)| opts.workloads.iter().any(|w| w.needs(*l)))
        .cloned()
        .collect();
    if needed.is_empty() || !paths.state_dir.join(crate::history::DB_FILE).exists() {
        return;
    }
    let Ok(mut h) = crate::history::History::open(&paths.state_dir) else {
        return;
    };
    let peer = opts.peer.as_ref().map(|p| p.label());
    let cpu_all = crate::history::store::cpu_metric_name(crate::report::cpu_threads() as usize);
    let cpu_names = ["cpu multi events", cpu_all.as_str()];
    let now = crate::host::now_unix();
    let dir = opts.dirs.first().map(String::as_str);
    // On a network mount `bench file --dir`'s read of it counts too.
    let mount_read = dir.and_then(mount_read_metric);
    let read_names: Vec<&str> = ["disk seq-read", "disk read"]
        .into_iter()
        .chain(mount_read.as_deref())
        .collect();
    for (layer, why) in needed {
        let w = match layer {
            Layer::Net => wanted(&["net upload"], "bit/s", peer.as_deref()),
            Layer::DiskRead => wanted(&read_names, "B/s", dir),
            Layer::DiskRandread => wanted(&["disk randread-4k", "disk randread iops"], "IOPS", dir),
            Layer::Cpu => wanted(&cpu_names, "events/s", None),
        };
        let Ok(Some(x)) = h.latest(&w) else { continue };
        let age = crate::units::duration((now - x.ts) as f64);
        let source = if now - x.ts <= FRESH_S {
            format!("from the history: {}, {age} old ({why})", x.describe())
        } else {
            format!(
                "from the history, stale: {}, {age} old, older than {} ({why}): measure it again",
                x.describe(),
                crate::units::duration(FRESH_S as f64)
            )
        };
        m.missing.retain(|(l, _)| *l != layer);
        m.values.push((layer, x.value, source));
    }
}

/// `bench file`'s read metric of the mount holding `dir` ("file nfs4
/// read"), when it is an NFS or SMB mount: that figure is the media's read
/// as Plex sees it, the protocol included.
fn mount_read_metric(dir: &str) -> Option<String> {
    use crate::bench::file::mount_facts::MountFacts;
    let facts = MountFacts::of(&crate::mounted::lookup(dir).ok()?);
    facts
        .is_network()
        .then(|| crate::history::store::file_metric_name(&facts.fs_type, "read"))
}

fn wanted<'a>(names: &'a [&'a str], unit: &'a str, subject: Option<&'a str>) -> Wanted<'a> {
    Wanted {
        names,
        unit,
        subject,
    }
}

fn say(progress: &dyn Progress, m: &str) {
    progress.report(ProgressEvent {
        fraction: 0.95,
        message: m.into(),
    });
}

/// This host → the client: the upload median doctor measured.
fn net(report: &Report, m: &mut Measured) {
    let Some(p) = &report.peer else {
        m.missing
            .push((Layer::Net, "no --peer (the client)".into()));
        return;
    };
    match &p.throughput {
        Ok(t) if !t.upload.samples.is_empty() => m.values.push((
            Layer::Net,
            t.upload.median(),
            format!(
                "measured now: upload to {}, median of {} run(s)",
                p.peer.label(),
                t.upload.samples.len()
            ),
        )),
        Ok(_) => m.missing.push((Layer::Net, "no throughput run".into())),
        Err(e) => m.missing.push((Layer::Net, format!("not measured: {e}"))),
    }
}

/// The first `--dir`'s sequential read (page cache dropped first).
fn disk_read(opts: &Options, report: &Report, m: &mut Measured) {
    let Some(d) = report.storage.first() else {
        let why = match opts.dirs.first() {
            Some(dir) => format!("{dir}: not measured in this run"),
            None => "no --dir (the media volume)".into(),
        };
        m.missing.push((Layer::DiskRead, why));
        return;
    };
    match &d.measured {
        Ok(f) => m.values.push((
            Layer::DiskRead,
            f.read_mb_s * 1e6,
            format!("measured now: sequential read in {}", d.dir),
        )),
        Err(e) => m
            .missing
            .push((Layer::DiskRead, format!("{}: not measured: {e}", d.dir))),
    }
}

fn cpu(opts: &Options, cancel: &Cancel, m: &mut Measured) {
    if !opts.workload_runs {
        m.missing
            .push((Layer::Cpu, "not measured (a read-only doctor)".into()));
        return;
    }
    let threads = crate::report::cpu_threads();
    match crate::measure::cpu(threads, RUN_S, cancel) {
        Ok(r) => m.values.push((
            Layer::Cpu,
            r.figures.first().map_or(0.0, |f| f.value),
            format!("measured now: {RUN_S} s CPU run, {threads} thread(s)"),
        )),
        Err(e) => m.missing.push((Layer::Cpu, format!("not measured: {e}"))),
    }
}

fn randread(opts: &Options, cancel: &Cancel, m: &mut Measured) {
    let Some(dir) = opts.dirs.first() else {
        m.missing
            .push((Layer::DiskRandread, "no --dir (the VM storage)".into()));
        return;
    };
    if !opts.workload_runs {
        m.missing.push((
            Layer::DiskRandread,
            "not measured (a read-only doctor)".into(),
        ));
        return;
    }
    let size = opts.disk_size.max(64 << 20);
    match crate::measure::randread(dir, size, RUN_S, cancel) {
        Ok(r) => m.values.push((
            Layer::DiskRandread,
            r.figures.first().map_or(0.0, |f| f.value),
            format!("measured now: {RUN_S} s of 4 KiB random reads in {dir}, QD32"),
        )),
        Err(e) => m
            .missing
            .push((Layer::DiskRandread, format!("not measured: {e}"))),
    }
}

/// `[workload]` judged on a check's own figures: the first peer's upload,
/// the first directory's sequential and random reads, the multi-threaded
/// CPU run (no extra runs).
pub(crate) fn on_check(r: &CheckReport, workloads: &[Workload]) -> Vec<Answer> {
    if workloads.is_empty() {
        return Vec::new();
    }
    let mut m = Measured::default();
    match r.report.network.iter().find(|n| n.upload_bps.is_some()) {
        Some(n) => m.values.push((
            Layer::Net,
            n.upload_bps.unwrap_or(0.0),
            format!("this check: upload to {}", n.peer),
        )),
        None => m.missing.push((Layer::Net, "no peer measured".into())),
    }
    let figure = |list: &[crate::report::Entry], subject: Option<&str>, name: &str| {
        list.iter()
            .filter(|e| subject.is_none_or(|s| e.subject == s))
            .find_map(|e| {
                e.figures
                    .iter()
                    .find(|f| f.name == name)
                    .map(|f| (f.value, e.subject.clone()))
            })
    };
    for (layer, name, what) in [
        (Layer::DiskRead, "seq-read", "sequential read"),
        (Layer::DiskRandread, "randread-4k", "4 KiB random reads"),
    ] {
        match figure(&r.report.disk, None, name) {
            Some((v, dir)) => m
                .values
                .push((layer, v, format!("this check: {what} in {dir}"))),
            None => m.missing.push((layer, "no directory measured".into())),
        }
    }
    match figure(&r.report.cpu, Some("multi"), "events") {
        Some((v, _)) => m.values.push((
            Layer::Cpu,
            v,
            format!("this check: CPU run, {} thread(s)", r.cpu_threads),
        )),
        None => m.missing.push((Layer::Cpu, "no CPU run".into())),
    }
    workloads.iter().map(|w| judge(w, &m)).collect()
}
