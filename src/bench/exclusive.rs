//! One measurement per host at a time. `hlctl check` holds the host's lock
//! (`<state dir>/measure.lock`, `flock`) while it measures, and `hlctl serve`
//! holds it while it serves a test: a host never serves a test while it
//! measures to someone else, and never measures while it serves, so no
//! figure is taken on top of another one.

use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::path::Path;
use std::time::Duration;

use super::progress::{Cancel, Progress, ProgressEvent};

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

    /// Take the lock, waiting while someone else holds it (said on
    /// `progress`); `Ok(None)` when cancelled first.
    pub(crate) fn acquire_waiting(
        path: &Path,
        progress: &dyn Progress,
        cancel: &Cancel,
    ) -> std::io::Result<Option<MeasureLock>> {
        let mut said = false;
        loop {
            if let Some(held) = Self::try_acquire(path)? {
                return Ok(Some(held));
            }
            if cancel.is_cancelled() {
                return Ok(None);
            }
            if !said {
                progress.report(ProgressEvent {
                    fraction: 0.0,
                    message: "waiting for another measurement on this host to end".into(),
                });
                said = true;
            }
            std::thread::sleep(Duration::from_millis(200));
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

    struct Said(std::sync::Mutex<Vec<String>>);
    impl Progress for Said {
        fn report(&self, e: ProgressEvent) {
            self.0.lock().unwrap().push(e.message);
        }
    }

    #[test]
    fn a_waiter_gets_the_lock_when_it_is_released_and_says_it_waited() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("measure.lock");
        let held = MeasureLock::try_acquire(&p).unwrap().unwrap();
        let release = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            drop(held);
        });
        let said = Said(Default::default());
        let got = MeasureLock::acquire_waiting(&p, &said, &Cancel::new()).unwrap();
        release.join().unwrap();
        assert!(got.is_some());
        assert_eq!(said.0.lock().unwrap().len(), 1, "said once that it waits");
    }

    #[test]
    fn a_cancelled_waiter_returns_without_the_lock() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("measure.lock");
        let _held = MeasureLock::try_acquire(&p).unwrap().unwrap();
        let cancel = Cancel::new();
        cancel.cancel();
        let said = Said(Default::default());
        assert!(
            MeasureLock::acquire_waiting(&p, &said, &cancel)
                .unwrap()
                .is_none()
        );
    }
}
