//! Crash-safe file writes: temp file in the same directory, fsync, rename, fsync
//! the directory; and a lock for the read-merge-write of a file hlctl owns.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// What a file written by [`write_state`] is to hlctl: each role has its
/// own crash points ([`Role::points`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Role {
    /// `nic-settings.json`, the persisted NIC settings.
    NicSettings,
    /// `90-hlctl.conf` in sysctl.d.
    SysctlConf,
    /// A tune's or a try's commit-confirm journal.
    Journal,
    /// `last-IFACE.json`, what `hlctl rollback` undoes of a finished tune.
    LastTune,
    /// A network manager's file hlctl edits.
    OwnerFile,
    /// The copy of a manager's file kept before hlctl's first edit.
    OwnerBackup,
    /// A report or textfile: no state, no crash points.
    Other,
}

#[cfg(test)]
impl Role {
    pub(crate) const ALL: &[Role] = &[
        Role::NicSettings,
        Role::SysctlConf,
        Role::Journal,
        Role::LastTune,
        Role::OwnerFile,
        Role::OwnerBackup,
        Role::Other,
    ];
}

impl Role {
    /// The crash points of one write of a file of this role (declared in
    /// [`crate::crashpoint::DECLARED`]): before the rename, before the
    /// directory's fsync.
    pub(crate) fn points(self) -> Option<(&'static str, &'static str)> {
        let pair = match self {
            Role::Other => return None,
            Role::NicSettings => (
                "write:nic-settings:before-rename",
                "write:nic-settings:before-dir-sync",
            ),
            Role::SysctlConf => (
                "write:sysctl-conf:before-rename",
                "write:sysctl-conf:before-dir-sync",
            ),
            Role::Journal => (
                "write:journal:before-rename",
                "write:journal:before-dir-sync",
            ),
            Role::LastTune => (
                "write:last-tune:before-rename",
                "write:last-tune:before-dir-sync",
            ),
            Role::OwnerFile => (
                "write:owner-file:before-rename",
                "write:owner-file:before-dir-sync",
            ),
            Role::OwnerBackup => (
                "write:owner-backup:before-rename",
                "write:owner-backup:before-dir-sync",
            ),
        };
        Some(pair)
    }
}

/// Replace `path` with `contents` atomically: a reader sees the old file or the
/// new one, never a mix, even if the machine loses power half-way. Writers in
/// other threads and processes each use a temp file of their own.
pub(crate) fn write_atomic(path: &Path, contents: &[u8], mode: u32) -> io::Result<()> {
    write_state(Role::Other, path, contents, mode)
}

/// [`write_atomic`] of a file that holds state, passing its role's crash
/// points: once the temp file is synced (before the rename) and once it is
/// renamed (before the directory is synced).
pub(crate) fn write_state(role: Role, path: &Path, contents: &[u8], mode: u32) -> io::Result<()> {
    let points = role.points();
    let pass = |pick: fn((&'static str, &'static str)) -> &'static str| {
        if let Some(p) = points {
            crate::crashpoint::hit(pick(p));
        }
    };
    write_atomic_then(path, contents, mode, || pass(|p| p.0), || pass(|p| p.1))
}

