//! Typed D-Bus errors with stable names under `org.hlctl.Daemon1.Error.*`.
//!
//! The message of every error is the engine's own error text, so a client
//! printing `hlctl: <message>` shows exactly what the in-process path shows.

use zbus::DBusError;

use crate::history::HistoryError;
use crate::nic::error::NicError;
use crate::sysctl::SysctlError;

/// The prefix of every error name.
pub(crate) const PREFIX: &str = "org.hlctl.Daemon1.Error";

/// Every error a method of `org.hlctl.Daemon1` can return.
#[derive(Debug, DBusError)]
#[zbus(prefix = "org.hlctl.Daemon1.Error")]
pub(crate) enum Error {
    /// Transport-level failure (never sent by hlctld on purpose).
    #[zbus(error)]
    ZBus(zbus::Error),
    /// polkit refused the caller; nothing was changed.
    NotAuthorized(String),
    /// The interface (or job) does not exist.
    NoSuchInterface(String),
    /// The driver or this daemon does not offer that operation.
    NotSupported(String),
    /// An argument is malformed or out of range; names the setting and what is allowed.
    InvalidArgument(String),
    /// Another change (or a benchmark) holds the link.
    Busy(String),
    /// The object is not in a state where the call means anything (e.g.
    /// `Job.Confirm` on a job that does not await confirmation); nothing is
    /// remembered for later.
    InvalidState(String),
    /// A limit on concurrent jobs (per caller or in total) is reached; try
    /// again when one has ended.
    LimitExceeded(String),
    /// The operation ran and failed.
    Failed(String),
}

pub(crate) type Result<T> = std::result::Result<T, Error>;

impl From<NicError> for Error {
    fn from(e: NicError) -> Self {
        match e {
            NicError::Invalid { .. } => Error::InvalidArgument(e.to_string()),
            NicError::NoSuchInterface { .. } => Error::NoSuchInterface(e.to_string()),
            _ => Error::Failed(e.to_string()),
        }
    }
}

impl From<SysctlError> for Error {
    fn from(e: SysctlError) -> Self {
        match e {
            SysctlError::Invalid(_) => Error::InvalidArgument(e.to_string()),
            _ => Error::Failed(e.to_string()),
        }
    }
}

impl From<HistoryError> for Error {
    fn from(e: HistoryError) -> Self {
        match e {
            HistoryError::Invalid { .. }
            | HistoryError::NoBaseline(_)
            | HistoryError::NoBaselines => Error::InvalidArgument(e.to_string()),
            _ => Error::Failed(e.to_string()),
        }
    }
}

/// The short name (`Busy`, `NotAuthorized`, ...) of an `org.hlctl.Daemon1.Error.*` name.
pub(crate) fn short_name(full: &str) -> Option<&str> {
    full.strip_prefix(PREFIX)?.strip_prefix('.')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_stable() {
        let cases = [
            (Error::NotAuthorized("x".into()), "NotAuthorized"),
            (Error::NoSuchInterface("x".into()), "NoSuchInterface"),
            (Error::NotSupported("x".into()), "NotSupported"),
            (Error::InvalidArgument("x".into()), "InvalidArgument"),
            (Error::Busy("x".into()), "Busy"),
            (Error::InvalidState("x".into()), "InvalidState"),
            (Error::LimitExceeded("x".into()), "LimitExceeded"),
            (Error::Failed("x".into()), "Failed"),
        ];
        for (e, short) in cases {
            let name = e.name().to_string();
            assert_eq!(name, format!("{PREFIX}.{short}"));
            assert_eq!(short_name(&name), Some(short));
            assert_eq!(e.description(), Some("x"));
        }
    }

    #[test]
    fn engine_errors_keep_their_text() {
        let e = NicError::NoSuchInterface {
            iface: "eth9".into(),
        };
        let text = e.to_string();
        match Error::from(e) {
            Error::NoSuchInterface(m) => assert_eq!(m, text),
            other => panic!("{other:?}"),
        }
    }
}
