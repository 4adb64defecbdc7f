//! `/etc/hlctl/hlctl.toml`: what `hlctl check` measures and when, where the
//! Prometheus textfile goes, and whether `hlctl serve` is socket-activated.
//!
//! - [`load`]: reading a file into a [`Config`] plus every [`ConfigProblem`] found
//!   (file, line, key); a bad key is dropped, the rest is used;
//! - [`systemd`]: the unit drop-ins and links the systemd generator writes.

pub(crate) mod load;
pub(crate) mod systemd;

use std::path::PathBuf;

use serde::Serialize;

pub(crate) use load::load;

/// `[check]`: what `hlctl check` measures.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct CheckConfig {
    /// Benchmark servers to measure to, both directions: `HOST[:PORT]`.
    pub(crate) peers: Vec<String>,
    /// Directories whose disk is measured.
    pub(crate) dirs: Vec<String>,
    /// `bench file` targets measured both ways: `ssh://[USER@]HOST[:PORT][/DIR]`
    /// or a directory (a network mount's, or a local one).
    pub(crate) files: Vec<String>,
    /// MiB written and read back per file target.
    pub(crate) file_size_mib: u64,
    /// `ssh -F FILE` for the SSH targets (hlctld, where checks run, does not
    /// see root's home: the file names the key and known hosts to use).
    pub(crate) ssh_config: Option<PathBuf>,
    /// Measure the CPU (single- and multi-threaded).
    pub(crate) cpu: bool,
    /// systemd calendar expression of the timer (`weekly`, `Sun *-*-* 03:00`).
    pub(crate) schedule: String,
    /// Seconds the timer may delay a run at random (hosts do not all start at once).
    pub(crate) randomized_delay_s: u64,
    /// Run a check after boot when the kernel release changed since the last one.
    pub(crate) after_kernel_change: bool,
    /// The baseline to compare with; the previous check when unset or missing.
    pub(crate) baseline: Option<String>,
    /// A change larger than this (percent) is a regression or an improvement.
    pub(crate) threshold_percent: f64,
    /// Seconds per network run.
    pub(crate) time_s: u32,
    /// MiB written and read per directory.
    pub(crate) disk_size_mib: u64,
    /// Seconds of the random-read disk run and of each CPU run.
    pub(crate) bench_time_s: u64,
    /// Seconds within which a busy peer is retried (random back-off).
    pub(crate) busy_window_s: u64,
}

impl Default for CheckConfig {
    fn default() -> Self {
        CheckConfig {
            peers: Vec::new(),
            dirs: Vec::new(),
            files: Vec::new(),
            file_size_mib: 256,
            ssh_config: None,
            cpu: true,
            schedule: "weekly".into(),
            randomized_delay_s: 3600,
            after_kernel_change: true,
            baseline: None,
            threshold_percent: 10.0,
            time_s: 10,
            disk_size_mib: 256,
            bench_time_s: 10,
            busy_window_s: 600,
        }
    }
}

/// `[metrics]`: the node_exporter textfile collector's directory.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct MetricsConfig {
    /// Where `hlctl.prom` is written; no metrics file when unset.
    pub(crate) textfile_dir: Option<PathBuf>,
    /// hlctld waits this long after a link change before rewriting the file.
    pub(crate) debounce_s: u64,
}

impl Default for MetricsConfig {
    fn default() -> Self {
        MetricsConfig {
            textfile_dir: None,
            debounce_s: 2,
        }
    }
}

/// `[serve]`: `hlctl-serve.socket` (socket activation on the port).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct ServeConfig {
    pub(crate) enable: bool,
    pub(crate) port: u16,
    /// iperf3's authentication (`hlctl serve --rsa-private-key-path`):
    /// with `authorized_users_path`, the socket's server serves only clients
    /// that authenticate.
    pub(crate) rsa_private_key_path: Option<PathBuf>,
    pub(crate) authorized_users_path: Option<PathBuf>,
    /// `--time-skew-threshold` (seconds).
    pub(crate) time_skew_threshold: Option<u32>,
    /// `--use-pkcs1-padding`: for iperf3 3.12–3.16 clients.
    pub(crate) use_pkcs1_padding: bool,
}

impl Default for ServeConfig {
    fn default() -> Self {
        ServeConfig {
            enable: false,
            port: crate::path::peer::DEFAULT_PORT,
            rsa_private_key_path: None,
            authorized_users_path: None,
            time_skew_threshold: None,
            use_pkcs1_padding: false,
        }
    }
}

/// `[workload]`: what `hlctl check` must still carry (`run = ["plex-4k:3"]`,
/// `need = "net=400M,cpu=3000"`), judged on every check's figures.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub(crate) struct WorkloadConfig {
    /// Specs as the bus carries them: `plex-4k:3`, `need:net=400M`.
    pub(crate) specs: Vec<String>,
}

impl WorkloadConfig {
    pub(crate) fn workloads(&self) -> Vec<crate::workload::Workload> {
        self.specs
            .iter()
            .filter_map(|s| crate::workload::Workload::parse_spec(s).ok())
            .collect()
    }
}

/// `[usage]`: hlctld's sampling of link usage (`hlctl usage`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct UsageConfig {
    /// Sample at all (default true).
    pub(crate) enable: bool,
    /// Days the per-minute rows are kept.
    pub(crate) minute_days: u32,
    /// Days the per-hour rows are kept.
    pub(crate) retention_days: u32,
    /// Links sampled although their speed is nominal (a bridge, a veth),
    /// each with the speed to judge it against (bit/s; `None`: the one it
    /// reports): `links = ["vmbr0:1G"]`.
    pub(crate) links: Vec<(String, Option<f64>)>,
}

impl Default for UsageConfig {
    fn default() -> Self {
        UsageConfig {
            enable: true,
            minute_days: 14,
            retention_days: 400,
            links: Vec::new(),
        }
    }
}

impl UsageConfig {
    /// `NAME` or `NAME:SPEED` (`vmbr0:1G`, `veth1:110M`).
    pub(crate) fn parse_link(s: &str) -> Result<(String, Option<f64>), String> {
        let (name, speed) = match s.split_once(':') {
            Some((n, sp)) => (n, Some(crate::workload::needs::rate(sp)?)),
            None => (s, None),
        };
        if name.is_empty() || name.len() > 15 || name.contains(['/', ' ']) {
            return Err(format!(
                "'{s}': NAME or NAME:SPEED, an interface name of 1 to 15 bytes (e.g. vmbr0:1G)"
            ));
        }
        Ok((name.to_string(), speed))
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub(crate) struct Config {
    pub(crate) check: CheckConfig,
    pub(crate) metrics: MetricsConfig,
    pub(crate) serve: ServeConfig,
    pub(crate) workload: WorkloadConfig,
    pub(crate) usage: UsageConfig,
}

impl Config {
    /// The peers, parsed (the loader dropped the invalid ones).
    pub(crate) fn peers(&self) -> Vec<crate::path::Peer> {
        self.check
            .peers
            .iter()
            .filter_map(|p| crate::path::Peer::parse(p).ok())
            .collect()
    }

    /// True when `hlctl check` has something to measure.
    pub(crate) fn check_has_work(&self) -> bool {
        !self.check.peers.is_empty()
            || !self.check.dirs.is_empty()
            || !self.check.files.is_empty()
            || self.check.cpu
    }
}
