//! `bench file`: write then read a test file through the path a copy takes,
//! timed in this process: over SSH with the user's own OpenSSH client
//! ([`ssh`]), or through a directory, a mount the host already has (NFS,
//! CIFS) or a local one ([`dir`]). The file is removed afterwards, also on
//! error or cancel. What limits each figure is judged by
//! [`crate::protocol`], which reads these reports.

pub(crate) mod dir;
pub(crate) mod error;
pub(crate) mod kex;
pub(crate) mod mount_facts;
pub(crate) mod nfs_rpc;
pub(crate) mod smb_debug;
pub(crate) mod ssh;
pub(crate) mod target;

use serde::{Deserialize, Serialize};

pub use error::FileError;
pub(crate) use mount_facts::MountFacts;
pub(crate) use target::{SshTarget, Target};

use crate::bench::progress::{Cancel, Progress, ProgressEvent};

/// The default size of the test file: 1 GiB.
pub(crate) const DEFAULT_SIZE: u64 = 1 << 30;
/// Bytes per write and read call.
pub(crate) const CHUNK: usize = 1 << 20;

/// What to measure through, and how much.
#[derive(Clone, Debug)]
pub struct FileConfig {
    pub(crate) target: Target,
    /// Bytes written and read back; a whole number of [`CHUNK`]s.
    pub(crate) size: u64,
}

impl FileConfig {
    pub(crate) fn new(target: Target, size: u64) -> Result<FileConfig, FileError> {
        if size < CHUNK as u64 || !size.is_multiple_of(CHUNK as u64) || size > 1 << 40 {
            return Err(FileError::InvalidConfig {
                field: "size",
                reason: format!("{size} bytes: allowed a whole number of MiB from 1 MiB to 1 TiB"),
            });
        }
        Ok(FileConfig { target, size })
    }
}

/// Which way the file went.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// From this host to the target.
    Write,
    /// From the target to this host.
    Read,
}

impl Direction {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Direction::Write => "write",
            Direction::Read => "read",
        }
    }
}

/// One direction's figure.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Transfer {
    pub direction: Direction,
    pub bytes: u64,
    pub seconds: f64,
    pub bytes_per_second: f64,
    /// The CPU the transfer's process used, in cores (1.0: one core busy
    /// the whole time): the ssh client, or this thread for a mount.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_cores: Option<f64>,
    /// Through a directory: the kernel's own threads busy meanwhile
    /// (`cifsd`, the NFS client's kworkers), the busiest first
    /// ([`crate::cpu::kthreads`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kernel_threads: Vec<crate::cpu::kthreads::KernelThreadUse>,
    /// Through an NFS mount: the RPCs the transfer waited on
    /// (`/proc/self/mountstats`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nfs_rpcs: Option<nfs_rpc::NfsRpcs>,
}

impl Transfer {
    pub(crate) fn new(direction: Direction, bytes: u64, seconds: f64) -> Transfer {
        Transfer {
            direction,
            bytes,
            seconds,
            bytes_per_second: if seconds > 0.0 {
                bytes as f64 / seconds
            } else {
                0.0
            },
            client_cores: None,
            kernel_threads: Vec::new(),
            nfs_rpcs: None,
        }
    }
}

/// The SSH session's negotiated algorithms (`ssh -v`'s `kex:` lines).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SshAlgorithms {
    pub cipher_client_to_server: String,
    pub mac_client_to_server: String,
    pub cipher_server_to_client: String,
    pub mac_server_to_client: String,
}

/// How the file was written and read through a directory.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IoMode {
    /// O_DIRECT was used (the page cache left out both ways).
    pub direct: bool,
    /// How the page cache was left out instead, and why.
    pub said: String,
}

/// One `bench file` transfer pair.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FileReport {
    /// `ssh`, `nfs4`, `nfs`, `cifs`, `smb3`, or the local filesystem's type.
    pub protocol: String,
    /// `user@host:port:/dir` or the directory.
    pub place: String,
    /// The host at the other end (the SSH host, the mount's server); none
    /// for a local directory.
    pub server: Option<String>,
    pub size_bytes: u64,
    pub write: Transfer,
    pub read: Transfer,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ssh: Option<SshAlgorithms>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mount: Option<MountFacts>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io: Option<IoMode>,
    pub cancelled: bool,
}

impl FileReport {
    pub(crate) fn transfers(&self) -> [&Transfer; 2] {
        [&self.write, &self.read]
    }

    /// The process whose CPU `client_cores` counts: the ssh client, or
    /// hlctl's own thread through a directory.
    pub(crate) fn process(&self) -> &'static str {
        if self.ssh.is_some() { "ssh" } else { "hlctl" }
    }
}

/// Write then read `cfg.size` bytes through `cfg.target`.
pub fn run(
    cfg: &FileConfig,
    progress: &dyn Progress,
    cancel: &Cancel,
) -> Result<FileReport, FileError> {
    match &cfg.target {
        Target::Ssh(t) => ssh::run(t, cfg.size, progress, cancel),
        Target::Dir(d) => dir::run(d, cfg.size, progress, cancel),
    }
}

/// Progress of one direction, from 0 to 1 over both (write first).
pub(crate) fn tick(progress: &dyn Progress, direction: Direction, done: u64, size: u64) {
    if !done.is_multiple_of(64 << 20) && done != size {
        return;
    }
    let base = match direction {
        Direction::Write => 0.0,
        Direction::Read => 0.5,
    };
    progress.report(ProgressEvent {
        fraction: base + 0.5 * done as f64 / size as f64,
        message: format!(
            "{}: {} of {} MiB",
            direction.as_str(),
            done >> 20,
            size >> 20
        ),
    });
}
