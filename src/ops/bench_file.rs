//! `bench file`'s run: the transfer, then beside it raw TCP to the same
//! host, the local disk the file comes from and this CPU's AEADs, then the
//! verdicts ([`crate::protocol`]). A layer that cannot be measured is
//! skipped with its reason, never guessed.

use std::path::PathBuf;
use std::time::Duration;

use crate::bench::crypto::{self, CryptoFigure};
use crate::bench::disk::{SeqDdConfig, run_seq_dd};
use crate::bench::file::{self, FileConfig, FileError, FileReport, Target};
use crate::bench::net::{self, ClientConfig, TestDirection};
use crate::bench::progress::{Cancel, NoProgress, Progress, ProgressEvent};
use crate::path::Peer;
use crate::path::route::Toward;
use crate::protocol::{Beside, DiskFigures, FileRun, NetFigures};

/// How long a busy iperf3 server is tried again.
const NET_BUSY_WINDOW: Duration = Duration::from_secs(10);
/// The local disk's test file is at most this big.
const DISK_SIZE_MAX: u64 = 256 << 20;

/// What a `bench file` run is asked for, from the CLI's flags or the bus.
#[derive(Clone, Debug)]
pub(crate) struct FileRequest {
    pub(crate) cfg: FileConfig,
    /// The iperf3 server for raw TCP; None: the transfer's host on 5201.
    pub(crate) net_peer: Option<Peer>,
    pub(crate) net: bool,
    /// Seconds per raw TCP direction.
    pub(crate) net_time_s: u32,
    /// The local directory the file would come from; None: /var/tmp.
    pub(crate) local_dir: Option<PathBuf>,
    pub(crate) disk: bool,
    pub(crate) crypto: bool,
    /// Where the server's own figures are read, when it is asked.
    pub(crate) fleet: Option<crate::matrix::Fleet>,
}

/// Every step of the run, each said through `progress`.
pub(crate) fn run(
    req: &FileRequest,
    progress: &dyn Progress,
    cancel: &Cancel,
) -> Result<FileRun, FileError> {
    let say = |fraction: f64, message: &str| {
        progress.report(ProgressEvent {
            fraction,
            message: message.to_string(),
        })
    };
    let report = file::run(&req.cfg, progress, cancel)?;
    say(1.0, "raw TCP to the same host");
    let network = network(req, &report, cancel);
    say(1.0, "the local disk");
    let disk = local_disk(req, &report, cancel);
    say(1.0, "this CPU's encryption per core");
    let crypto = if req.crypto {
        crypto::measure_all(crypto::PER_AEAD, cancel)
    } else {
        Vec::<CryptoFigure>::new()
    };
    if cancel.is_cancelled() {
        return Err(FileError::Cancelled);
    }
    let toward = Toward::server(report.server.as_deref());
    let fleet = req.fleet.as_ref().map(|f| {
        say(1.0, "the server's own figures in the fleet's Prometheus");
        f.server(report.server.as_deref(), toward.address.as_deref())
    });
    Ok(FileRun::judged(
        report, toward, network, disk, crypto, fleet,
    ))
}

/// Raw TCP both ways to `--net-peer` or the transfer's host (port 5201).
fn network(req: &FileRequest, f: &FileReport, cancel: &Cancel) -> Beside<NetFigures> {
    if !req.net {
        return skipped("--no-net");
    }
    let peer = match (&req.net_peer, &f.server) {
        (Some(p), _) => p.clone(),
        (None, Some(host)) => Peer {
            host: host.clone(),
            port: crate::path::peer::DEFAULT_PORT,
        },
        (None, None) => return skipped("a local directory: no network in the path"),
    };
    let run = |direction| {
        let mut c = ClientConfig::new(peer.host.clone(), peer.port);
        c.time_s = req.net_time_s;
        c.direction = direction;
        c.interval = None;
        // iperf3 3.12's server says "busy" for a moment after each test.
        c.busy_window = NET_BUSY_WINDOW;
        net::run_client_waiting(&c, &NoProgress, cancel, &mut || {})
            .map(|(r, _busy)| r.main.received_bps)
    };
    match (run(TestDirection::Forward), run(TestDirection::Reverse)) {
        (Ok(up), Ok(down)) => Beside::Measured(NetFigures {
            peer: peer.label(),
            upload_bps: up,
            download_bps: down,
        }),
        (Err(e), _) | (_, Err(e)) => skipped(&format!(
            "no iperf3 server answered at {} ({e}): start `hlctl serve` or `iperf3 -s` there, \
             or name one with --net-peer",
            peer.label()
        )),
    }
}

/// dd's sequential write and read in the local directory the file comes
/// from, at most [`DISK_SIZE_MAX`].
fn local_disk(req: &FileRequest, f: &FileReport, cancel: &Cancel) -> Beside<DiskFigures> {
    if !req.disk {
        return skipped("--no-disk");
    }
    if matches!(req.cfg.target, Target::Dir(_)) && f.server.is_none() {
        return skipped("the directory is itself on this host's disk: its figures are above");
    }
    let dir = req
        .local_dir
        .clone()
        .unwrap_or_else(|| PathBuf::from("/var/tmp"));
    let cfg = SeqDdConfig {
        size: req.cfg.size.min(DISK_SIZE_MAX),
        ..SeqDdConfig::new(&dir)
    };
    match run_seq_dd(&cfg, &NoProgress, cancel.clone()) {
        Ok(r) => Beside::Measured(DiskFigures {
            dir: dir.display().to_string(),
            filesystem: r.filesystem.clone(),
            write_bytes_per_second: r.write.bytes_per_second,
            read_bytes_per_second: r.read.bytes_per_second,
        }),
        Err(e) => skipped(&format!("{}: {e}", dir.display())),
    }
}

fn skipped<T>(why: &str) -> Beside<T> {
    Beside::Skipped {
        why: why.to_string(),
    }
}
