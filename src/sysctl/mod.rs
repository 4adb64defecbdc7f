//! TCP/network sysctls: the tuning set, validation, normalised comparison,
//! change with read-back and restore, and persistence in sysctl.d.
//!
//! Values are read from `/proc/sys` as the calling thread sees it, so inside a
//! network namespace the per-namespace `net.*` values are the ones changed.

pub(crate) mod error;
pub(crate) mod keys;
pub(crate) mod persist;
pub(crate) mod procfs;
pub(crate) mod set;
pub(crate) mod tcp_mem;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub(crate) use error::{Problem, SysctlError};

use crate::paths::Paths;

/// One key with its current value.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct Entry {
    pub(crate) key: String,
    /// `None` when the key does not exist here (e.g. global-only, seen from a namespace).
    pub(crate) value: Option<String>,
    pub(crate) about: Option<&'static str>,
}

/// One assignment: before, requested and the value the kernel holds afterwards.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Change {
    pub(crate) key: String,
    pub(crate) before: String,
    pub(crate) requested: String,
    pub(crate) after: Option<String>,
}

impl Change {
    /// The kernel holds what was requested (compared normalised).
    pub(crate) fn matches(&self) -> bool {
        self.after.as_deref() == Some(self.requested.as_str())
    }
}

/// Read the given keys, or the tuning set when `keys` is empty.
pub(crate) fn show(paths: &Paths, keys: &[String]) -> Result<Vec<Entry>, SysctlError> {
    let names: Vec<String> = if keys.is_empty() {
        keys::TUNING_SET
            .iter()
            .map(|k| k.name.to_string())
            .collect()
    } else {
        let problems: Vec<Problem> = keys.iter().filter_map(|k| check_name(k).err()).collect();
        if !problems.is_empty() {
            return Err(SysctlError::Invalid(problems));
        }
        keys.to_vec()
    };
    let mut out = Vec::new();
    for key in names {
        let value = procfs::read(&paths.proc_sys, &key).map_err(|source| SysctlError::Io {
            op: "read",
            key: key.clone(),
            source,
        })?;
        if value.is_none() && !keys.is_empty() {
            return Err(SysctlError::Invalid(vec![Problem::new(
                &key,
                None,
                absent(&key),
            )]));
        }
        let about = keys::lookup(&key).map(|k| k.about);
        out.push(Entry { key, value, about });
    }
    Ok(out)
}

/// What a refused write means for a key only the host's namespace sets.
fn why_denied(key: &str, e: &std::io::Error) -> &'static str {
    if keys::is_host_set(key) && e.kind() == std::io::ErrorKind::PermissionDenied {
        " (a network namespace other than the host's has its own value but may not \
         change it: set it on the host)"
    } else {
        ""
    }
}

/// Why `key` has no file under /proc/sys here.
fn absent(key: &str) -> &'static str {
    if keys::is_global(key) {
        "global, not per network namespace: only the host's namespace has it"
    } else {
        "no such key in this kernel (or network namespace)"
    }
}

fn check_name(key: &str) -> Result<(), Problem> {
    let problem = |message: &str| Problem::new(key, None, message);
    if !procfs::is_well_formed(key) {
        return Err(problem(
            "not a sysctl name: use dotted words like net.ipv4.tcp_rmem",
        ));
    }
    if !key.starts_with("net.") {
        return Err(problem(
            "hlctl only manages network sysctls: keys must start with 'net.'",
        ));
    }
    if keys::is_global(key) && crate::caps::in_container() {
        return Err(problem(
            "global, not per network namespace: from a container it would change the whole host; \
             set it on the host (hlctl sysctl there, or persist it and run `hlctl reapply` at boot)",
        ));
    }
    Ok(())
}

/// The congestion controls this kernel (namespace) offers.
pub(crate) fn available_congestion_controls(paths: &Paths) -> Vec<String> {
    procfs::read(&paths.proc_sys, "net.ipv4.tcp_available_congestion_control")
        .ok()
        .flatten()
        .map(|s| s.split(' ').map(str::to_string).collect())
        .unwrap_or_default()
}

/// Validate every assignment before touching anything. Returns the planned
/// changes (with current values) or every problem found.
pub(crate) fn plan(
    paths: &Paths,
    assignments: &[(String, String)],
) -> Result<Vec<Change>, SysctlError> {
    let available = available_congestion_controls(paths);
    let mut problems = Vec::new();
    let mut changes: Vec<Change> = Vec::new();
    for (key, value) in assignments {
        if let Err(p) = check_name(key) {
            problems.push(Problem {
                value: Some(value.clone()),
                ..p
            });
            continue;
        }
        let before = match procfs::read(&paths.proc_sys, key) {
            Ok(Some(v)) => v,
            Ok(None) => {
                problems.push(Problem::new(key, Some(value), absent(key)));
                continue;
            }
            Err(source) => {
                return Err(SysctlError::Io {
                    op: "read",
                    key: key.clone(),
                    source,
                });
            }
        };
        let requested = match keys::lookup(key) {
            Some(k) => match keys::validate(k, value, &available) {
                Ok(v) => v,
                Err(message) => {
                    problems.push(Problem::new(key, Some(value), message));
                    continue;
                }
            },
            None => keys::normalise(value),
        };
        if requested.is_empty() {
            problems.push(Problem::new(key, Some(value), "empty value"));
            continue;
        }
        if changes.iter().any(|c| &c.key == key) {
            problems.push(Problem::new(key, Some(value), "given twice"));
            continue;
        }
        changes.push(Change {
            key: key.clone(),
            before,
            requested,
            after: None,
        });
    }
    if problems.is_empty() {
        Ok(changes)
    } else {
        Err(SysctlError::Invalid(problems))
    }
}

/// What happened when a set of sysctl changes was applied.
#[derive(Debug, Serialize)]
pub(crate) struct Outcome {
    pub(crate) changes: Vec<Change>,
    /// The write that failed, if any; every earlier write was then restored.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) failed: Option<String>,
    /// Restore results after a failure: key → error (empty when all restored).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) restore_errors: BTreeMap<String, String>,
}

/// Apply planned changes in order, read each back; on the first failure,
/// restore every key already written to its `before` value.
pub(crate) fn apply(paths: &Paths, mut changes: Vec<Change>) -> Outcome {
    let mut failed = None;
    let mut done = 0;
    for c in changes.iter_mut() {
        if c.before == c.requested {
            c.after = Some(c.before.clone());
            done += 1;
            continue;
        }
        if let Err(e) = procfs::write(&paths.proc_sys, &c.key, &c.requested) {
            failed = Some(format!("{}: {e}{}", c.key, why_denied(&c.key, &e)));
            break;
        }
        crate::crashpoint::hit(crate::crashpoint::SYSCTL_WRITE_AFTER);
        c.after = procfs::read(&paths.proc_sys, &c.key).ok().flatten();
        done += 1;
    }
    let mut restore_errors = BTreeMap::new();
    if failed.is_some() {
        for c in changes[..done].iter_mut().rev() {
            if c.after.as_deref() == Some(c.before.as_str()) {
                continue;
            }
            match procfs::write(&paths.proc_sys, &c.key, &c.before) {
                Ok(()) => c.after = procfs::read(&paths.proc_sys, &c.key).ok().flatten(),
                Err(e) => {
                    restore_errors.insert(c.key.clone(), e.to_string());
                }
            }
        }
    }
    Outcome {
        changes,
        failed,
        restore_errors,
    }
}
