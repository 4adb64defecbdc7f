//! The directory transport: write the test file with O_DIRECT where the
//! filesystem allows it (NFS does; CIFS with `cache=none`; tmpfs since
//! Linux 6.6; ramfs never),
//! else buffered with the closing `fdatasync` timed, and read it back with
//! O_DIRECT, or buffered after dropping its pages (`posix_fadvise
//! DONTNEED`), so that neither figure is the page cache. The report says
//! which was used and why. The file is [`BenchFile`]'s: removed when
//! dropped, also on error or cancel.

use std::io::{Read, Write};
use std::path::Path;
use std::time::Instant;

use nix::sys::resource::{UsageWho, getrusage};

use super::nfs_rpc::Snapshot;
use super::{
    CHUNK, Direction, FileError, FileReport, IoMode, MountFacts, Transfer, mount_facts, tick,
};
use crate::bench::buffer::AlignedBuf;
use crate::bench::disk::DiskError;
use crate::bench::disk::layout::{BenchFile, drop_cache};
use crate::bench::progress::{Cancel, Progress};
use crate::cpu::kthreads::KernelThreads;

/// Write then read `size` bytes in `dir`.
pub(crate) fn run(
    dir: &Path,
    size: u64,
    progress: &dyn Progress,
    cancel: &Cancel,
) -> Result<FileReport, FileError> {
    let mount =
        crate::mounted::lookup(&dir.to_string_lossy()).map_err(|(_, reason)| FileError::Mount {
            path: dir.to_path_buf(),
            reason,
        })?;
    let facts = MountFacts::of(&mount);
    let mut file = BenchFile::create(dir).map_err(|e| disk_err(dir, e))?;
    let direct = file.reopen(true).map_err(|e| disk_err(dir, e))?;
    let mut buf = AlignedBuf::new(CHUNK).map_err(|source| io(dir, source))?;
    buf.fill_random(0xd1 ^ size);
    let nfs = mount_facts::is_nfs(&facts.fs_type).then_some(facts.mount_point.as_str());
    let write = write(&file, size, &buf, direct, nfs, progress, cancel)?;
    if !direct {
        drop_cache(&file);
    }
    let read = read(&file, size, &mut buf, direct, nfs, progress, cancel)?;
    let protocol = if facts.is_network() {
        facts.fs_type.clone()
    } else {
        format!("local {}", facts.fs_type)
    };
    Ok(FileReport {
        protocol,
        place: dir.display().to_string(),
        server: facts.server.clone(),
        size_bytes: size,
        write,
        read,
        ssh: None,
        io: Some(io_mode(direct, &facts)),
        mount: Some(facts),
        cancelled: false,
    })
}

/// What was done about the page cache, in words.
fn io_mode(direct: bool, m: &MountFacts) -> IoMode {
    let said = if direct {
        "O_DIRECT both ways: the page cache is left out".to_string()
    } else {
        let hint = if mount_facts::is_smb(&m.fs_type) {
            " (CIFS takes O_DIRECT only with cache=none)"
        } else {
            ""
        };
        format!(
            "{} refused O_DIRECT{hint}: written buffered with the closing fdatasync timed, \
             its pages dropped (posix_fadvise DONTNEED) before the read",
            m.fs_type
        )
    };
    IoMode { direct, said }
}

fn write(
    file: &BenchFile,
    size: u64,
    buf: &AlignedBuf,
    direct: bool,
    nfs: Option<&str>,
    progress: &dyn Progress,
    cancel: &Cancel,
) -> Result<Transfer, FileError> {
    let mut f = file.file();
    let watch = Stopwatch::start(nfs);
    let mut done = 0u64;
    while done < size {
        if cancel.is_cancelled() {
            return Err(FileError::Cancelled);
        }
        f.write_all(buf.as_slice())
            .map_err(|source| io(file.path(), source))?;
        done += CHUNK as u64;
        tick(progress, Direction::Write, done, size);
    }
    if !direct {
        nix::unistd::fdatasync(file.file()).map_err(|e| io(file.path(), e.into()))?;
    }
    Ok(watch.stop(Direction::Write, done))
}

fn read(
    file: &BenchFile,
    size: u64,
    buf: &mut AlignedBuf,
    direct: bool,
    nfs: Option<&str>,
    progress: &dyn Progress,
    cancel: &Cancel,
) -> Result<Transfer, FileError> {
    let flags = if direct { libc::O_DIRECT } else { 0 };
    let mut f = {
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(flags)
            .open(file.path())
            .map_err(|source| io(file.path(), source))?
    };
    let watch = Stopwatch::start(nfs);
    let mut done = 0u64;
    while done < size {
        if cancel.is_cancelled() {
            return Err(FileError::Cancelled);
        }
        match f.read(buf.as_mut_slice()) {
            Ok(0) => break,
            Ok(n) => done += n as u64,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(source) => return Err(io(file.path(), source)),
        }
        if done.is_multiple_of(CHUNK as u64) {
            tick(progress, Direction::Read, done, size);
        }
    }
    Ok(watch.stop(Direction::Read, done))
}

/// A direction's time, this thread's CPU, the kernel's threads' and an
/// NFS mount's RPCs, from its start.
struct Stopwatch {
    start: Instant,
    cpu0: f64,
    kernel0: KernelThreads,
    nfs0: Option<(String, Snapshot)>,
}

impl Stopwatch {
    /// Started before a transfer, through the NFS mount at `nfs` if any.
    fn start(nfs: Option<&str>) -> Stopwatch {
        let kernel0 = KernelThreads::take();
        let nfs0 = nfs.and_then(|p| Some((p.to_string(), Snapshot::take(p)?)));
        Stopwatch {
            cpu0: thread_cpu(),
            start: Instant::now(),
            kernel0,
            nfs0,
        }
    }

    fn stop(&self, direction: Direction, bytes: u64) -> Transfer {
        let seconds = self.start.elapsed().as_secs_f64();
        let cpu = thread_cpu();
        let kernel = KernelThreads::take();
        let mut t = Transfer::new(direction, bytes, seconds);
        if seconds > 0.0 {
            t.client_cores = Some((cpu - self.cpu0).max(0.0) / seconds);
            t.kernel_threads = kernel.busy_since(&self.kernel0, seconds);
        }
        t.nfs_rpcs = self.nfs0.as_ref().and_then(|(point, before)| {
            let after = Snapshot::take(point)?;
            Some(before.until(&after, direction == Direction::Write))
        });
        t
    }
}

/// This thread's CPU seconds so far (user + system).
fn thread_cpu() -> f64 {
    getrusage(UsageWho::RUSAGE_THREAD)
        .map(|u| {
            let s = |t: nix::sys::time::TimeVal| t.tv_sec() as f64 + t.tv_usec() as f64 / 1e6;
            s(u.user_time()) + s(u.system_time())
        })
        .unwrap_or(0.0)
}

fn io(path: &Path, source: std::io::Error) -> FileError {
    FileError::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn disk_err(dir: &Path, e: DiskError) -> FileError {
    match e {
        DiskError::Create { path, source } | DiskError::Layout { path, source } => {
            FileError::Io { path, source }
        }
        other => FileError::Mount {
            path: dir.to_path_buf(),
            reason: other.to_string(),
        },
    }
}
