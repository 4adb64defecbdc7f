//! Checkpoints: before each change, the values it will overwrite are
//! journalled to disk (atomically) together with a deadline. Whoever finds a
//! journal whose deadline passed, or whose owner died, restores it:
//!
//! - the tuner itself, on error or cancel;
//! - a watchdog ([`spawn_watchdog`]) in the daemon (or in `--local` runs), when
//!   the deadline passes without the tuner renewing it or the client confirming;
//! - [`restore_pending`] when the daemon starts after a crash;
//! - `hlctl rollback`.
//!
//! One journal per interface: `<state>/tune/journal-<iface>.json`. Every
//! operation takes an exclusive `flock` on `<state>/tune/lock`, so the
//! watchdog never restores half-way through a change.

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::TuneError;
use super::change::Change;
use crate::paths::Paths;

pub(crate) const JOURNAL_VERSION: u32 = 1;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "phase", rename_all = "snake_case")]
pub(crate) enum Phase {
    /// A candidate is applied and being measured.
    Trying { candidate: String },
    /// Between candidates: only kept changes are applied.
    Settled,
    /// Done; kept changes wait for the client's confirmation.
    AwaitingConfirm,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Journal {
    pub(crate) version: u32,
    pub(crate) tune_id: String,
    pub(crate) interface: String,
    pub(crate) mac: Option<String>,
    pub(crate) owner_pid: u32,
    /// The owner's start time (clock ticks since boot), to tell a reused pid.
    pub(crate) owner_start: u64,
    pub(crate) started: i64,
    /// Unix milliseconds after which the journal is restored.
    pub(crate) deadline_ms: i64,
    #[serde(flatten)]
    pub(crate) phase: Phase,
    /// The value every touched setting had before the tune.
    pub(crate) original: Change,
}

impl Journal {
    pub(crate) fn expired(&self) -> bool {
        now_ms() > self.deadline_ms
    }

    /// True while the process that wrote it is still running.
    pub(crate) fn owner_alive(&self) -> bool {
        process_start(self.owner_pid) == Some(self.owner_start)
    }
}

pub(crate) fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// Field 22 of /proc/PID/stat: start time in clock ticks after boot.
pub(crate) fn process_start(pid: u32) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_process_start(&s)
}

/// Field 22 of a /proc/PID/stat text.
pub(crate) fn parse_process_start(s: &str) -> Option<u64> {
    let rest = &s[s.rfind(')')? + 1..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

pub(crate) fn dir(paths: &Paths) -> PathBuf {
    paths.state_dir.join("tune")
}

pub(crate) fn journal_path(paths: &Paths, iface: &str) -> PathBuf {
    dir(paths).join(format!("journal-{iface}.json"))
}

/// An exclusive lock on the tune directory, released on drop.
pub(crate) struct Lock(#[allow(dead_code)] nix::fcntl::Flock<File>);

pub(crate) fn lock(paths: &Paths) -> Result<Lock, TuneError> {
    let d = dir(paths);
    std::fs::create_dir_all(&d).map_err(|e| TuneError::io(&d, e))?;
    let p = d.join("lock");
    let f = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&p)
        .map_err(|e| TuneError::io(&p, e))?;
    nix::fcntl::Flock::lock(f, nix::fcntl::FlockArg::LockExclusive)
        .map(Lock)
        .map_err(|(_, e)| TuneError::io(&p, std::io::Error::from(e)))
}

pub(crate) fn read(path: &Path) -> Result<Option<Journal>, TuneError> {
    match std::fs::read_to_string(path) {
        Ok(t) => serde_json::from_str(&t)
            .map(Some)
            .map_err(|e| TuneError::Journal(format!("{}: {e}", path.display()))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(TuneError::io(path, e)),
    }
}

fn write(path: &Path, j: &Journal) -> Result<(), TuneError> {
    let mut text = serde_json::to_string_pretty(j).unwrap_or_default();
    text.push('\n');
    crate::fsutil::write_state(crate::fsutil::Role::Journal, path, text.as_bytes(), 0o600)
        .map_err(|e| TuneError::io(path, e))
}

/// Every journal in the state directory.
pub(crate) fn all(paths: &Paths) -> Vec<(PathBuf, Journal)> {
    let Ok(rd) = std::fs::read_dir(dir(paths)) else {
        return Vec::new();
    };
    let mut v: Vec<(PathBuf, Journal)> = rd
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("journal-") && n.ends_with(".json"))
        })
        .filter_map(|p| read(&p).ok().flatten().map(|j| (p, j)))
        .collect();
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v
}

/// The tuner's handle on its journal.
pub(crate) struct Checkpoint {
    paths: Paths,
    path: PathBuf,
    pub(crate) journal: Journal,
    timeout: Duration,
}

impl Checkpoint {
    /// Start a journal for `iface`. Refused (Busy) while another live tune owns it;
    /// a stale journal (owner gone) must be restored first (`hlctl rollback`).
    pub(crate) fn begin(
        paths: &Paths,
        iface: &str,
        mac: Option<String>,
        timeout: Duration,
    ) -> Result<Checkpoint, TuneError> {
        Self::begin_as(paths, iface, mac, timeout, "")
    }

