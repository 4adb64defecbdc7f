//! Benchmarks the daemon runs as jobs: parameter decoding (strict, before
//! anything starts) and the work closure for each kind. Parameters are a JSON
//! object per kind:
//! - `cpu`: `{"threads": u32, "time_s": f64, "max_prime": u32, "no_single": bool}`
//!   (all optional; defaults as `hlctl bench cpu`);
//! - `disk`: `{"dir": "/abs/path", "rw": "read|write|randread|randwrite|randrw",
//!   "bs": u64, "size": u64, "iodepth": u32, "jobs": u32, "runtime_s": f64,
//!   "time_based": bool, "direct": bool}` (`dir` required).

use std::time::Duration;

use serde::Deserialize;

use super::error::{Error, Result};
use super::job::Work;
use crate::bench::cpu::{self, CpuConfig};
use crate::bench::disk::{self, DiskConfig, RwMode};

/// The benchmark kinds this daemon runs.
pub const KINDS: &[&str] = &["cpu", "disk"];

/// `hlctl bench cpu` parameters.
#[derive(Clone, Debug, Default, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct CpuParams {
    pub threads: Option<u32>,
    pub time_s: Option<f64>,
    pub max_prime: Option<u32>,
    #[serde(default)]
    pub no_single: bool,
}

impl CpuParams {
    /// The engine configuration, checked like the CLI checks its flags.
    pub fn config(&self) -> std::result::Result<CpuConfig, String> {
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
            if !(s > 0.0 && s <= 86_400.0) {
                return Err("invalid --time: must be more than 0 and at most 86400 seconds".into());
            }
            cfg.time = Duration::from_secs_f64(s);
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

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct DiskParams {
    dir: String,
    rw: Option<String>,
    bs: Option<u64>,
    size: Option<u64>,
    iodepth: Option<u32>,
    jobs: Option<u32>,
    runtime_s: Option<f64>,
    time_based: Option<bool>,
    direct: Option<bool>,
}

fn disk_config(p: DiskParams) -> std::result::Result<DiskConfig, String> {
    if !p.dir.starts_with('/') {
        return Err(format!("dir {:?}: give an absolute path", p.dir));
    }
    let mut cfg = DiskConfig::new(&p.dir);
    if let Some(rw) = &p.rw {
        cfg.rw = match rw.as_str() {
            "read" => RwMode::Read,
            "write" => RwMode::Write,
            "randread" => RwMode::RandRead,
            "randwrite" => RwMode::RandWrite,
            "randrw" => RwMode::RandRw,
            other => {
                return Err(format!(
                    "rw {other:?}: allowed read, write, randread, randwrite, randrw"
                ));
            }
        };
    }
    cfg.bs = p.bs.unwrap_or(cfg.bs);
    cfg.size = p.size.unwrap_or(cfg.size);
    cfg.iodepth = p.iodepth.unwrap_or(cfg.iodepth);
    cfg.jobs = p.jobs.unwrap_or(cfg.jobs);
    if let Some(s) = p.runtime_s {
        if !(s > 0.0 && s <= 86_400.0) {
            return Err("runtime_s: must be more than 0 and at most 86400".into());
        }
        cfg.runtime = Duration::from_secs_f64(s);
    }
    cfg.time_based = p.time_based.unwrap_or(cfg.time_based);
    cfg.direct = p.direct.unwrap_or(cfg.direct);
    cfg.validate().map_err(|e| e.to_string())?;
    Ok(cfg)
}

fn parse<T: for<'de> Deserialize<'de>>(kind: &str, params: &str) -> Result<T> {
    let params = if params.trim().is_empty() {
        "{}"
    } else {
        params
    };
    serde_json::from_str(params)
        .map_err(|e| Error::InvalidArgument(format!("benchmark {kind}: parameters: {e}")))
}

/// A hint for a disk benchmark refused by the unit's read-only file system.
fn disk_error(e: disk::DiskError, dir: &str) -> String {
    let text = e.to_string();
    if text.contains("Read-only file system") {
        format!(
            "{text}\nhlctld may only write where its unit allows: add the directory with \
             `systemctl edit hlctld` → [Service] ReadWritePaths={dir}"
        )
    } else {
        text
    }
}

/// Decode `params` (a JSON object) for `kind` and return the work to run.
pub fn prepare(kind: &str, params: &str) -> Result<Work> {
    match kind {
        "cpu" => {
            let p: CpuParams = parse(kind, params)?;
            let cfg = p.config().map_err(Error::InvalidArgument)?;
            Ok(Box::new(move |progress, cancel| {
                let report = cpu::run(&cfg, progress, cancel.clone()).map_err(|e| e.to_string())?;
                serde_json::to_value(report).map_err(|e| e.to_string())
            }))
        }
        "disk" => {
            let p: DiskParams = parse(kind, params)?;
            let dir = p.dir.clone();
            let cfg = disk_config(p).map_err(Error::InvalidArgument)?;
            Ok(Box::new(move |progress, cancel| {
                let report =
                    disk::run(&cfg, progress, cancel.clone()).map_err(|e| disk_error(e, &dir))?;
                serde_json::to_value(report).map_err(|e| e.to_string())
            }))
        }
        _ => Err(Error::NotSupported(format!(
            "benchmark {:?} is not offered by this daemon (offered: {})",
            kind.chars().take(64).collect::<String>(),
            KINDS.join(", ")
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_are_checked_before_anything_runs() {
        assert!(prepare("cpu", "").is_ok());
        assert!(prepare("cpu", r#"{"threads": 2, "time_s": 0.5}"#).is_ok());
        for bad in [
            r#"{"threads": 0}"#,
            r#"{"threads": -1}"#,
            r#"{"time_s": 0}"#,
            r#"{"colour": 1}"#,
            "[1,2]",
            "{",
        ] {
            assert!(
                matches!(prepare("cpu", bad), Err(Error::InvalidArgument(_))),
                "{bad}"
            );
        }
        assert!(matches!(
            prepare("disk", r#"{"dir": "relative"}"#),
            Err(Error::InvalidArgument(_))
        ));
        assert!(matches!(
            prepare("disk", r#"{"dir": "/tmp", "rw": "sideways"}"#),
            Err(Error::InvalidArgument(_))
        ));
        assert!(matches!(prepare("gpu", "{}"), Err(Error::NotSupported(_))));
    }
}
