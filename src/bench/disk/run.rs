//! One disk benchmark run: check, lay out, start the workers together, watch, report.

use std::sync::atomic::Ordering;
use std::thread::{Scope, ScopedJoinHandle};
use std::time::{Duration, Instant};

use super::job::{JobSpec, Live, StartGate, WorkerStats};
use super::layout::{self, BenchFile};
use super::offsets::OffsetGen;
use super::{
    DiskConfig, DiskError, DiskReport, EngineChoice, FsInfo, MAX_PSYNC_THREADS, psync, space,
    summary, uring,
};
use crate::bench::progress::{Cancel, Progress, ProgressEvent};

/// Run the benchmark described by `cfg`.
///
/// Cancelling during the measurement returns the partial result with `cancelled: true`;
/// cancelling while the files are laid out returns [`DiskError::Cancelled`]. The test
/// files are removed before this returns, in every case.
pub fn run(
    cfg: &DiskConfig,
    progress: &dyn Progress,
    cancel: Cancel,
) -> Result<DiskReport, DiskError> {
    cfg.validate()?;
    let fs = space::probe(&cfg.dir)?;
    space::check_free(&cfg.dir, &fs, cfg.size.saturating_mul(u64::from(cfg.jobs)))?;
    let mut warnings = fs.warnings();
    let (engine, note) = pick_engine(cfg.engine)?;
    warnings.extend(note);
    let mut files = lay_out(cfg, progress, &cancel)?;
    let direct = reopen(cfg, &mut files, &fs, &mut warnings)?;
    if cancel.is_cancelled() {
        return Err(DiskError::Cancelled);
    }
    let (start, results, cpu) = measure(cfg, engine, &files, progress, &cancel)?;
    let ctx = summary::Context {
        cfg,
        engine: engine.name(),
        direct,
        fs: &fs,
        warnings,
        cancelled: cancel.is_cancelled(),
        cpu,
    };
    let report = summary::build(ctx, start, results);
    drop(files);
    Ok(report)
}

/// Create one file per job and lay it out: written in full for reads,
/// preallocated for writes; then dropped from the page cache.
fn lay_out(
    cfg: &DiskConfig,
    progress: &dyn Progress,
    cancel: &Cancel,
) -> Result<Vec<BenchFile>, DiskError> {
    let io_size = cfg.size / cfg.bs * cfg.bs;
    let mut files = Vec::with_capacity(cfg.jobs as usize);
    for j in 0..cfg.jobs {
        let file = BenchFile::create(&cfg.dir)?;
        let label = format!("laying out file {}/{}", j + 1, cfg.jobs);
        if cfg.rw.reads() {
            layout::write_full(&file, io_size, progress, &label, cancel)?;
        } else {
            layout::preallocate(&file, io_size)?;
        }
        layout::drop_cache(&file);
        files.push(file);
    }
    Ok(files)
}

/// Reopen the files for the measurement: with O_DIRECT when asked for and
/// the file system takes it, else buffered (with a warning). True if direct.
fn reopen(
    cfg: &DiskConfig,
    files: &mut [BenchFile],
    fs: &FsInfo,
    warnings: &mut Vec<String>,
) -> Result<bool, DiskError> {
    let mut direct = cfg.direct;
    for file in files {
        if direct && !file.reopen(true)? {
            warnings.push(format!(
                "{} refused O_DIRECT: fell back to buffered I/O (results include the page cache)",
                fs.name
            ));
            direct = false;
        }
        if !direct {
            file.reopen(false)?;
        }
    }
    Ok(direct)
}

/// Run the workers, started together, and watch them: the start instant,
/// their statistics and the CPU the process used meanwhile.
fn measure(
    cfg: &DiskConfig,
    engine: Engine,
    files: &[BenchFile],
    progress: &dyn Progress,
    cancel: &Cancel,
) -> Result<(Instant, Vec<WorkerStats>, summary::CpuUse), DiskError> {
    let live = Live::default();
    let gate = StartGate::default();
    let nblocks = cfg.size / cfg.bs;
    let gens: Vec<OffsetGen> = (0..cfg.jobs)
        .map(|j| OffsetGen::new(cfg.rw, nblocks, cfg.bs, cfg.rwmix_read, !cfg.time_based, j))
        .collect();
    let per_job = match engine {
        Engine::Uring => 1,
        Engine::Psync => cfg.iodepth.min(MAX_PSYNC_THREADS),
    };
    let before = (Instant::now(), crate::bench::load::rusage_now());
    let (start, results) = std::thread::scope(|scope| {
        let mut handles = Vec::new();
        let mut spawn_err = None;
        'spawn: for (file, offsets) in files.iter().zip(&gens) {
            for _ in 0..per_job {
                let spec = JobSpec {
                    file,
                    bs: cfg.bs,
                    iodepth: cfg.iodepth,
                    offsets,
                    runtime: cfg.runtime,
                    gate: &gate,
                    cancel,
                    live: &live,
                };
                match spawn_worker(scope, engine, spec) {
                    Ok(h) => handles.push(h),
                    Err(e) => {
                        spawn_err = Some(DiskError::Thread(e.to_string()));
                        break 'spawn;
                    }
                }
            }
        }
        let start = start_together(&gate, &handles, spawn_err.is_some());
        monitor(cfg, &live, start, progress, &handles);
        (start, collect(handles, spawn_err))
    });
    let results = results?;
    Ok((
        start,
        results,
        summary::cpu_use(
            before.1,
            crate::bench::load::rusage_now(),
            before.0.elapsed(),
        ),
    ))
}

