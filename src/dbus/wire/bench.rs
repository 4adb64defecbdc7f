//! The parameters of the benchmarks the daemon runs as jobs (a JSON object per
//! kind, decoded strictly before anything starts). The same parameter types
//! are what `hlctl bench` builds from its flags on both paths, in-process and
//! through the daemon; the work closure for each kind is in
//! [`crate::dbus::daemon::bench`].
//!
//! - `net`: [`NetParams`]; `cpu`: [`CpuParams`]; `disk`: [`DiskParams`]
//!   (`dir` absolute); `stress`: [`StressParams`]; `file`: [`FileParams`]
//!   (`dir` absolute: a mount or local directory; an SSH target runs only in
//!   the user's own process, with their keys). Every field is optional
//!   but `net.host`, `disk.dir` and `file.dir`;
//!   defaults are those of `hlctl bench <kind>`.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::bench::cpu::CpuConfig;
use crate::bench::disk::{DiskConfig, EngineChoice, RwMode};
use crate::bench::file::{FileConfig, Target};
use crate::bench::net::{ClientConfig, KeepAlive, NetError, Protocol, TestDirection};
use crate::bench::stress::{MemAmount, StressConfig};
use crate::class::Class;
use crate::ops::bench_file::FileRequest;
use crate::path::Peer;
use crate::path::peer::DEFAULT_PORT;

/// The benchmark kinds this daemon runs.
pub(crate) const KINDS: &[&str] = &["net", "cpu", "disk", "stress", "file"];

fn seconds(flag: &str, s: f64) -> Result<Duration, String> {
    if s > 0.0 && s <= 86_400.0 {
        Ok(Duration::from_secs_f64(s))
    } else {
        Err(format!(
            "invalid --{flag}: must be more than 0 and at most 86400 seconds"
        ))
    }
}

/// `hlctl bench net` parameters (the client's flags).
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct NetParams {
    pub(crate) host: String,
    /// The server's port; [`DEFAULT_PORT`] (iperf3's) when left out.
    pub(crate) port: Option<u16>,
    #[serde(default)]
    pub(crate) udp: bool,
    pub(crate) time_s: Option<u32>,
    pub(crate) parallel: Option<u32>,
    /// `forward` (default), `reverse` or `bidir`.
    pub(crate) direction: Option<String>,
    pub(crate) bitrate_bps: Option<u64>,
    pub(crate) length: Option<u32>,
    pub(crate) window: Option<u32>,
    pub(crate) omit_s: Option<u32>,
    /// Seconds between interval reports; 0 turns them off.
    pub(crate) interval_s: Option<f64>,
    /// Seconds within which a busy server is tried again (0: fail at once);
    /// 600, `check`'s default, when left out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) busy_window_s: Option<u64>,
    /// `--skip-rx-copy` (iperf3 3.19's `skip_rx_copy`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) skip_rx_copy: bool,
    /// `--fq-rate`: each TCP stream's pacing rate in bit/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) fq_rate_bps: Option<u64>,
    /// `-Z`: TCP senders send with sendfile(2).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) zerocopy: bool,
    /// `--gsro`: UDP GSO on send, GRO on receive (iperf3 3.21).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) gsro: bool,
    /// `--cntl-ka[=IDLE/INTV/CNT]`: keepalive on the control connection;
    /// `""` for the kernel's defaults.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) cntl_ka: Option<String>,
}

/// The longest busy window a client may ask for (as `check`'s `busy_window_s`).
pub(crate) const MAX_BUSY_WINDOW_S: u64 = 86_400;

impl NetParams {
    /// The client configuration, validated like the CLI validates its flags.
    pub(crate) fn config(&self) -> Result<ClientConfig, String> {
        let mut c = ClientConfig::new(self.host.clone(), self.port.unwrap_or(DEFAULT_PORT));
        c.protocol = if self.udp {
            Protocol::Udp
        } else {
            Protocol::Tcp
        };
        c.time_s = self.time_s.unwrap_or(c.time_s);
        c.parallel = self.parallel.unwrap_or(c.parallel);
        c.direction = match self.direction.as_deref() {
            None | Some("forward") => TestDirection::Forward,
            Some("reverse") => TestDirection::Reverse,
            Some("bidir") => TestDirection::Bidir,
            Some(other) => {
                return Err(format!(
                    "invalid direction {other:?}: allowed forward, reverse, bidir"
                ));
            }
        };
        c.bandwidth_bps = self.bitrate_bps;
        c.len = self.length;
        c.window = self.window;
        c.omit_s = self.omit_s.unwrap_or(0);
        c.skip_rx_copy = self.skip_rx_copy;
        c.fq_rate_bps = self.fq_rate_bps.filter(|&r| r > 0);
        c.zerocopy = self.zerocopy;
        c.gsro = self.gsro;
        c.cntl_ka = self.cntl_ka.as_deref().map(KeepAlive::parse).transpose()?;
        match self.interval_s {
            Some(0.0) => c.interval = None,
            Some(i) if (0.1..=60.0).contains(&i) => c.interval = Some(Duration::from_secs_f64(i)),
            Some(i) => {
                return Err(format!(
                    "invalid --interval {i}: allowed 0.1 to 60 seconds, or 0 for none"
                ));
            }
            None => {}
        }
        match self.busy_window_s {
            Some(w) if w > MAX_BUSY_WINDOW_S => {
                return Err(format!(
                    "invalid --busy-window {w}: allowed 0 to {MAX_BUSY_WINDOW_S} seconds"
                ));
            }
            Some(w) => c.busy_window = Duration::from_secs(w),
            None => {}
        }
        c.validate().map_err(|e| e.to_string())?;
        Ok(c)
    }
}