    /// [`Checkpoint::begin`] with an id starting with `prefix` (`try-` for
    /// a `set --try`), so whoever restores it can say what it was.
    pub(crate) fn begin_as(
        paths: &Paths,
        iface: &str,
        mac: Option<String>,
        timeout: Duration,
        prefix: &str,
    ) -> Result<Checkpoint, TuneError> {
        let first = Self::fresh(iface, mac, timeout, prefix);
        Self::begin_keyed(paths, iface, timeout, first)
    }

    /// A journal under `key` (its file `journal-KEY.json`) holding `first`
    /// from its first write, e.g. a change set's snapshot (`ops::nic`).
    pub(crate) fn begin_keyed(
        paths: &Paths,
        key: &str,
        timeout: Duration,
        first: Journal,
    ) -> Result<Checkpoint, TuneError> {
        let _l = lock(paths)?;
        let path = journal_path(paths, key);
        if let Some(j) = read(&path)? {
            return Err(if j.owner_alive() {
                TuneError::Busy(format!(
                    "{}: tune {} (pid {}) is running",
                    j.interface, j.tune_id, j.owner_pid
                ))
            } else {
                let iface = &j.interface;
                TuneError::Busy(format!(
                    "{iface}: an unfinished tune (pid {}, gone) left changes pending: run `hlctl rollback {iface}` first",
                    j.owner_pid
                ))
            });
        }
        let journal = first;
        write(&path, &journal)?;
        Ok(Checkpoint {
            paths: paths.clone(),
            path,
            journal,
            timeout,
        })
    }

    /// A new journal of this process for `iface`, its deadline `timeout` from now.
    pub(crate) fn fresh(
        iface: &str,
        mac: Option<String>,
        timeout: Duration,
        prefix: &str,
    ) -> Journal {
        let pid = std::process::id();
        Journal {
            version: JOURNAL_VERSION,
            tune_id: format!("{prefix}{}-{pid}", now_ms()),
            interface: iface.to_string(),
            mac,
            owner_pid: pid,
            owner_start: process_start(pid).unwrap_or(0),
            started: crate::host::now_unix(),
            deadline_ms: now_ms() + timeout.as_millis() as i64,
            phase: Phase::Settled,
            original: Change::default(),
        }
    }

    /// Still ours: the file exists with our id (a watchdog may have restored it).
    fn check_ours(&self) -> Result<(), TuneError> {
        match read(&self.path)? {
            Some(j) if j.tune_id == self.journal.tune_id => Ok(()),
            _ => Err(TuneError::DeadlinePassed(self.journal.interface.clone())),
        }
    }

    fn save(&mut self) -> Result<(), TuneError> {
        self.check_ours()?;
        write(&self.path, &self.journal)
    }

    /// Journal `undo` (the values `candidate` will overwrite) and a fresh
    /// deadline, then run `apply` under the lock.
    pub(crate) fn change<T>(
        &mut self,
        candidate: &str,
        undo: &Change,
        apply: impl FnOnce() -> T,
    ) -> Result<T, TuneError> {
        let _l = lock(&self.paths)?;
        self.journal.original.keep_first(undo);
        self.journal.phase = Phase::Trying {
            candidate: candidate.to_string(),
        };
        self.journal.deadline_ms = now_ms() + self.timeout.as_millis() as i64;
        self.save()?;
        Ok(apply())
    }

    /// Push the deadline out again (the tuner is alive and making progress).
    pub(crate) fn renew(&mut self) -> Result<(), TuneError> {
        let _l = lock(&self.paths)?;
        self.journal.deadline_ms = now_ms() + self.timeout.as_millis() as i64;
        self.save()
    }

    /// Run `f` (an undo) under the lock, then mark the journal settled.
    pub(crate) fn settle<T>(&mut self, f: impl FnOnce() -> T) -> Result<T, TuneError> {
        let _l = lock(&self.paths)?;
        let r = f();
        self.journal.phase = Phase::Settled;
        self.journal.deadline_ms = now_ms() + self.timeout.as_millis() as i64;
        self.save()?;
        Ok(r)
    }

    /// Kept changes now wait for confirmation until `timeout` from now.
    pub(crate) fn await_confirm(&mut self, timeout: Duration) -> Result<(), TuneError> {
        let _l = lock(&self.paths)?;
        self.journal.phase = Phase::AwaitingConfirm;
        self.journal.deadline_ms = now_ms() + timeout.as_millis() as i64;
        self.save()
    }

    /// Remove the journal (confirmed, or rolled back by the tuner itself).
    pub(crate) fn finish(self) -> Result<(), TuneError> {
        let _l = lock(&self.paths)?;
        self.check_ours()?;
        std::fs::remove_file(&self.path).map_err(|e| TuneError::io(&self.path, e))
    }

    /// Run `f` under the lock only if the journal is still ours.
    pub(crate) fn locked<T>(&self, f: impl FnOnce() -> T) -> Result<T, TuneError> {
        let _l = lock(&self.paths)?;
        self.check_ours()?;
        Ok(f())
    }
}

