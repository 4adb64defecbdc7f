//! `hlctl report`: network, disk and CPU in one run, as Markdown and JSON, stored in history.

use std::path::PathBuf;

use clap::Args;

use super::error::CliError;
use super::exit;
use super::global::Global;
use super::output::{ProgressBar, print_json};
use crate::dbus::wire::report::ReportParams;
use crate::dbus::wire::verb;
use crate::ops::report::ReportRequest;
use crate::path::Peer;
use crate::report;

/// Run the homelab benchmark report: network to each --peer (both
/// directions), disk on each --dir, CPU single- and multi-threaded.
///
/// Each --peer is checked first (the connection within 2 s and iperf3's
/// first answer within 2 s); when one does not answer, report stops with the
/// reason and exit code 1 before measuring anything.
///
/// Writes hlctl-report-YYYYMMDD-HHMMSS.md and .json into --out and stores the
/// figures in the history (so `hlctl baseline save` and `hlctl compare` work
/// on them). Parts this build cannot measure say so in the report.
#[derive(Debug, Args)]
pub(crate) struct ReportArgs {
    /// A peer running a benchmark server: HOST, HOST:PORT or [IPv6]:PORT (repeatable).
    #[arg(long = "peer", value_name = "HOST[:PORT]")]
    pub(crate) peers: Vec<String>,

    /// A directory to benchmark the disk in (repeatable).
    #[arg(long = "dir", value_name = "PATH")]
    pub(crate) dirs: Vec<String>,

    /// Seconds per run: each network direction, the random-read disk run
    /// and each CPU run, 1 to 60.
    #[arg(long, default_value_t = 10, value_name = "S", value_parser = crate::units::ranged(1u32, 60))]
    pub(crate) time: u32,

    /// Size written and read back per --dir, like `dd bs=1M`: 256M, 1G
    /// (binary units; a plain number is MiB), 1 MiB to 1 TiB.
    #[arg(long, default_value = "256M", value_name = "SIZE", value_parser = super::bench_parse::disk_size_mib(1))]
    pub(crate) disk_size: u64,

    /// The old name for the disk and CPU runs' length (--time covers them).
    #[arg(long, hide = true, value_name = "S", value_parser = crate::units::ranged(1u64, 600))]
    pub(crate) bench_time: Option<u64>,

    /// Where to write the Markdown and JSON files.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub(crate) out: PathBuf,
}

impl ReportArgs {
    /// What the flags ask for: the one request both paths run
    /// (`Manager.Report`'s options are its wire form). The disk and CPU
    /// runs take --time, unless the old --bench-time sets them apart.
    pub(crate) fn request(&self) -> ReportRequest {
        let bench = self.bench_time.unwrap_or(u64::from(self.time));
        ReportRequest {
            peers: self.peers.clone(),
            dirs: self.dirs.clone(),
            time_s: self.time,
            disk_size_mib: u32::try_from(self.disk_size).unwrap_or(u32::MAX),
            bench_time_s: u32::try_from(bench).unwrap_or(u32::MAX),
        }
    }
}

pub(crate) fn run(global: &Global, args: ReportArgs) -> i32 {
    let request = args.request();
    let peers = match request.peers() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("hlctl report: {e}");
            return exit::INVALID;
        }
    };
    let remote = match super::backend::Backend::select(global, super::backend::Need::Nothing) {
        Ok(super::backend::Backend::Bus(r)) => Some(r),
        Ok(super::backend::Backend::Local { .. }) => None,
        Err(e) => return e.report(),
    };
    // In this process the peers are checked here, before the long work;
    // hlctld (perhaps in another namespace) reaches them its own way.
    if remote.is_none()
        && let Err(code) = super::peer_check::require("report", &peers)
    {
        return code;
    }
    let bar = ProgressBar::new(global.json);
    let r = match &remote {
        Some(remote) => through_daemon(remote, request, &bar),
        None => Ok(in_process(global, &request, &peers, &bar)),
    };
    bar.finish();
    let r: report::Report = match r {
        Ok(r) => r,
        Err(e) => return e.report(),
    };
    let stamp = crate::history::store::format_ts(r.timestamp)
        .replace(['-', ':'], "")
        .replace(' ', "-");
    let md = args.out.join(format!("hlctl-report-{stamp}.md"));
    let js = args.out.join(format!("hlctl-report-{stamp}.json"));
    let json = serde_json::to_string_pretty(&r).unwrap_or_default() + "\n";
    for (p, text) in [(&md, r.markdown()), (&js, json)] {
        if let Err(e) = crate::fsutil::write_atomic(p, text.as_bytes(), 0o644) {
            eprintln!("hlctl report: {}: {e}", p.display());
            return exit::FAILED;
        }
    }
    if global.json {
        print_json(&serde_json::json!({ "report": r, "markdown": md, "json": js }));
    } else {
        print!("{}", r.markdown());
        println!("\nSaved: {} and {}", md.display(), js.display());
    }
    exit::OK
}

/// The report as a job of hlctld's.
fn through_daemon(
    remote: &super::remote::Remote,
    request: ReportRequest,
    bar: &ProgressBar,
) -> Result<report::Report, CliError> {
    let params = ReportParams {
        request,
        detached: false,
    };
    let call = super::remote::JobCall {
        what: "report",
        progress: bar,
        confirm: false,
        cancelling: "cancelling",
        partial_ok: false,
    };
    remote.follow(call, remote.start(&verb::REPORT, params.encode()))
}

/// The report in this process, stored in this user's history.
fn in_process(
    global: &Global,
    request: &ReportRequest,
    peers: &[Peer],
    bar: &ProgressBar,
) -> report::Report {
    let cancel = super::interrupt::cancel_on_interrupt();
    let who = crate::ops::Requester::this_process();
    let ran = crate::ops::report::run(request, peers, &global.paths(), who, bar, &cancel);
    super::kept::warn_unstored(ran)
}
