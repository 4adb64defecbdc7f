//! What can go wrong in `bench file`, naming the file, host or command.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum FileError {
    #[error("invalid --{field}: {reason}")]
    InvalidConfig { field: &'static str, reason: String },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: {reason}")]
    Mount { path: PathBuf, reason: String },
    #[error("cannot start ssh: {0} (install openssh-client)")]
    SpawnSsh(#[source] std::io::Error),
    /// The user's key was refused; BatchMode forbids asking a password.
    #[error(
        "ssh {host}: no key of yours was accepted and hlctl never asks a password (BatchMode): \
         {detail}; install a key (ssh-copy-id {host}) or name one in your ssh config"
    )]
    SshAuth { host: String, detail: String },
    #[error("ssh {host}: {what} failed (exit status {status}): {detail}")]
    Ssh {
        host: String,
        what: &'static str,
        status: i32,
        detail: String,
    },
    #[error("cancelled")]
    Cancelled,
}

impl FileError {
    /// Its class ([`crate::class`]): bad flags are the caller's input.
    pub(crate) fn class(&self) -> crate::class::Class {
        match self {
            FileError::InvalidConfig { .. } => crate::class::Class::Invalid,
            FileError::SshAuth { .. } => crate::class::Class::NotPermitted,
            FileError::Io { source, .. }
                if source.kind() == std::io::ErrorKind::PermissionDenied =>
            {
                crate::class::Class::NotPermitted
            }
            _ => crate::class::Class::Failed,
        }
    }
}