/// How a network benchmark error is classed for the client's exit code.
pub(crate) fn net_class(e: &NetError) -> Class {
    match e {
        NetError::InvalidConfig(_) => Class::Invalid,
        NetError::Connect { source, .. }
            if source.kind() == std::io::ErrorKind::PermissionDenied =>
        {
            Class::NotPermitted
        }
        _ => Class::Failed,
    }
}

/// The class of a CPU benchmark error, both ways.
pub(crate) fn cpu_class(e: &crate::bench::cpu::CpuError) -> Class {
    match e {
        crate::bench::cpu::CpuError::InvalidConfig { .. } => Class::Invalid,
        _ => Class::Failed,
    }
}

/// The class of a stress run's error, both ways.
pub(crate) fn stress_class(e: &crate::bench::stress::StressError) -> Class {
    match e {
        crate::bench::stress::StressError::InvalidConfig { .. } => Class::Invalid,
        _ => Class::Failed,
    }
}

/// `hlctl bench cpu` parameters.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct CpuParams {
    pub(crate) threads: Option<u32>,
    pub(crate) time_s: Option<f64>,
    pub(crate) max_prime: Option<u32>,
    #[serde(default)]
    pub(crate) no_single: bool,
}

impl CpuParams {
    /// The engine configuration, checked like the CLI checks its flags.
    pub(crate) fn config(&self) -> Result<CpuConfig, String> {
        let mut cfg = CpuConfig::new();
        if let Some(t) = self.threads {
            if !(1..=4096).contains(&t) {
                return Err(format!(
                    "invalid --threads: {t} is out of range: allowed 1 to 4096"
                ));
            }
            cfg.threads = t as usize;
        }
        if let Some(s) = self.time_s {
            cfg.time = seconds("time", s)?;
        }
        if let Some(p) = self.max_prime {
            if p == 0 {
                return Err(
                    "invalid --max-prime: must be at least 1 (sysbench's default is 10000)".into(),
                );
            }
            cfg.max_prime = p;
        }
        cfg.single_thread_baseline = !self.no_single;
        Ok(cfg)
    }
}

/// `hlctl bench disk` parameters (not `--seq-dd`).
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct DiskParams {
    /// Absolute directory for the test files.
    pub(crate) dir: String,
    /// `read`, `write`, `randread`, `randwrite`, `randrw`.
    pub(crate) rw: Option<String>,
    pub(crate) bs: Option<u64>,
    pub(crate) size: Option<u64>,
    pub(crate) iodepth: Option<u32>,
    pub(crate) jobs: Option<u32>,
    pub(crate) runtime_s: Option<f64>,
    pub(crate) time_based: Option<bool>,
    pub(crate) direct: Option<bool>,
    /// `auto`, `io_uring`, `psync`.
    pub(crate) engine: Option<String>,
    pub(crate) rwmix_read: Option<u8>,
}

impl DiskParams {
    /// The engine configuration, fully validated.
    pub(crate) fn config(&self) -> Result<DiskConfig, String> {
        if !self.dir.starts_with('/') {
            return Err(format!(
                "invalid --dir {:?}: give an absolute path",
                self.dir
            ));
        }
        let mut cfg = DiskConfig::new(&self.dir);
        if let Some(rw) = &self.rw {
            cfg.rw = match rw.as_str() {
                "read" => RwMode::Read,
                "write" => RwMode::Write,
                "randread" => RwMode::RandRead,
                "randwrite" => RwMode::RandWrite,
                "randrw" => RwMode::RandRw,
                other => {
                    return Err(format!(
                        "invalid --rw {other:?}: allowed read, write, randread, randwrite, randrw"
                    ));
                }
            };
        }
        if let Some(e) = &self.engine {
            cfg.engine = match e.as_str() {
                "auto" => EngineChoice::Auto,
                "io_uring" => EngineChoice::IoUring,
                "psync" => EngineChoice::Psync,
                other => {
                    return Err(format!(
                        "invalid --engine {other:?}: allowed auto, io_uring, psync"
                    ));
                }
            };
        }
        cfg.bs = self.bs.unwrap_or(cfg.bs);
        cfg.size = self.size.unwrap_or(cfg.size);
        cfg.iodepth = self.iodepth.unwrap_or(cfg.iodepth);
        cfg.jobs = self.jobs.unwrap_or(cfg.jobs);
        if let Some(s) = self.runtime_s {
            cfg.runtime = seconds("runtime", s)?;
        }
        cfg.time_based = self.time_based.unwrap_or(cfg.time_based);
        cfg.direct = self.direct.unwrap_or(cfg.direct);
        cfg.rwmix_read = self.rwmix_read.unwrap_or(cfg.rwmix_read);
        cfg.validate().map_err(|e| e.to_string())?;
        Ok(cfg)
    }
}

