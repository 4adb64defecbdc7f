//! `set --try` and `sysctl --try` (Link.ApplyChanges and Manager.SetSysctl
//! with `rollback_timeout_s`): a change kept only once confirmed, like
//! `netplan try`. The values it overwrites are journalled first in the
//! tuner's commit-confirm journal ([`crate::tune::checkpoint`]), with the
//! deadline, so whoever finds the journal restores it: the caller at the
//! deadline or on cancel, hlctld's watchdog at the deadline, hlctld's start
//! after a crash, `hlctl rollback`. A `--persist` is written only once the
//! change is confirmed.
//!
//! NIC changes journal under the interface's name; sysctls under
//! [`SYSCTL_JOURNAL`] (not a valid interface name), so one sysctl try runs
//! at a time.

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::nic::error::NicError;
use crate::nic::model::ChangeSet;
use crate::nic::netlink::Netlink;
use crate::nic::set::SetReply;
use crate::paths::Paths;
use crate::sysctl::SysctlError;
use crate::sysctl::set::SysctlReply;
use crate::tune::TuneError;
use crate::tune::change::Change;
use crate::tune::checkpoint::Checkpoint;

/// How a change runs: the one place that decides what `--dry-run`,
/// `--persist` and `--try` (`dry_run`, `persist`, `rollback_timeout_s` on
/// the bus) mean together. A dry run changes nothing, so it persists
/// nothing and waits for no confirmation; a try of 0 s is no try.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct ChangeMode {
    pub(crate) dry_run: bool,
    pub(crate) persist: bool,
    /// Seconds to wait for the confirmation; 0: kept at once.
    pub(crate) try_s: u32,
}

impl ChangeMode {
    pub(crate) fn new(dry_run: bool, persist: bool, try_s: Option<u32>) -> ChangeMode {
        ChangeMode {
            dry_run,
            persist: persist && !dry_run,
            try_s: if dry_run { 0 } else { try_s.unwrap_or(0) },
        }
    }

    /// The seconds of a try, when this change is one.
    pub(crate) fn try_seconds(&self) -> Option<u32> {
        (self.try_s > 0).then_some(self.try_s)
    }
}

/// The journal name of a sysctl try (`:` is not allowed in interface names).
pub(crate) const SYSCTL_JOURNAL: &str = ":sysctl";

/// The start of a try's journal id (a tune's has none).
pub(crate) const ID_PREFIX: &str = "try-";

/// The default window of `--try` without a value, in seconds.
pub(crate) const DEFAULT_SECONDS: u32 = 120;

/// The longest window allowed, in seconds.
pub(crate) const MAX_SECONDS: u32 = 86_400;

