//! Crash points (issue 39 §1): named places where state changes, at which a
//! test can make the process kill itself, to check that what a crash leaves
//! is never torn and that a restart puts everything right.
//!
//! - `HLCTL_CRASH_AT=POINT[#N]`: the N-th pass (default 1) through POINT
//!   sends this process SIGKILL.
//! - `HLCTL_CRASH_LIST=FILE`: each point's name is appended to FILE the
//!   first time this process passes it (so a test can check that it reached
//!   every declared point, [`DECLARED`]).
//!
//! Both variables are read once, by [`init`] (called by `hlctl`'s and
//! `hlctld`'s start); a name that is not declared is refused there, with
//! the list of declared points.
//!
//! Why SIGKILL and not `abort()`: SIGKILL cannot be caught, runs no
//! destructor, no `atexit`, flushes no buffer and writes no core dump, and
//! takes every thread at once — the closest a process gets to a power cut
//! of itself. `abort()` raises SIGABRT, which a handler may catch and which
//! makes systemd-coredump collect a core: slower and less like a crash.
//!
//! Why an environment variable in the normal build and not a cargo feature:
//! the suite runs `cargo test` with the default features and its tests run
//! the real `hlctl`/`hlctld` binaries, which a test-only feature would not
//! be compiled into. The trade-off: the points are in every build, so the
//! variable would let whoever sets hlctld's environment (root, via its
//! unit) kill it at a chosen moment — which root can do anyway. With the
//! variables unset a pass costs one relaxed atomic load of a `bool` that
//! [`init`] left false (and nothing at all before [`init`] runs, as in the
//! unit tests).

use std::io::Write;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

/// Every crash point, in the order a change usually passes them.
pub(crate) const DECLARED: &[&str] = &[
    // A NIC change set (nic::apply): around each kernel request, around the read-back.
    NIC_STEP_BEFORE,
    NIC_STEP_AFTER,
    NIC_READBACK_BEFORE,
    NIC_READBACK_AFTER,
    // A sysctl change set (sysctl::apply): after each key's write.
    SYSCTL_WRITE_AFTER,
    // Crash-safe file writes (fsutil::Role::points), per file role: the temp file is
    // synced but not renamed; renamed but the directory not synced.
    "write:nic-settings:before-rename",
    "write:nic-settings:before-dir-sync",
    "write:sysctl-conf:before-rename",
    "write:sysctl-conf:before-dir-sync",
    "write:journal:before-rename",
    "write:journal:before-dir-sync",
    "write:last-tune:before-rename",
    "write:last-tune:before-dir-sync",
    "write:owner-file:before-rename",
    "write:owner-file:before-dir-sync",
    "write:owner-backup:before-rename",
    "write:owner-backup:before-dir-sync",
    // SQLite transactions (history): inside, before COMMIT; after COMMIT,
    // before the caller is told.
    HISTORY_ROW.0,
    HISTORY_ROW.1,
    BASELINE.0,
    BASELINE.1,
    USAGE_MINUTES.0,
    USAGE_MINUTES.1,
];

/// A history row (a result and its metrics): before COMMIT, after it.
pub(crate) const HISTORY_ROW: (&str, &str) = (
    "sqlite:history-row:before-commit",
    "sqlite:history-row:after-commit",
);
/// `baseline save`.
pub(crate) const BASELINE: (&str, &str) = (
    "sqlite:baseline:before-commit",
    "sqlite:baseline:after-commit",
);
/// hlctld's usage minute rows.
pub(crate) const USAGE_MINUTES: (&str, &str) = (
    "sqlite:usage-minutes:before-commit",
    "sqlite:usage-minutes:after-commit",
);

pub(crate) const NIC_STEP_BEFORE: &str = "nic:step:before";
pub(crate) const NIC_STEP_AFTER: &str = "nic:step:after";
pub(crate) const NIC_READBACK_BEFORE: &str = "nic:readback:before";
pub(crate) const NIC_READBACK_AFTER: &str = "nic:readback:after";
pub(crate) const SYSCTL_WRITE_AFTER: &str = "sysctl:write:after";

