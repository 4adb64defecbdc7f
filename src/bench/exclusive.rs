//! One measurement per host at a time. `hlctl check` holds the host's lock
//! (`<state dir>/measure.lock`, `flock`) while it measures, and `hlctl serve`
//! holds it while it serves a test: a host never serves a test while it
//! measures to someone else, and never measures while it serves, so no
//! figure is taken on top of another one.

use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::path::Path;

/// The held lock; released when dropped (or when the process dies).
#[derive(Debug)]
pub(crate) struct MeasureLock {
    _file: File,
}

impl MeasureLock {
    /// Take the lock without waiting: `Ok(None)` while someone else holds
    /// it; an error when the lock file cannot be opened.
    pub(crate) fn try_acquire(path: &Path) -> std::io::Result<Option<MeasureLock>> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(path)?;
        // SAFETY: flock on a descriptor we own.
        let r = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        if r == 0 {
            return Ok(Some(MeasureLock { _file: file }));
        }
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() == Some(libc::EWOULDBLOCK) {
            Ok(None)
        } else {
            Err(e)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_holder_at_a_time() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("measure.lock");
        let a = MeasureLock::try_acquire(&p).unwrap();
        assert!(a.is_some());
        assert!(MeasureLock::try_acquire(&p).unwrap().is_none());
        drop(a);
        assert!(MeasureLock::try_acquire(&p).unwrap().is_some());
    }
}