/// [`write_atomic`], calling `before_rename` once the temp file is on disk
/// and `before_dir_sync` once it is renamed.
fn write_atomic_then(
    path: &Path,
    contents: &[u8],
    mode: u32,
    before_rename: impl FnOnce(),
    before_dir_sync: impl FnOnce(),
) -> io::Result<()> {
    let dir = parent(path);
    create_dirs_synced(dir)?;
    let (tmp, mut f) = create_temp(path, mode)?;
    let result = (|| {
        f.write_all(contents)?;
        f.sync_all()?;
        before_rename();
        fs::rename(&tmp, path)?;
        before_dir_sync();
        File::open(dir)?.sync_all()
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// `mkdir -p dir`, each directory it creates made durable: its parent is
/// fsynced after it (a new drop-in directory such as
/// `10-eth0.network.d` must survive a power cut with the file in it).
fn create_dirs_synced(dir: &Path) -> io::Result<()> {
    let mut missing = Vec::new();
    let mut d = dir;
    while !d.as_os_str().is_empty() && !d.is_dir() {
        missing.push(d);
        d = match d.parent() {
            Some(p) => p,
            None => break,
        };
    }
    for m in missing.into_iter().rev() {
        match fs::create_dir(m) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && m.is_dir() => continue,
            Err(e) => return Err(e),
        }
        File::open(parent(m))?.sync_all()?;
    }
    Ok(())
}

fn parent(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

fn file_name(path: &Path) -> io::Result<String> {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "path has no file name"))
}

/// A new temp file `.NAME.tmp-<pid>-<n>` beside `path`, created exclusively
/// (`O_EXCL`): a name left by a crashed process with a reused pid is skipped.
fn create_temp(path: &Path, mode: u32) -> io::Result<(PathBuf, File)> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let name = file_name(path)?;
    loop {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let tmp = parent(path).join(format!(".{name}.tmp-{}-{n}", std::process::id()));
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode)
            .open(&tmp)
        {
            Ok(f) => return Ok((tmp, f)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

/// An exclusive lock on one file hlctl owns, held until dropped.
#[derive(Debug)]
pub(crate) struct FileLock {
    _flock: nix::fcntl::Flock<File>,
}

/// Lock `path` for a read-merge-write: blocks until no other thread or process
/// holds it. The lock is `flock(2)` on `.NAME.lock` beside the file (the file
/// itself is replaced by every write, so it cannot carry the lock).
pub(crate) fn lock(path: &Path) -> io::Result<FileLock> {
    let dir = parent(path);
    fs::create_dir_all(dir)?;
    let p = dir.join(format!(".{}.lock", file_name(path)?));
    let f = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(0o600)
        .open(&p)?;
    // Each call opens its own file description, so threads of one process
    // exclude each other as well as other processes.
    nix::fcntl::Flock::lock(f, nix::fcntl::FlockArg::LockExclusive)
        .map(|f| FileLock { _flock: f })
        .map_err(|(_, e)| io::Error::from(e))
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_role_names_declared_points_once() {
        use crate::crashpoint::DECLARED;
        let mut seen = Vec::new();
        for r in Role::ALL {
            if let Some((a, b)) = r.points() {
                assert!(DECLARED.contains(&a) && DECLARED.contains(&b), "{a} {b}");
                seen.extend([a, b]);
            }
        }
        let n = seen.len();
        seen.sort();
        seen.dedup();
        assert_eq!(seen.len(), n, "two roles share a point");
    }

    use super::*;
    use std::sync::Arc;

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn replaces_contents_and_leaves_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.conf");
        write_atomic(&p, b"one\n", 0o644).unwrap();
        write_atomic(&p, b"two\n", 0o644).unwrap();
        assert_eq!(fs::read_to_string(&p).unwrap(), "two\n");
        assert_eq!(names(dir.path()), ["a.conf"]);
    }

    /// Missing directories on the way are made (their durability is the
    /// power cut's to show: tests/vm_systemd.rs); a file where a directory
    /// should be is an error, and nothing is written.
    #[test]
    fn missing_directories_are_made_and_a_file_in_the_way_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir
            .path()
            .join("etc/systemd/network/10-a.network.d/90-hlctl.conf");
        write_atomic(&p, b"[Link]\n", 0o644).unwrap();
        assert_eq!(fs::read_to_string(&p).unwrap(), "[Link]\n");
        fs::write(dir.path().join("blocked"), b"").unwrap();
        let q = dir.path().join("blocked/x.d/y.conf");
        assert!(write_atomic(&q, b"x", 0o644).is_err());
        assert!(!dir.path().join("blocked/x.d").exists());
    }

    /// Threads of one process writing the same file at once each use their
    /// own temp file: every write succeeds and the file is one of them, whole.
    #[test]
    fn concurrent_writers_of_one_file_do_not_collide() {
        let dir = tempfile::tempdir().unwrap();
        let p = Arc::new(dir.path().join("a.json"));
        let texts: Vec<String> = (0..20).map(|i| format!("{i}\n").repeat(4096)).collect();
        let threads: Vec<_> = texts
            .iter()
            .cloned()
            .map(|t| {
                let p = p.clone();
                std::thread::spawn(move || {
                    for _ in 0..5 {
                        write_atomic(&p, t.as_bytes(), 0o644)?;
                    }
                    io::Result::Ok(())
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap().unwrap();
        }
        let got = fs::read_to_string(&*p).unwrap();
        assert!(texts.contains(&got), "a mix of writes: {} bytes", got.len());
        assert_eq!(names(dir.path()), ["a.json"]);
    }

    /// Read-merge-write under the lock from 20 threads: no update is lost.
    #[test]
    fn locked_updates_from_many_threads_all_land() {
        let dir = tempfile::tempdir().unwrap();
        let p = Arc::new(dir.path().join("list"));
        let threads: Vec<_> = (0..20)
            .map(|i| {
                let p = p.clone();
                std::thread::spawn(move || -> io::Result<()> {
                    let _l = lock(&p)?;
                    let mut text = fs::read_to_string(&*p).unwrap_or_default();
                    std::thread::yield_now();
                    text.push_str(&format!("{i}\n"));
                    write_atomic(&p, text.as_bytes(), 0o644)
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap().unwrap();
        }
        let mut got: Vec<u32> = fs::read_to_string(&*p)
            .unwrap()
            .lines()
            .map(|l| l.parse().unwrap())
            .collect();
        got.sort();
        assert_eq!(got, (0..20).collect::<Vec<_>>());
    }

    /// A process that dies after writing the temp file and before the rename
    /// leaves the old file as it was; the next write still succeeds.
    #[test]
    fn a_crash_between_write_and_rename_leaves_the_old_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("90-hlctl.conf");
        write_atomic(&p, b"old = 1\n", 0o644).unwrap();
        // SAFETY: the child only writes a file and calls _exit; it never
        // returns into the test harness.
        match unsafe { nix::unistd::fork() }.expect("fork") {
            nix::unistd::ForkResult::Child => {
                let _ = write_atomic_then(
                    &p,
                    b"new = 2\n",
                    0o644,
                    || {
                        // SAFETY: _exit ends the child at once, like a crash
                        // (no destructors, no rename).
                        unsafe { libc::_exit(9) }
                    },
                    || {},
                );
                // SAFETY: as above; not reached when the hook ran.
                unsafe { libc::_exit(0) }
            }
            nix::unistd::ForkResult::Parent { child } => {
                let st = nix::sys::wait::waitpid(child, None).expect("waitpid");
                assert_eq!(st, nix::sys::wait::WaitStatus::Exited(child, 9));
            }
        }
        assert_eq!(fs::read_to_string(&p).unwrap(), "old = 1\n");
        let left = names(dir.path());
        assert_eq!(left.len(), 2, "the dead writer's temp file stays: {left:?}");
        assert!(left[0].starts_with(".90-hlctl.conf.tmp-"), "{left:?}");
        write_atomic(&p, b"next = 3\n", 0o644).unwrap();
        assert_eq!(fs::read_to_string(&p).unwrap(), "next = 3\n");
    }
}
