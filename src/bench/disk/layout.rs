//! Test files: created under a unique name, laid out like fio, removed by a drop guard.
//!
//! fio lays out a file that a job reads by writing it in full with buffered writes,
//! fsyncing it, and dropping its page cache (`posix_fadvise(DONTNEED)`) before the job
//! starts, so reads never hit sparse extents or RAM. Pure write jobs only preallocate.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use nix::fcntl::{FallocateFlags, PosixFadviseAdvice, fallocate, posix_fadvise};

use super::DiskError;
use crate::bench::buffer::AlignedBuf;
use crate::bench::progress::{Cancel, Progress, ProgressEvent};

/// Prefix of every file the disk benchmark creates.
pub(crate) const FILE_PREFIX: &str = ".hlctl-bench-";

static NEXT: AtomicU64 = AtomicU64::new(0);

/// A file this process created. Dropping it removes it — only if the path still names
/// the very file we created (same device and inode), so nothing else is ever deleted.
#[derive(Debug)]
pub(crate) struct BenchFile {
    path: PathBuf,
    file: File,
    dev: u64,
    ino: u64,
}

impl BenchFile {
    /// Create `.hlctl-bench-<pid>-<n>` in `dir` with `O_CREAT|O_EXCL` (never reuses a file).
    pub(crate) fn create(dir: &Path) -> Result<Self, DiskError> {
        loop {
            let n = NEXT.fetch_add(1, Ordering::Relaxed);
            let path = dir.join(format!("{FILE_PREFIX}{}-{n}", std::process::id()));
            let opened = OpenOptions::new()
                .read(true)
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&path);
            match opened {
                Ok(file) => {
                    let meta = file.metadata().map_err(|source| DiskError::Create {
                        path: path.clone(),
                        source,
                    })?;
                    return Ok(Self {
                        path,
                        file,
                        dev: meta.dev(),
                        ino: meta.ino(),
                    });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(source) => return Err(DiskError::Create { path, source }),
            }
        }
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    pub(crate) fn file(&self) -> &File {
        &self.file
    }

    /// Open our file again, with or without O_DIRECT. Returns `false` when the
    /// filesystem refuses O_DIRECT (EINVAL); the old handle is kept then.
    pub(crate) fn reopen(&mut self, direct: bool) -> Result<bool, DiskError> {
        let flags = if direct { libc::O_DIRECT } else { 0 };
        let opened = OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(flags)
            .open(&self.path);
        let file = match opened {
            Ok(f) => f,
            Err(e) if direct && e.raw_os_error() == Some(libc::EINVAL) => return Ok(false),
            Err(source) => {
                return Err(DiskError::Create {
                    path: self.path.clone(),
                    source,
                });
            }
        };
        let meta = file.metadata().map_err(|source| DiskError::Create {
            path: self.path.clone(),
            source,
        })?;
        if (meta.dev(), meta.ino()) != (self.dev, self.ino) {
            let source =
                std::io::Error::other("the file was replaced by another one during the test");
            return Err(DiskError::Create {
                path: self.path.clone(),
                source,
            });
        }
        self.file = file;
        Ok(true)
    }
}

impl Drop for BenchFile {
    fn drop(&mut self) {
        if let Ok(meta) = std::fs::symlink_metadata(&self.path)
            && (meta.dev(), meta.ino()) == (self.dev, self.ino)
        {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Write the file in full (incompressible data, 1 MiB buffered writes) and fsync it.
pub(crate) fn write_full(
    file: &BenchFile,
    size: u64,
    progress: &dyn Progress,
    label: &str,
    cancel: &Cancel,
) -> Result<(), DiskError> {
    let err = |source| DiskError::Layout {
        path: file.path.clone(),
        source,
    };
    let _ = fallocate(&file.file, FallocateFlags::empty(), 0, size as libc::off_t);
    file.file.set_len(size).map_err(err)?;
    const CHUNK: u64 = 1 << 20;
    let mut buf = AlignedBuf::new(CHUNK as usize).map_err(err)?;
    buf.fill_random(0x5eed ^ file.ino);
    let mut w = &file.file;
    let mut done = 0u64;
    while done < size {
        if cancel.is_cancelled() {
            return Err(DiskError::Cancelled);
        }
        let n = (size - done).min(CHUNK) as usize;
        w.write_all(&buf.as_slice()[..n]).map_err(err)?;
        done += n as u64;
        if done.is_multiple_of(32 * CHUNK) || done == size {
            progress.report(ProgressEvent {
                fraction: done as f64 / size as f64,
                message: format!("{label}: {} of {} MiB", done >> 20, size >> 20),
            });
        }
    }
    file.file.sync_all().map_err(err)
}

/// Reserve the file's blocks without writing them (fio's `fallocate=native`, `overwrite=0`).
pub(crate) fn preallocate(file: &BenchFile, size: u64) -> Result<(), DiskError> {
    let err = |source| DiskError::Layout {
        path: file.path.clone(),
        source,
    };
    if fallocate(&file.file, FallocateFlags::empty(), 0, size as libc::off_t).is_err() {
        // Not every filesystem can (e.g. some network ones): a sparse file is what fio gets then.
        file.file.set_len(size).map_err(err)?;
    }
    file.file.sync_all().map_err(err)
}

/// Drop the file's pages from the page cache (fio's `invalidate=1`).
pub(crate) fn drop_cache(file: &BenchFile) {
    let _ = posix_fadvise(&file.file, 0, 0, PosixFadviseAdvice::POSIX_FADV_DONTNEED);
}