/// True once [`init`] found either variable set.
static ARMED: AtomicBool = AtomicBool::new(false);
/// Passes through the armed point so far.
static PASSES: AtomicU32 = AtomicU32::new(0);

struct Config {
    at: Option<(&'static str, u32)>,
    list: Option<std::path::PathBuf>,
    listed: Vec<&'static str>,
}

static CONFIG: Mutex<Option<Config>> = Mutex::new(None);

/// A crash-point variable that names no declared point, or a bad `#N`.
#[derive(Debug, thiserror::Error)]
#[error(
    "HLCTL_CRASH_AT={value}: {why}; allowed: POINT or POINT#N (N ≥ 1), POINT one of: {}",
    DECLARED.join(", ")
)]
pub(crate) struct CrashPointError {
    value: String,
    why: &'static str,
}

/// Read `HLCTL_CRASH_AT` and `HLCTL_CRASH_LIST` once, at the program's start.
pub(crate) fn init() -> Result<(), CrashPointError> {
    let at = match std::env::var("HLCTL_CRASH_AT") {
        Ok(v) if !v.is_empty() => Some(parse(&v)?),
        _ => None,
    };
    let list = std::env::var_os("HLCTL_CRASH_LIST")
        .filter(|v| !v.is_empty())
        .map(std::path::PathBuf::from);
    if at.is_none() && list.is_none() {
        return Ok(());
    }
    *CONFIG.lock().unwrap_or_else(|p| p.into_inner()) = Some(Config {
        at,
        list,
        listed: Vec::new(),
    });
    ARMED.store(true, Ordering::Relaxed);
    Ok(())
}

/// `POINT[#N]` → the declared name and N.
fn parse(value: &str) -> Result<(&'static str, u32), CrashPointError> {
    let bad = |why| CrashPointError {
        value: value.to_string(),
        why,
    };
    let (name, nth) = match value.split_once('#') {
        Some((n, k)) => (n, k.parse().ok().filter(|k| *k >= 1).ok_or(bad("bad #N"))?),
        None => (value, 1),
    };
    let name = DECLARED
        .iter()
        .find(|p| **p == name)
        .ok_or(bad("no such crash point"))?;
    Ok((name, nth))
}

/// Pass the crash point `name` (one of [`DECLARED`]).
#[inline]
pub(crate) fn hit(name: &'static str) {
    if ARMED.load(Ordering::Relaxed) {
        armed_hit(name);
    }
}

#[cold]
fn armed_hit(name: &'static str) {
    debug_assert!(DECLARED.contains(&name), "undeclared crash point {name}");
    let mut guard = CONFIG.lock().unwrap_or_else(|p| p.into_inner());
    let Some(c) = guard.as_mut() else { return };
    if let Some(list) = &c.list
        && !c.listed.contains(&name)
    {
        c.listed.push(name);
        // One line per write (O_APPEND): lines of processes sharing the file never mix.
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(list)
        {
            let _ = f.write_all(format!("{name}\n").as_bytes());
        }
    }
    if let Some((at, nth)) = c.at
        && at == name
        && PASSES.fetch_add(1, Ordering::Relaxed) + 1 == nth
    {
        // SAFETY: kill(2) on our own pid with a constant signal; nothing
        // after it runs.
        unsafe {
            libc::kill(libc::getpid(), libc::SIGKILL);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_counts_are_checked() {
        assert_eq!(parse("nic:step:before").unwrap(), ("nic:step:before", 1));
        assert_eq!(parse("nic:step:after#3").unwrap(), ("nic:step:after", 3));
        let e = parse("nic:step:sideways").unwrap_err().to_string();
        assert!(e.contains("no such crash point"), "{e}");
        assert!(e.contains("nic:readback:after"), "names the allowed: {e}");
        assert!(parse("nic:step:after#0").is_err());
        assert!(parse("nic:step:after#x").is_err());
    }
}