/// One worker thread running `spec` on `engine`.
fn spawn_worker<'scope>(
    scope: &'scope Scope<'scope, '_>,
    engine: Engine,
    spec: JobSpec<'scope>,
) -> std::io::Result<ScopedJoinHandle<'scope, Result<WorkerStats, DiskError>>> {
    std::thread::Builder::new()
        .name("hlctl-disk".into())
        .spawn_scoped(scope, move || match engine {
            Engine::Uring => uring::run_job(&spec),
            Engine::Psync => psync::run_thread(&spec),
        })
}

/// Start everyone together once all have set up (or abort on a failure:
/// a worker that could not be spawned, or one that already ended).
fn start_together<T>(
    gate: &StartGate,
    handles: &[ScopedJoinHandle<'_, T>],
    spawn_failed: bool,
) -> Instant {
    while !spawn_failed
        && gate.ready.load(Ordering::SeqCst) < handles.len()
        && !handles.iter().any(|h| h.is_finished())
    {
        std::thread::sleep(Duration::from_millis(1));
    }
    let early_exit = handles.iter().any(|h| h.is_finished());
    gate.open(spawn_failed || early_exit)
}

fn collect(
    handles: Vec<ScopedJoinHandle<'_, Result<WorkerStats, DiskError>>>,
    spawn_err: Option<DiskError>,
) -> Result<Vec<WorkerStats>, DiskError> {
    let mut out = Vec::new();
    let mut first_err = spawn_err;
    for h in handles {
        match h.join() {
            Ok(Ok(s)) => out.push(s),
            Ok(Err(e)) => first_err = first_err.or(Some(e)),
            Err(_) => first_err = first_err.or(Some(DiskError::Thread("a worker panicked".into()))),
        }
    }
    first_err.map_or(Ok(out), Err)
}

/// Show live IOPS and bandwidth until every worker has finished.
fn monitor<T>(
    cfg: &DiskConfig,
    live: &Live,
    start: Instant,
    progress: &dyn Progress,
    handles: &[ScopedJoinHandle<'_, T>],
) {
    let total_bytes = (cfg.size / cfg.bs * cfg.bs) as f64 * f64::from(cfg.jobs);
    let (mut last_t, mut last_ios, mut last_bytes) = (start, 0u64, 0u64);
    while !handles.iter().all(|h| h.is_finished()) {
        std::thread::sleep(Duration::from_millis(50));
        let now = Instant::now();
        if now.duration_since(last_t) < Duration::from_millis(500) {
            continue;
        }
        let (ios, bytes) = live.get();
        let dt = now.duration_since(last_t).as_secs_f64();
        let iops = (ios - last_ios) as f64 / dt;
        let bps = (bytes - last_bytes) as f64 / dt;
        (last_t, last_ios, last_bytes) = (now, ios, bytes);
        let by_time = now.duration_since(start).as_secs_f64() / cfg.runtime.as_secs_f64();
        let by_bytes = if cfg.time_based {
            0.0
        } else {
            bytes as f64 / total_bytes
        };
        progress.report(ProgressEvent {
            fraction: by_time.max(by_bytes).min(1.0),
            message: format!(
                "{} {:.1}k IOPS, {:.1} MiB/s",
                cfg.rw.name(),
                iops / 1000.0,
                bps / (1024.0 * 1024.0)
            ),
        });
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Engine {
    Uring,
    Psync,
}

impl Engine {
    fn name(self) -> &'static str {
        match self {
            Engine::Uring => "io_uring",
            Engine::Psync => "psync",
        }
    }
}

/// Choose the engine; the note says why io_uring was not used when it was wanted.
fn pick_engine(choice: EngineChoice) -> Result<(Engine, Option<String>), DiskError> {
    match (choice, uring::probe()) {
        (EngineChoice::Psync, _) => Ok((Engine::Psync, None)),
        (_, Ok(())) => Ok((Engine::Uring, None)),
        (EngineChoice::IoUring, Err(reason)) => Err(DiskError::EngineUnavailable {
            engine: "io_uring",
            reason,
        }),
        (EngineChoice::Auto, Err(reason)) => Ok((
            Engine::Psync,
            Some(format!(
                "io_uring is unavailable ({reason}): used pread/pwrite threads instead \
                 (up to {MAX_PSYNC_THREADS} per job)"
            )),
        )),
    }
}
