//! `hlctl bench disk`: fio-class disk test, or the dd-style `--seq-dd` test.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, ValueEnum};

use super::bench_parse;
use super::error::CliError;
use super::exit;
use super::global::Global;
use super::output::{ProgressBar, print_json};
use crate::bench::disk::{self, DiskError, DiskReport, SeqDdConfig, SeqDdReport};
use crate::bench::size::Bytes;
use crate::dbus::wire::bench::DiskParams;

/// Measure a disk or share like fio (random/sequential I/O with O_DIRECT and io_uring),
/// or like `dd conv=fdatasync` with `--seq-dd`.
///
/// Test files named `.hlctl-bench-<pid>-<n>` are created in DIR and removed at the end,
/// also on errors and on Ctrl-C; no other file is touched. The run is refused when DIR
/// lacks room for the files plus 64 MiB, and a warning says when DIR is memory-backed
/// (tmpfs, ramfs).
///
/// Unlike fio, hlctl registers its buffers and file with io_uring, and puts buffers of
/// 1 MiB or more in huge pages where the kernel allows, so that a large I/O reaches the
/// device as one request in one piece. fio's buffers, in ordinary pages, reach it in up
/// to one piece per 4 KiB page (and an I/O of more pieces than the device takes, 254 on
/// virtio, in several requests): on virtual disks hlctl's figures for large blocks can
/// be well above fio's for the same disk.
#[derive(Debug, Args)]
pub(crate) struct DiskArgs {
    /// Directory to test in: a directory on the disk or share to measure.
    #[arg(long, value_name = "PATH")]
    pub(crate) dir: PathBuf,
    /// I/O pattern: read, write (sequential), randread, randwrite, randrw (random).
    #[arg(long, value_enum, default_value_t = RwArg::Randread)]
    pub(crate) rw: RwArg,
    /// Bytes per I/O, binary units (4k = 4096) [default: 4k; 1M with --seq-dd].
    #[arg(long, value_name = "SIZE", value_parser = bench_parse::size)]
    pub(crate) bs: Option<u64>,
    /// Size of each job's file, and how much each job reads or writes (binary units).
    #[arg(long, value_name = "SIZE", default_value = "1G", value_parser = bench_parse::size)]
    pub(crate) size: u64,
    /// I/Os kept in flight per job (1 to 4096).
    #[arg(long, default_value_t = 32, value_parser = crate::units::ranged(1u32, 4096))]
    pub(crate) iodepth: u32,
    /// Jobs run in parallel, each on its own file (1 to 64).
    #[arg(long, default_value_t = 1, value_parser = crate::units::ranged(1u32, 64))]
    pub(crate) jobs: u32,
    /// Longest run time in seconds (e.g. 30, 0.5, 2m); a job also ends after --size bytes
    /// (also --runtime, as fio names it).
    #[arg(long = "time", alias = "runtime", value_name = "SECONDS", default_value = "30", value_parser = bench_parse::seconds)]
    pub(crate) runtime: Duration,
    /// Keep going until --time even after --size bytes (fio's --time_based).
    #[arg(long)]
    pub(crate) time_based: bool,
    /// Use the page cache instead of O_DIRECT (then reads may come from RAM).
    #[arg(long)]
    pub(crate) buffered: bool,
    /// I/O engine: auto (io_uring, else pread/pwrite threads), io_uring, psync.
    #[arg(long, value_enum, default_value_t = EngineArg::Auto)]
    pub(crate) engine: EngineArg,
    /// Percentage of reads in --rw randrw (0 to 100).
    #[arg(long, default_value_t = 50, value_parser = crate::units::ranged(0u8, 100))]
    pub(crate) rwmix_read: u8,
    /// dd-style test instead: sequential writes (default 1 MiB each) with one fdatasync at
    /// the end counted in the time, like `dd conv=fdatasync`, then the file read back.
    #[arg(long, conflicts_with_all = ["rw", "iodepth", "jobs", "time_based", "buffered", "engine", "rwmix_read"])]
    pub(crate) seq_dd: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum RwArg {
    Read,
    Write,
    Randread,
    Randwrite,
    Randrw,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum EngineArg {
    Auto,
    #[value(name = "io_uring")]
    IoUring,
    Psync,
}

pub(crate) fn run(global: &Global, args: DiskArgs) -> i32 {
    let bar = ProgressBar::new(global.json);
    // --seq-dd runs in-process (its report is not sent over the bus yet).
    if args.seq_dd {
        return seq_dd(global, args, &bar);
    }
    let params = params(args);
    let mut backend = match super::backend::Backend::select(global, super::backend::Need::Nothing) {
        Ok(b) => b,
        Err(e) => return e.report(),
    };
    let res = backend.bench("disk", &params, &bar, |bar, cancel| {
        let cfg = params
            .config()
            .map_err(|m| CliError::new(m, exit::INVALID))?;
        let who = crate::ops::Requester::this_process();
        crate::ops::bench::disk(&global.paths(), &cfg, who, bar, cancel)
            .map(super::kept::warn_unstored)
            .map_err(|e| CliError::new(e.to_string(), code(&e)))
    });
    bar.finish();
    match res {
        Ok(r) => {
            if global.json {
                print_json(&r);
            } else {
                print_report(&r);
            }
            if r.cancelled { exit::FAILED } else { exit::OK }
        }
        Err(e) => {
            eprintln!("hlctl bench disk: {}", e.message);
            e.code
        }
    }
}

/// `--seq-dd`: dd's sequential write and read, in this process.
fn seq_dd(global: &Global, args: DiskArgs, bar: &ProgressBar) -> i32 {
    let cancel = super::interrupt::cancel_on_interrupt();
    let cfg = SeqDdConfig {
        dir: args.dir,
        size: args.size,
        bs: args.bs.unwrap_or(1 << 20),
    };
    let res = disk::run_seq_dd(&cfg, bar, cancel);
    bar.finish();
    match res {
        Ok(r) if global.json => {
            print_json(&r);
            exit::OK
        }
        Ok(r) => {
            print_dd(&r);
            exit::OK
        }
        Err(e) => fail(e),
    }
}

/// The benchmark's parameters as they travel (in process or to hlctld).
fn params(args: DiskArgs) -> DiskParams {
    DiskParams {
        dir: std::path::absolute(&args.dir)
            .unwrap_or(args.dir)
            .display()
            .to_string(),
        rw: Some(
            match args.rw {
                RwArg::Read => "read",
                RwArg::Write => "write",
                RwArg::Randread => "randread",
                RwArg::Randwrite => "randwrite",
                RwArg::Randrw => "randrw",
            }
            .to_string(),
        ),
        bs: Some(args.bs.unwrap_or(4096)),
        size: Some(args.size),
        iodepth: Some(args.iodepth),
        jobs: Some(args.jobs),
        runtime_s: Some(args.runtime.as_secs_f64()),
        time_based: Some(args.time_based),
        direct: Some(!args.buffered),
        engine: Some(
            match args.engine {
                EngineArg::Auto => "auto",
                EngineArg::IoUring => "io_uring",
                EngineArg::Psync => "psync",
            }
            .to_string(),
        ),
        rwmix_read: Some(args.rwmix_read),
    }
}

/// The exit code of a disk benchmark error.
fn code(e: &DiskError) -> i32 {
    e.class().exit_code()
}

/// Print the error; map it to an exit code.
fn fail(e: DiskError) -> i32 {
    eprintln!("hlctl bench disk: {e}");
    code(&e)
}

fn si(bps: f64) -> String {
    format!(
        "{:.1} MiB/s ({:.1} MB/s)",
        bps / (1024.0 * 1024.0),
        bps / 1e6
    )
}

fn print_report(r: &DiskReport) {
    println!(
        "{}: bs {}, iodepth {}, {} job(s), {}, {}, {} ({})",
        r.rw.name(),
        Bytes(r.bs_bytes),
        r.iodepth,
        r.jobs,
        r.engine,
        if r.direct { "O_DIRECT" } else { "buffered" },
        r.filesystem,
        r.dir.display()
    );
    println!("  IOPS        {:.0}", r.iops);
    println!("  bandwidth   {}", si(r.bytes_per_second));
    for (name, d) in [("read", &r.read), ("write", &r.write)] {
        if let Some(d) = d {
            println!(
                "    {name:<5}     {:.0} IOPS, {}",
                d.iops,
                si(d.bytes_per_second)
            );
        }
    }
    let l = &r.latency_us;
    println!(
        "  latency µs  p50 {:.0}  p90 {:.0}  p99 {:.0}  p99.9 {:.0}  max {:.0}  (mean {:.1})",
        l.p50, l.p90, l.p99, l.p99_9, l.max, l.mean
    );
    println!(
        "  cpu         user {:.2} s, system {:.2} s ({:.0}% of one CPU)",
        r.cpu.user_s, r.cpu.system_s, r.cpu.percent
    );
    println!(
        "  ran         {:.2} s, {} in {} I/Os",
        r.duration_s,
        Bytes(r.total_bytes),
        r.total_ios
    );
    if r.cancelled {
        println!("  cancelled: partial result");
    }
    for w in &r.warnings {
        println!("  warning: {w}");
    }
}

fn print_dd(r: &SeqDdReport) {
    println!(
        "seq-dd: {} in {} blocks, {} ({})",
        Bytes(r.size_bytes),
        Bytes(r.bs_bytes),
        r.filesystem,
        r.dir.display()
    );
    for p in [&r.write, &r.read] {
        let sync = p
            .fdatasync_s
            .map(|s| format!(", incl. fdatasync {s:.2} s"))
            .unwrap_or_default();
        println!(
            "  {:<5} {:>8.1} MB/s ({:.1} MiB/s)  {} in {:.2} s{sync}",
            p.rw,
            p.mb_per_s,
            p.mib_per_s,
            Bytes(p.bytes),
            p.duration_s
        );
    }
    for w in &r.warnings {
        println!("  warning: {w}");
    }
}
