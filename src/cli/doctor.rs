//! `hlctl doctor`: read-only diagnosis with evidence and exact fixes.

use clap::Args;

use super::error::CliError;
use super::exit;
use super::global::Global;
use super::output::{ProgressBar, print_json};
use super::remote::{JobCall, Remote};
use crate::bench::progress::Cancel;
use crate::dbus::wire::doctor::DoctorParams;
use crate::dbus::wire::verb;
use crate::doctor::{Check, Finding, Report};
use crate::ops::doctor::DoctorRequest;

/// Diagnose NICs, TCP settings, the path to a peer, the CPU and mounts.
///
/// Read-only: changes nothing, allowed to everyone. Each finding names the
/// values it rests on, why it matters and the exact fix (an `hlctl set` or
/// `hlctl sysctl` line; lines starting with # are actions hlctl cannot take).
/// A check this machine cannot provide data for is listed as "not checked"
/// with the reason, never guessed.
///
/// Checks: link speed below the best mode both ends advertise, half duplex,
/// autonegotiation off, carrier flapping; CRC/frame errors, drops, missed
/// frames and FIFO overruns (rising across two samples a second apart), rings
/// below their maximum while dropping; offloads turned off; flow control;
/// transmit queue length. With --peer, where a benchmark server (`hlctl
/// serve`, `iperf3 -s`) must answer (checked first: the connection within 2 s
/// and iperf3's first answer within 2 s, else doctor stops with the reason and
/// exit code 1): round-trip time (TCP handshake to the peer's port), path MTU
/// (don't-fragment probes), TCP buffers against the bandwidth-delay product,
/// and what the path delivers against what the link claims. Always: congestion control (and whether bbr is available),
/// tcp_slow_start_after_idle, CPU governor and throttling. With --dir: the
/// filesystem, and for NFS the rsize/wsize, sync and version options, for SMB
/// (cifs) vers, rsize/wsize, cache= and signing/encryption.
///
/// Bridges and bonds: naming the upper (vmbr0, bond0) or any port examines
/// the whole stack; link, rings, pause and offloads on every port, offloads
/// on the upper too, and one MTU across the stack.
///
/// The NFS playbook (--dir NETWORK_FS --dir LOCAL [--peer NAS]): each
/// directory gets a sequential write with fdatasync (like `dd bs=1M
/// conv=fdatasync`) and a read back with the cache dropped (--disk-size MiB,
/// a file created and removed there); a network filesystem is judged by
/// `hlctl bench file`'s rules on its slower direction, and the report names
/// the layer that limits it: the network (raw TCP to the peer carries at
/// most ~15 % more), the local disk (the fastest local --dir), encryption,
/// the mount's settings (sync, blocks below 1 MiB, no nconnect where the
/// network has room, cache=none), or elsewhere (the server). JSON: "storage"
/// per directory, and the finding `storage-layer` with evidence "limit" =
/// network | local-disk | encryption | client-cpu | settings | elsewhere and
/// "verdict", bench file's sentence.
///
/// Exit codes: 0 report printed (with or without findings); 1 failed; 2 invalid input.
#[derive(Debug, Args)]
pub(crate) struct DoctorArgs {
    /// Interfaces to examine [default: the one towards --peer, else the physical NICs that are up].
    #[arg(value_name = "IFACE")]
    pub(crate) interfaces: Vec<String>,

    /// The peer to measure against: HOST, HOST:PORT or [IPv6]:PORT (port default 5201).
    #[arg(long, value_name = "HOST[:PORT]")]
    pub(crate) peer: Option<String>,

    /// A directory whose filesystem and mount options to check (repeatable).
    #[arg(long = "dir", value_name = "PATH")]
    pub(crate) dirs: Vec<String>,

    /// Throughput runs per direction to the peer.
    #[arg(long, default_value_t = 1, value_parser = crate::units::ranged(1u32, 20))]
    pub(crate) runs: u32,

    /// Seconds of CPU stress while watching for thermal throttling (0: none).
    #[arg(long, default_value_t = 3, value_name = "S", value_parser = crate::units::ranged(0u64, 600))]
    pub(crate) stress: u64,

