//! Benchmarks the daemon runs as jobs: the work closure for each kind, built
//! from its parameters ([`crate::dbus::wire::bench`]) once they decoded. The
//! work is [`crate::ops::bench`]'s, which stores the history row here, under
//! the caller's uid: the client never writes what it received.

use std::collections::HashMap;

use serde::Serialize;
use serde::de::DeserializeOwned;
use zbus::OwnedVariant;

use super::job::{Failure, Work};
use crate::bench::disk;
use crate::dbus::wire::bench::{
    CpuParams, DiskParams, FileParams, KINDS, NetParams, StressParams, cpu_class, net_class,
    stress_class,
};
use crate::dbus::wire::error::{Error, Result};
use crate::dbus::wire::params as wire_params;
use crate::ops::{self, Requester};
use crate::paths::Paths;

/// `StartBenchmark`'s parameters (`a{sv}`).
pub(crate) type Params = HashMap<String, OwnedVariant>;

fn parse<T: DeserializeOwned>(kind: &str, params: &Params) -> Result<T> {
    wire_params::decode(kind, params).map_err(Error::InvalidArgument)
}

/// A hint for a disk benchmark refused by the unit's read-only file system.
fn disk_message(e: &disk::DiskError, dir: &str) -> String {
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

fn to_json<T: Serialize>(v: T) -> std::result::Result<serde_json::Value, Failure> {
    serde_json::to_value(v).map_err(|e| Failure::from(e.to_string()))
}

fn warn_unstored(stored: &ops::Stored) {
    if let Some(w) = stored.warning() {
        tracing::warn!("benchmark result {w}");
    }
}

/// Decode `params` for `kind` and return the work to run for `who`.
pub(crate) fn prepare(kind: &str, params: &Params, paths: Paths, who: Requester) -> Result<Work> {
    match kind {
        "net" => {
            let p: NetParams = parse(kind, params)?;
            let cfg = p.config().map_err(Error::InvalidArgument)?;
            Ok(Box::new(move |progress, cancel| {
                let ran =
                    ops::bench::net(&paths, &cfg, who, progress, cancel).map_err(|e| Failure {
                        class: net_class(&e),
                        message: e.to_string(),
                    })?;
                warn_unstored(&ran.stored);
                to_json(ran.report).map(|v| ran.stored.marked(v))
            }))
        }
        "cpu" => {
            let p: CpuParams = parse(kind, params)?;
            let cfg = p.config().map_err(Error::InvalidArgument)?;
            Ok(Box::new(move |progress, cancel| {
                let ran =
                    ops::bench::cpu(&paths, &cfg, who, progress, cancel.clone()).map_err(|e| {
                        Failure {
                            class: cpu_class(&e),
                            message: e.to_string(),
                        }
                    })?;
                warn_unstored(&ran.stored);
                to_json(ran.report).map(|v| ran.stored.marked(v))
            }))
        }
        "disk" => {
            let p: DiskParams = parse(kind, params)?;
            let cfg = p.config().map_err(Error::InvalidArgument)?;
            let dir = p.dir;
            Ok(Box::new(move |progress, cancel| {
                let ran =
                    ops::bench::disk(&paths, &cfg, who, progress, cancel.clone()).map_err(|e| {
                        Failure {
                            class: e.class(),
                            message: disk_message(&e, &dir),
                        }
                    })?;
                warn_unstored(&ran.stored);
                to_json(ran.report).map(|v| ran.stored.marked(v))
            }))
        }
        "file" => {
            let p: FileParams = parse(kind, params)?;
            let req = p.config().map_err(Error::InvalidArgument)?;
            Ok(Box::new(move |progress, cancel| {
                let ran =
                    ops::bench::file(&paths, &req, who, progress, cancel).map_err(|e| Failure {
                        class: e.class(),
                        message: e.to_string(),
                    })?;
                warn_unstored(&ran.stored);
                to_json(ran.report).map(|v| ran.stored.marked(v))
            }))
        }
        "stress" => {
            let p: StressParams = parse(kind, params)?;
            let cfg = p.config().map_err(Error::InvalidArgument)?;
            Ok(Box::new(move |progress, cancel| {
                let report =
                    ops::bench::stress(&cfg, progress, cancel.clone()).map_err(|e| Failure {
                        class: stress_class(&e),
                        message: e.to_string(),
                    })?;
                to_json(report)
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

    /// Parameters written as a JSON object.
    fn p(json: &str) -> Params {
        let v: serde_json::Value = serde_json::from_str(json).unwrap();
        wire_params::encode(&v).unwrap()
    }

    fn prepare(kind: &str, params: &Params) -> Result<Work> {
        super::prepare(
            kind,
            params,
            Paths::default(),
            Requester {
                uid: 0,
                record: false,
            },
        )
    }

    #[test]
    fn parameters_are_checked_before_anything_runs() {
        assert!(prepare("cpu", &Params::new()).is_ok());
        assert!(prepare("cpu", &p(r#"{"threads": 2, "time_s": 0.5}"#)).is_ok());
        assert!(prepare("stress", &p(r#"{"time_s": 1, "vm_percent": 5}"#)).is_ok());
        for bad in [
            r#"{"threads": 0}"#,
            r#"{"threads": -1}"#,
            r#"{"time_s": 0}"#,
            r#"{"colour": 1}"#,
        ] {
            assert!(
                matches!(prepare("cpu", &p(bad)), Err(Error::InvalidArgument(_))),
                "{bad}"
            );
        }
        for bad in [
            r#"{"dir": "relative"}"#,
            r#"{"dir": "/tmp", "rw": "sideways"}"#,
            r#"{"dir": "/tmp", "engine": "aio"}"#,
            r#"{"dir": "/tmp", "bs": 0}"#,
            r#"{}"#,
        ] {
            assert!(
                matches!(prepare("disk", &p(bad)), Err(Error::InvalidArgument(_))),
                "{bad}"
            );
        }
        assert!(prepare("file", &p(r#"{"dir": "/tmp", "size": 1048576}"#)).is_ok());
        for bad in [
            r#"{}"#,
            r#"{"dir": "tmp"}"#,
            r#"{"dir": "/tmp", "size": 1000}"#,
            r#"{"dir": "/tmp", "net_time_s": 0}"#,
            r#"{"dir": "/tmp", "net_peer": "h:0"}"#,
            r#"{"dir": "/tmp", "target": "ssh://h/"}"#,
        ] {
            assert!(
                matches!(prepare("file", &p(bad)), Err(Error::InvalidArgument(_))),
                "{bad}"
            );
        }
        assert!(matches!(
            prepare("stress", &p(r#"{"vm_bytes": 1, "vm_percent": 1}"#)),
            Err(Error::InvalidArgument(_))
        ));
        assert!(matches!(
            prepare("gpu", &Params::new()),
            Err(Error::NotSupported(_))
        ));
        assert!(
            prepare(
                "net",
                &p(r#"{"host": "127.0.0.1", "time_s": 1, "direction": "bidir"}"#)
            )
            .is_ok()
        );
        for bad in [
            r#"{}"#,
            r#"{"host": ""}"#,
            r#"{"host": "h", "direction": "up"}"#,
            r#"{"host": "h", "parallel": 0}"#,
            r#"{"host": "h", "interval_s": 99}"#,
        ] {
            assert!(
                matches!(prepare("net", &p(bad)), Err(Error::InvalidArgument(_))),
                "{bad}"
            );
        }
    }
}