/// Why a try could not start (nothing is left changed).
#[derive(Debug, thiserror::Error)]
pub(crate) enum TryError {
    #[error(transparent)]
    Nic(#[from] NicError),
    #[error(transparent)]
    Sysctl(#[from] SysctlError),
    #[error("{}", journal_message(.0))]
    Journal(#[from] TuneError),
}

/// A journal that cannot be written (a full or read-only disk) stops the try
/// before it changes anything: said so, with the file and the errno's text.
fn journal_message(e: &TuneError) -> String {
    match e {
        TuneError::Io { .. } => format!(
            "nothing was changed: the try's journal (what restores the old values at the deadline) cannot be written: {e}"
        ),
        _ => e.to_string(),
    }
}

/// What is being tried: re-applied with `persist` once confirmed.
enum What {
    Nic { iface: String, cs: Box<ChangeSet> },
    Sysctl { assignments: Vec<(String, String)> },
}

/// A change applied and journalled, waiting for its confirmation.
pub(crate) struct Pending {
    cp: Checkpoint,
    paths: Paths,
    what: What,
    persist: bool,
    deadline: Instant,
    timeout: Duration,
}

/// How a try ended.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct TryEnd {
    /// The change stays.
    pub(crate) kept: bool,
    /// Why: `confirmed`, `the deadline passed`, `cancelled`, ...
    pub(crate) why: String,
    /// The window, in seconds.
    pub(crate) timeout_s: u32,
    /// Where it was persisted once confirmed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) persisted: Option<String>,
    /// What could not be put back, or why persisting failed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) errors: Vec<String>,
}

/// `set IFACE ... --try`: journal what `cs` overwrites, apply it (never
/// persisted yet). `None` when the change failed (the engine restored it
/// and the journal is gone) and nothing waits for a confirmation.
pub(crate) fn begin_set(
    nl: &mut Netlink,
    paths: &Paths,
    iface: &str,
    cs: &ChangeSet,
    persist: bool,
    timeout: Duration,
) -> Result<(SetReply, Option<Pending>), TryError> {
    let now = crate::nic::read::interface(nl, iface)?;
    let undo = Change {
        nic: crate::nic::registry::held(&now, cs),
        ..Default::default()
    };
    let mut cp = Checkpoint::begin_as(paths, iface, now.mac.clone(), timeout, ID_PREFIX)?;
    let reply = cp.change("set --try", &undo, || {
        crate::ops::nic::set_in_try(nl, paths, iface, cs)
    })?;
    let reply = match reply {
        Ok(r) if r.outcome.failure.is_none() => r,
        other => {
            cp.finish()?;
            return Ok((other?, None));
        }
    };
    let what = What::Nic {
        iface: iface.to_string(),
        cs: Box::new(cs.clone()),
    };
    let p = Pending::open(cp, paths, what, persist, timeout)?;
    Ok((reply, Some(p)))
}

/// `sysctl KEY=VALUE... --try`: as [`begin_set`] for sysctls.
pub(crate) fn begin_sysctl(
    paths: &Paths,
    assignments: &[(String, String)],
    persist: bool,
    timeout: Duration,
) -> Result<(SysctlReply, Option<Pending>), TryError> {
    let keys: Vec<String> = assignments.iter().map(|(k, _)| k.clone()).collect();
    // Validate first: nothing is journalled for a request that changes nothing.
    crate::ops::sysctl::set(paths, assignments, true, false)?;
    let undo = Change {
        sysctl: crate::ops::sysctl::show(paths, &keys)?
            .into_iter()
            .filter_map(|e| Some((e.key, e.value?)))
            .collect(),
        ..Default::default()
    };
    let mut cp = Checkpoint::begin_as(paths, SYSCTL_JOURNAL, None, timeout, ID_PREFIX)?;
    let reply = cp.change("sysctl --try", &undo, || {
        crate::ops::sysctl::set_in_try(paths, assignments)
    })?;
    let reply = match reply {
        Ok(r) if r.failed.is_none() => r,
        other => {
            cp.finish()?;
            return Ok((other?, None));
        }
    };
    let what = What::Sysctl {
        assignments: assignments.to_vec(),
    };
    let p = Pending::open(cp, paths, what, persist, timeout)?;
    Ok((reply, Some(p)))
}

impl Pending {
    /// The journal now waits for the confirmation until `timeout` from now.
    fn open(
        mut cp: Checkpoint,
        paths: &Paths,
        what: What,
        persist: bool,
        timeout: Duration,
    ) -> Result<Pending, TuneError> {
        cp.await_confirm(timeout)?;
        Ok(Pending {
            cp,
            paths: paths.clone(),
            what,
            persist,
            deadline: Instant::now() + timeout,
            timeout,
        })
    }

    /// When the change is restored unless confirmed.
    pub(crate) fn deadline(&self) -> Instant {
        self.deadline
    }

    /// The window in whole seconds.
    pub(crate) fn timeout_s(&self) -> u32 {
        u32::try_from(self.timeout.as_secs()).unwrap_or(u32::MAX)
    }

    /// The journal's id (its tune id), for logs.
    pub(crate) fn id(&self) -> String {
        self.cp.journal.tune_id.clone()
    }

    /// Confirmed: drop the journal (the change stays), then persist when
    /// asked. Refused when the journal was restored meanwhile (the deadline
    /// passed first).
    pub(crate) fn keep(self, nl: Option<&mut Netlink>) -> TryEnd {
        let timeout_s = self.timeout_s();
        let mut end = TryEnd {
            kept: true,
            why: "confirmed".into(),
            timeout_s,
            ..Default::default()
        };
        let Pending {
            cp,
            paths,
            what,
            persist,
            ..
        } = self;
        let original = cp.journal.original.clone();
        if let Err(e) = cp.finish() {
            return TryEnd {
                kept: false,
                why: format!("confirmed too late: {e}"),
                timeout_s,
                ..Default::default()
            };
        }
        if persist {
            let (persisted, error) = persist_now(nl, &paths, &what);
            if let (Some(_), What::Nic { iface, .. }) = (&persisted, &what)
                && let Err(e) = undo_from_before(&paths, iface, &original)
            {
                end.errors.push(e);
            }
            end.persisted = persisted;
            end.errors.extend(error);
        }
        end
    }

    /// Not confirmed: put the journalled values back now (unless someone
    /// else, such as hlctld's watchdog at the deadline, already did).
    pub(crate) fn restore(self, why: &str) -> TryEnd {
        let mut end = TryEnd {
            kept: false,
            why: why.to_string(),
            timeout_s: self.timeout_s(),
            ..Default::default()
        };
        let mut apply = crate::tune::rollback::restore_journal(&self.paths);
        match self.cp.locked(|| apply(&self.cp.journal)) {
            Ok(errors) if errors.is_empty() => {
                if let Err(e) = self.cp.finish() {
                    end.errors.push(e.to_string());
                }
            }
            Ok(errors) => end.errors = errors,
            // The journal is gone: restored by the watchdog or `hlctl rollback`.
            Err(TuneError::DeadlinePassed(_)) => {
                end.why = format!("{why} (restored by the deadline watchdog)")
            }
            Err(e) => end.errors.push(e.to_string()),
        }
        end
    }
}

/// Re-apply the confirmed change with `persist` (the live values already
/// hold, so only the files change). (persisted file, error).
fn persist_now(
    nl: Option<&mut Netlink>,
    paths: &Paths,
    what: &What,
) -> (Option<String>, Option<String>) {
    match what {
        What::Nic { iface, cs } => {
            let mut own;
            let nl = match nl {
                Some(n) => n,
                None => match Netlink::new() {
                    Ok(n) => {
                        own = n;
                        &mut own
                    }
                    Err(e) => return (None, Some(format!("persisting: netlink: {e}"))),
                },
            };
            match crate::ops::nic::set(nl, paths, iface, cs, false, true) {
                Ok(r) => (r.persisted, r.persist_error),
                Err(e) => (None, Some(format!("persisting: {e}"))),
            }
        }
        What::Sysctl { assignments } => {
            match crate::ops::sysctl::set(paths, assignments, false, true) {
                Ok(r) => (r.persisted, r.persist_error),
                Err(e) => (None, Some(format!("persisting: {e}"))),
            }
        }
    }
}

/// `hlctl rollback IFACE` after a confirmed `set --try --persist` puts back
/// the values from before the try: the record persisting wrote holds the
/// tried values (live when it was written), so take the journal's.
fn undo_from_before(paths: &Paths, iface: &str, original: &Change) -> Result<(), String> {
    let undo = |e: TuneError| format!("persisted, but `hlctl rollback` cannot undo it: {e}");
    let Some(mut last) = crate::tune::persist::load_last(paths, iface).map_err(undo)? else {
        return Ok(());
    };
    last.original.nic = original.nic.clone();
    crate::tune::persist::save_last(paths, &last).map_err(undo)
}

/// What a caller waits for while a try is pending.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Answer {
    Confirmed,
    Cancelled,
    TimedOut,
}

/// Wait until `confirmed` or `cancelled` says so, or the deadline passes,
/// checking every 100 ms.
pub(crate) fn wait(
    deadline: Instant,
    confirmed: &dyn Fn() -> bool,
    cancelled: &dyn Fn() -> bool,
) -> Answer {
    loop {
        if confirmed() {
            return Answer::Confirmed;
        }
        if cancelled() {
            return Answer::Cancelled;
        }
        if Instant::now() >= deadline {
            return Answer::TimedOut;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// End a try by `answer`.
pub(crate) fn finish(p: Pending, answer: Answer, nl: Option<&mut Netlink>) -> TryEnd {
    match answer {
        Answer::Confirmed => p.keep(nl),
        Answer::Cancelled => p.restore("cancelled"),
        Answer::TimedOut => p.restore("the deadline passed"),
    }
}

#[cfg(test)]
mod mode_tests {
    use super::ChangeMode;

    #[test]
    fn a_dry_run_neither_persists_nor_waits() {
        let m = ChangeMode::new(true, true, Some(30));
        assert_eq!((m.persist, m.try_seconds()), (false, None));
        let m = ChangeMode::new(false, true, Some(30));
        assert_eq!((m.persist, m.try_seconds()), (true, Some(30)));
        assert_eq!(ChangeMode::new(false, false, Some(0)).try_seconds(), None);
        assert_eq!(ChangeMode::new(false, false, None).try_s, 0);
    }
}