    /// Size written and read back in each --dir: 256M, 1G (binary units; a
    /// plain number is MiB; 0: check the mount options only).
    #[arg(long, default_value = "256M", value_name = "SIZE", value_parser = super::bench_parse::disk_size_mib(0))]
    pub(crate) disk_size: u64,

    /// Seconds per throughput run.
    #[arg(long, default_value_t = 2, value_parser = crate::units::ranged(1u32, 60))]
    pub(crate) time: u32,

    /// Will this host carry it? A named workload, optionally times a count:
    /// plex-4k, plex-1080p, plex-transcode-1080p, nfs-backup, vm-disk
    /// (`plex-4k:3` = three streams). Judged per layer against what doctor
    /// measures: the path to the client (--peer), the storage (the first
    /// --dir), the CPU (a 5 s run). Repeatable.
    #[arg(long = "workload", value_name = "NAME[:COUNT]", value_parser = workload_spec)]
    pub(crate) workloads: Vec<String>,

    /// Your own needs, per layer: net=400M (bit/s), disk-read=100MB/s,
    /// disk-randread=5000iops, cpu=3000 (sysbench events/s).
    #[arg(long = "need", value_name = "LAYER=VALUE,...", value_parser = need_spec)]
    pub(crate) needs: Vec<String>,

    #[command(flatten)]
    pub(crate) fleet: super::fleet::FleetArgs,
}

fn workload_spec(s: &str) -> Result<String, String> {
    crate::workload::Workload::parse(s).map(|_| s.to_string())
}

fn need_spec(s: &str) -> Result<String, String> {
    crate::workload::Workload::parse_needs(s).map(|_| format!("need:{s}"))
}

impl DoctorArgs {
    /// What the flags ask for: the one request both paths run
    /// (`Manager.Doctor`'s options are its wire form).
    fn request(&self) -> DoctorRequest {
        let (prometheus, host_label) = self.fleet.wire();
        DoctorRequest {
            interfaces: self.interfaces.clone(),
            peer: self.peer.clone(),
            dirs: self.dirs.clone(),
            runs: self.runs,
            stress_s: u32::try_from(self.stress).unwrap_or(u32::MAX),
            disk_size_mib: u32::try_from(self.disk_size).unwrap_or(u32::MAX),
            time_s: self.time,
            // The workloads as the bus carries them (`plex-4k:3`, `need:…`).
            workloads: self.workloads.iter().chain(&self.needs).cloned().collect(),
            workload_runs: true,
            prometheus,
            host_label,
        }
    }
}

pub(crate) fn run(global: &Global, args: DoctorArgs) -> i32 {
    let request = args.request();
    if let Err(e) = request.options() {
        eprintln!("hlctl doctor: {e}");
        return exit::INVALID;
    }
    let remote = match super::backend::Backend::select(global, super::backend::Need::Nothing) {
        Ok(super::backend::Backend::Bus(r)) => Some(r),
        Ok(super::backend::Backend::Local { .. }) => None,
        Err(e) => return e.report(),
    };
    let bar = ProgressBar::new(global.json);
    let report = match remote {
        Some(r) => through_daemon(&r, request, &bar),
        None => in_process(global, &request, &bar),
    };
    bar.finish();
    let report = match report {
        Ok(r) => r,
        Err(e) => return e.report(),
    };
    if global.json {
        print_json(&report);
    } else {
        print!("{}", render(&report));
    }
    exit::OK
}

/// Run the doctor here and store its report in the history.
fn in_process(
    global: &Global,
    request: &DoctorRequest,
    bar: &ProgressBar,
) -> Result<Report, CliError> {
    let cancel = Cancel::new();
    let who = crate::ops::Requester::this_process();
    match crate::ops::doctor::run_request(request, &global.paths(), who, bar, &cancel) {
        Ok(ran) => Ok(super::kept::warn_unstored(ran)),
        Err(e) => Err(CliError::new(format!("doctor: {e}"), e.class().exit_code())),
    }
}

