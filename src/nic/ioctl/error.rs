//! The one error of the SIOCETHTOOL path: which command, on which interface,
//! and the kernel's errno.

use std::io;

#[derive(Debug, thiserror::Error)]
#[error("SIOCETHTOOL {op} on {iface}: {source}")]
pub struct IoctlError {
    pub iface: String,
    /// The ethtool command (`ETHTOOL_GRINGPARAM`).
    pub op: &'static str,
    #[source]
    pub source: io::Error,
}

impl IoctlError {
    pub(crate) fn new(iface: &str, op: &'static str, source: io::Error) -> Self {
        IoctlError {
            iface: iface.to_string(),
            op,
            source,
        }
    }

    /// An error of ours, not the kernel's (a reply we cannot use).
    pub(crate) fn invalid(iface: &str, op: &'static str, what: String) -> Self {
        IoctlError::new(iface, op, io::Error::new(io::ErrorKind::InvalidData, what))
    }

    /// The kernel errno (`EPROTO` for [`IoctlError::invalid`]).
    pub(crate) fn errno(&self) -> i32 {
        self.source.raw_os_error().unwrap_or(libc::EPROTO)
    }
}