/// What restoring one journal did.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Restored {
    pub(crate) interface: String,
    pub(crate) tune_id: String,
    pub(crate) why: String,
    pub(crate) original: Change,
    /// Empty when everything came back.
    pub(crate) errors: Vec<String>,
}

/// Restore journals chosen by `pick`, using `restore` to apply the original values.
fn restore_where(
    paths: &Paths,
    pick: impl Fn(&Journal) -> Option<String>,
    restore: &mut dyn FnMut(&Journal) -> Vec<String>,
) -> Vec<Restored> {
    let Ok(_l) = lock(paths) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (path, j) in all(paths) {
        let Some(why) = pick(&j) else { continue };
        let errors = restore(&j);
        if errors.is_empty() {
            let _ = std::fs::remove_file(&path);
        }
        out.push(Restored {
            interface: j.interface.clone(),
            tune_id: j.tune_id.clone(),
            why,
            original: j.original.clone(),
            errors,
        });
    }
    out
}

/// At daemon start (or `hlctl rollback`): restore every journal whose owner is
/// gone (a crash mid-change). `restore` applies a journal's original values.
pub(crate) fn restore_pending(
    paths: &Paths,
    restore: &mut dyn FnMut(&Journal) -> Vec<String>,
) -> Vec<Restored> {
    restore_where(
        paths,
        |j| (!j.owner_alive()).then(|| format!("the tune's process (pid {}) is gone", j.owner_pid)),
        restore,
    )
}

/// Restore every journal whose deadline passed.
pub(crate) fn restore_expired(
    paths: &Paths,
    restore: &mut dyn FnMut(&Journal) -> Vec<String>,
) -> Vec<Restored> {
    restore_where(
        paths,
        |j| {
            j.expired()
                .then(|| "the confirm deadline passed".to_string())
        },
        restore,
    )
}

/// Restore the journal of one interface, or all, whatever their state.
pub(crate) fn restore_now(
    paths: &Paths,
    iface: Option<&str>,
    restore: &mut dyn FnMut(&Journal) -> Vec<String>,
) -> Vec<Restored> {
    restore_where(
        paths,
        |j| {
            iface
                .is_none_or(|i| i == j.interface)
                .then(|| "rollback requested".to_string())
        },
        restore,
    )
}

/// A thread that restores expired journals every `every`, until `stop` is cancelled.
pub(crate) fn spawn_watchdog(
    paths: Paths,
    every: Duration,
    stop: crate::bench::progress::Cancel,
    mut restore: impl FnMut(&Journal) -> Vec<String> + Send + 'static,
    mut on_restored: impl FnMut(Restored) + Send + 'static,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        while !stop.is_cancelled() {
            for r in restore_expired(&paths, &mut restore) {
                on_restored(r);
            }
            std::thread::sleep(every);
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(dir: &Path) -> Paths {
        let mut p = Paths::under(dir);
        p.state_dir = dir.join("state");
        p
    }

    #[test]
    fn journal_before_change_and_restore_when_expired() {
        let d = tempfile::tempdir().unwrap();
        let p = paths(d.path());
        let mut cp = Checkpoint::begin(&p, "eth0", None, Duration::from_millis(200)).unwrap();
        // A second tune of the same interface is refused while we live.
        assert!(matches!(
            Checkpoint::begin(&p, "eth0", None, Duration::from_secs(1)),
            Err(TuneError::Busy(_))
        ));
        let mut undo = Change::default();
        undo.sysctl
            .insert("net.ipv4.tcp_rmem".into(), "4096 131072 65536".into());
        let on_disk = cp
            .change("tcp-buffers", &undo, || {
                read(&journal_path(&p, "eth0")).unwrap().unwrap()
            })
            .unwrap();
        // The journal held the original before the change ran.
        assert_eq!(on_disk.original, undo);
        assert!(matches!(on_disk.phase, Phase::Trying { .. }));
        // Not expired yet: nothing restored.
        let mut seen = Vec::new();
        assert!(
            restore_expired(&p, &mut |j| {
                seen.push(j.original.clone());
                vec![]
            })
            .is_empty()
        );
        std::thread::sleep(Duration::from_millis(300));
        let r = restore_expired(&p, &mut |j| {
            seen.push(j.original.clone());
            vec![]
        });
        assert_eq!(r.len(), 1);
        assert_eq!(seen, [undo]);
        // The tuner notices its journal was restored under it.
        assert!(matches!(cp.renew(), Err(TuneError::DeadlinePassed(_))));
    }

    #[test]
    fn dead_owners_are_restored_live_ones_are_not() {
        let d = tempfile::tempdir().unwrap();
        let p = paths(d.path());
        let cp = Checkpoint::begin(&p, "eth1", None, Duration::from_secs(60)).unwrap();
        assert!(restore_pending(&p, &mut |_| vec![]).is_empty());
        // Pretend the owner died: a pid that cannot exist.
        let mut j = cp.journal.clone();
        j.owner_pid = u32::MAX;
        write(&journal_path(&p, "eth1"), &j).unwrap();
        let r = restore_pending(&p, &mut |_| vec![]);
        assert_eq!(r.len(), 1);
        assert!(all(&p).is_empty());
    }
}