/// `hlctl bench stress` parameters.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct StressParams {
    pub(crate) time_s: Option<f64>,
    pub(crate) cpu: Option<u32>,
    pub(crate) vm: Option<u32>,
    /// Memory per worker in bytes...
    pub(crate) vm_bytes: Option<u64>,
    /// ...or in percent of the available memory.
    pub(crate) vm_percent: Option<f64>,
    pub(crate) interval_s: Option<f64>,
}

impl StressParams {
    pub(crate) fn config(&self) -> Result<StressConfig, String> {
        let mut cfg = StressConfig::new();
        if let Some(s) = self.time_s {
            cfg.time = seconds("time", s)?;
        }
        if let Some(n) = self.cpu {
            cfg.cpu_workers = n as usize;
        }
        if let Some(n) = self.vm {
            cfg.vm_workers = n as usize;
        }
        match (self.vm_bytes, self.vm_percent) {
            (Some(_), Some(_)) => {
                return Err("invalid --vm-bytes: give bytes or a percentage, not both".into());
            }
            (Some(b), None) => cfg.vm_bytes = MemAmount::Bytes(b),
            (None, Some(p)) => cfg.vm_bytes = MemAmount::PercentOfAvailable(p),
            (None, None) => {}
        }
        if let Some(s) = self.interval_s {
            cfg.interval = seconds("interval", s)?;
        }
        Ok(cfg)
    }
}

/// `hlctl bench file --dir` parameters (an `ssh://` target is the CLI's
/// own: it runs with the user's keys, in their process).
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FileParams {
    /// Absolute directory: a mount the host has, or a local one.
    pub(crate) dir: String,
    pub(crate) size: Option<u64>,
    /// `HOST[:PORT]` of an iperf3 server for raw TCP.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) net_peer: Option<String>,
    #[serde(default)]
    pub(crate) no_net: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) net_time_s: Option<u32>,
    /// The local directory the file comes from (default /var/tmp).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) local_dir: Option<String>,
    #[serde(default)]
    pub(crate) no_disk: bool,
    #[serde(default)]
    pub(crate) no_crypto: bool,
    /// The fleet's Prometheus, where the server's own figures are read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) prometheus: Option<String>,
    /// The scrape label naming a host there (default `host`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) host_label: Option<String>,
}

impl FileParams {
    /// The request for `--dir`, validated.
    pub(crate) fn config(&self) -> Result<FileRequest, String> {
        if !self.dir.starts_with('/') {
            return Err(format!(
                "invalid --dir {:?}: give an absolute path",
                self.dir
            ));
        }
        self.request(Target::Dir(self.dir.clone().into()))
    }

    /// The request for `target` with these parameters, validated.
    pub(crate) fn request(&self, target: Target) -> Result<FileRequest, String> {
        let size = self.size.unwrap_or(crate::bench::file::DEFAULT_SIZE);
        let cfg = FileConfig::new(target, size).map_err(|e| e.to_string())?;
        let net_peer = match &self.net_peer {
            Some(p) => Some(Peer::parse(p).map_err(|e| format!("invalid --net-peer {p:?}: {e}"))?),
            None => None,
        };
        let net_time_s = self.net_time_s.unwrap_or(3);
        if !(1..=60).contains(&net_time_s) {
            return Err(format!(
                "invalid --net-time {net_time_s}: allowed 1 to 60 seconds"
            ));
        }
        if let Some(d) = self.local_dir.as_ref().filter(|d| !d.starts_with('/')) {
            return Err(format!("invalid --local-dir {d:?}: give an absolute path"));
        }
        let fleet = match &self.prometheus {
            Some(url) => Some(
                crate::matrix::Fleet::parse(url, self.host_label.as_deref())
                    .map_err(|e| e.to_string())?,
            ),
            None => None,
        };
        Ok(FileRequest {
            cfg,
            net_peer,
            fleet,
            net: !self.no_net,
            net_time_s,
            local_dir: self.local_dir.clone().map(Into::into),
            disk: !self.no_disk,
            crypto: !self.no_crypto,
        })
    }
}
