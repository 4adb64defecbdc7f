//! Typed NIC engine errors: each keeps the interface name and the kernel errno.

use crate::nic::netlink::NetlinkError;
use crate::problem::Problem;

#[derive(Debug, thiserror::Error)]
pub enum NicError {
    #[error("{iface}: no such interface")]
    NoSuchInterface { iface: String },
    /// Validation failed; nothing was changed.
    #[error("{iface}: invalid settings, nothing changed:\n{}", crate::problem::join(.problems))]
    Invalid {
        iface: String,
        problems: Vec<Problem>,
    },
    #[error("{iface}: {source}")]
    Netlink {
        iface: String,
        #[source]
        source: NetlinkError,
    },
    #[error("{iface}: {op}: {source}")]
    Ioctl {
        iface: String,
        op: &'static str,
        #[source]
        source: std::io::Error,
    },
    /// A capability is missing; nothing was changed.
    #[error("{iface}: {message}; nothing changed")]
    NotPermitted { iface: String, message: String },
    #[error("netlink: {0}")]
    Connect(#[source] NetlinkError),
    #[error("{path}: {source}")]
    State {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: malformed state file: {message}")]
    StateFormat { path: String, message: String },
    /// Writing through the link's network manager failed; its file is as it was.
    #[error(transparent)]
    Owner(#[from] crate::nic::owner::error::OwnerError),
}

impl NicError {
    /// The kernel errno behind the error, when there is one.
    pub(crate) fn errno(&self) -> Option<i32> {
        match self {
            NicError::Netlink { source, .. } | NicError::Connect(source) => Some(source.errno),
            NicError::Ioctl { source, .. } | NicError::State { source, .. } => {
                source.raw_os_error()
            }
            NicError::Owner(e) => e.errno(),
            NicError::NotPermitted { .. } => Some(libc::EPERM),
            _ => None,
        }
    }

    /// Wrap a netlink error for `iface`, turning ENODEV into [`NicError::NoSuchInterface`].
    pub(crate) fn netlink(iface: &str, source: NetlinkError) -> Self {
        if source.errno == libc::ENODEV {
            NicError::NoSuchInterface {
                iface: iface.to_string(),
            }
        } else {
            NicError::Netlink {
                iface: iface.to_string(),
                source,
            }
        }
    }
}
