//! Typed NIC engine errors: each keeps the interface name and the kernel errno.

use crate::nic::netlink::NetlinkError;
use crate::problem::Problem;

#[derive(Debug, thiserror::Error)]
pub enum NicError {
    /// `existing`: the interfaces there are (the message suggests the closest).
    #[error("{iface}: no such interface{}", existing_text(.iface, .existing))]
    NoSuchInterface {
        iface: String,
        existing: Vec<String>,
    },
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
    /// Its class ([`crate::class`]): a bad value or no such interface is
    /// the caller's input; EPERM/EACCES not permitted; else (the driver
    /// refusing, a kernel error) failed.
    pub(crate) fn class(&self) -> crate::class::Class {
        match self {
            NicError::Invalid { .. } | NicError::NoSuchInterface { .. } => {
                crate::class::Class::Invalid
            }
            _ => crate::class::Class::of_errno(self.errno()),
        }
    }

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

    /// `iface` does not exist here: the error lists the interfaces that do
    /// (in this network namespace), the names closest to `iface` first.
    pub(crate) fn no_such_interface(iface: &str) -> Self {
        NicError::NoSuchInterface {
            iface: iface.to_string(),
            existing: existing_names(),
        }
    }

    /// Wrap a netlink error for `iface`, turning ENODEV into [`NicError::NoSuchInterface`].
    pub(crate) fn netlink(iface: &str, source: NetlinkError) -> Self {
        if source.errno == libc::ENODEV {
            NicError::no_such_interface(iface)
        } else {
            NicError::Netlink {
                iface: iface.to_string(),
                source,
            }
        }
    }
}

/// The interface names of this network namespace, sorted; empty when they
/// cannot be read.
fn existing_names() -> Vec<String> {
    let Ok(links) = crate::nic::netlink::Netlink::new().and_then(|mut nl| nl.links()) else {
        return Vec::new();
    };
    let mut names: Vec<String> = links.into_iter().map(|l| l.name).collect();
    names.sort();
    names
}

/// "; did you mean eth1? The interfaces here: eth1, lo, vmbr0".
fn existing_text(iface: &str, existing: &[String]) -> String {
    if existing.is_empty() {
        return String::new();
    }
    let refs: Vec<&str> = existing.iter().map(String::as_str).collect();
    let near = crate::spelling::nearest(iface, &refs, 2);
    let all = existing.join(", ");
    if near.is_empty() {
        format!("; the interfaces here: {all}")
    } else {
        format!(
            "; did you mean {}? The interfaces here: {all}",
            near.join(" or ")
        )
    }
}