/// Run the doctor as an hlctld job (it stores the report in the history).
fn through_daemon(
    r: &Remote,
    request: DoctorRequest,
    bar: &ProgressBar,
) -> Result<Report, CliError> {
    let params = DoctorParams {
        request,
        detached: false,
    };
    let call = JobCall {
        what: "doctor",
        progress: bar,
        confirm: false,
        cancelling: "cancelling",
        partial_ok: false,
    };
    r.follow(call, r.start(&verb::DOCTOR, params.encode()))
}

fn finding_text(f: &Finding) -> String {
    let mut s = format!(
        "{:<8}  {}\n",
        f.severity.to_string().to_uppercase(),
        f.title
    );
    s += &format!("          id: {}\n", f.id);
    for e in &f.evidence {
        s += &format!("          evidence: {} = {}\n", e.name, e.value);
    }
    s += &format!("          why: {}\n", f.why);
    for l in &f.fix {
        s += &format!("          fix: {l}\n");
    }
    s
}

/// The lines of a list of checks, a note said once: checks with the same
/// name and detail on several interfaces share one line (`link-speed (vb,
/// va): … nominal …`), in the order they first appear.
fn check_lines(checks: &[Check]) -> String {
    let mut groups: Vec<(&str, &str, Vec<&str>)> = Vec::new();
    for c in checks {
        let iface = c.interface.as_deref();
        match groups
            .iter_mut()
            .find(|(name, detail, _)| *name == c.check && *detail == c.detail)
        {
            Some((_, _, ifaces)) => ifaces.extend(iface),
            None => groups.push((&c.check, &c.detail, iface.into_iter().collect())),
        }
    }
    let mut s = String::new();
    for (name, detail, ifaces) in groups {
        if ifaces.is_empty() {
            s += &format!("  {name}: {detail}\n");
        } else {
            s += &format!("  {name} ({}): {detail}\n", ifaces.join(", "));
        }
    }
    s
}

/// The text report.
pub(crate) fn render(r: &Report) -> String {
    let mut s = format!(
        "hlctl doctor on {} (kernel {}), interfaces: {}{}\n\n",
        r.host.host,
        r.host.kernel,
        if r.interfaces.is_empty() {
            "none".to_string()
        } else {
            r.interfaces.join(", ")
        },
        r.peer
            .as_ref()
            .map(|p| format!(", peer {}", p.peer.label()))
            .unwrap_or_default()
    );
    if r.findings.is_empty() {
        s += "No problems found.\n\n";
    } else {
        s += &format!("{} finding(s):\n\n", r.findings.len());
        for f in &r.findings {
            s += &finding_text(f);
            s.push('\n');
        }
    }
    if !r.passed.is_empty() {
        s += "Passed:\n";
        s += &check_lines(&r.passed);
        s.push('\n');
    }
    if !r.not_checked.is_empty() {
        s += "Not checked:\n";
        s += &check_lines(&r.not_checked);
    }
    for c in r.limits.iter().filter_map(|l| l.cores.as_ref()) {
        s += &format!("Cores: {c}\n");
    }
    s += &workload_text(&r.workloads);
    s
}

/// "Will it carry …": per workload, each layer's need, figure and verdict.
pub(crate) fn workload_text(answers: &[crate::workload::Answer]) -> String {
    let mut s = String::new();
    for a in answers {
        s += &format!("\nWorkload {}: {}\n", a.workload.label(), a.verdict);
        for r in &a.rows {
            let measured = r.measured.map_or("-".to_string(), |v| r.layer.format(v));
            let headroom = r
                .headroom_percent
                .map_or(String::new(), |h| format!(" ({h:+.0}%)"));
            s += &format!(
                "  {:<13} needs {:<15} measured {:<15} {}{headroom}  [{}]\n",
                r.layer.name(),
                r.layer.format(r.needed),
                measured,
                r.verdict,
                r.source
            );
        }
        s += &format!("  {}\n", a.summary);
    }
    s
}
