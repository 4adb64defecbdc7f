//! Typed sysctl errors.

pub(crate) use crate::problem::Problem;

#[derive(Debug, thiserror::Error)]
pub(crate) enum SysctlError {
    /// Validation failed; nothing was changed. Every problem is listed.
    #[error("invalid sysctl request:\n{}", crate::problem::join(.0))]
    Invalid(Vec<Problem>),
    /// Reading or writing `/proc/sys` failed.
    #[error("{op} {key}: {source}")]
    Io {
        op: &'static str,
        key: String,
        #[source]
        source: std::io::Error,
    },
    /// Writing the sysctl.d file failed.
    #[error("cannot write {path}: {source}")]
    Persist {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

impl SysctlError {
    /// Its class ([`crate::class`]).
    pub(crate) fn class(&self) -> crate::class::Class {
        match self {
            SysctlError::Invalid(_) => crate::class::Class::Invalid,
            _ => crate::class::Class::of_errno(self.errno()),
        }
    }

    /// The kernel errno, when the failure came from a system call.
    pub(crate) fn errno(&self) -> Option<i32> {
        match self {
            SysctlError::Io { source, .. } | SysctlError::Persist { source, .. } => {
                source.raw_os_error()
            }
            SysctlError::Invalid(_) => None,
        }
    }
}
