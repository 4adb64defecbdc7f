//! Typed D-Bus errors with stable names under `org.hlctl.Daemon1.Error.*`.
//!
//! The message of every error is the engine's own error text, so a client
//! printing `hlctl: <message>` shows exactly what the in-process path shows.

use crate::class::Class;
use crate::history::HistoryError;
use crate::nic::error::NicError;
use crate::sysctl::SysctlError;

/// The prefix of every error name.
pub(crate) const PREFIX: &str = "org.hlctl.Daemon1.Error";

/// Every error a method of `org.hlctl.Daemon1` can return.
#[derive(Debug)]
pub(crate) enum Error {
    /// Transport-level failure (never sent by hlctld on purpose).
    ZBus(zbus::Error),
    /// polkit refused the caller; nothing was changed.
    NotAuthorized(String),
    /// polkit would ask the caller to authenticate, but the call did not
    /// allow interactive authorization (the message flag): a client offers
    /// "get administrative access" and calls again with the flag. Sent as
    /// `org.freedesktop.DBus.Error.InteractiveAuthorizationRequired`, as
    /// systemd's daemons do.
    InteractiveAuthorizationRequired(String),
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

/// The standard name of [`Error::InteractiveAuthorizationRequired`].
pub(crate) const INTERACTIVE: &str = "org.freedesktop.DBus.Error.InteractiveAuthorizationRequired";

impl Error {
    /// The full error name (a static string, as zbus wants it).
    fn full_name(&self) -> &'static str {
        match self {
            Error::ZBus(_) => "org.freedesktop.zbus.Error",
            Error::NotAuthorized(_) => "org.hlctl.Daemon1.Error.NotAuthorized",
            Error::InteractiveAuthorizationRequired(_) => INTERACTIVE,
            Error::NoSuchInterface(_) => "org.hlctl.Daemon1.Error.NoSuchInterface",
            Error::NotSupported(_) => "org.hlctl.Daemon1.Error.NotSupported",
            Error::InvalidArgument(_) => "org.hlctl.Daemon1.Error.InvalidArgument",
            Error::Busy(_) => "org.hlctl.Daemon1.Error.Busy",
            Error::InvalidState(_) => "org.hlctl.Daemon1.Error.InvalidState",
            Error::LimitExceeded(_) => "org.hlctl.Daemon1.Error.LimitExceeded",
            Error::Failed(_) => "org.hlctl.Daemon1.Error.Failed",
        }
    }

    fn text(&self) -> String {
        match self {
            Error::ZBus(e) => e.to_string(),
            other => zbus::DBusError::description(other)
                .unwrap_or_default()
                .to_string(),
        }
    }
}

impl zbus::DBusError for Error {
    fn name(&self) -> zbus::names::ErrorName<'_> {
        zbus::names::ErrorName::from_static_str_unchecked(self.full_name())
    }

    fn description(&self) -> Option<&str> {
        match self {
            Error::ZBus(_) => None,
            Error::NotAuthorized(m)
            | Error::InteractiveAuthorizationRequired(m)
            | Error::NoSuchInterface(m)
            | Error::NotSupported(m)
            | Error::InvalidArgument(m)
            | Error::Busy(m)
            | Error::InvalidState(m)
            | Error::LimitExceeded(m)
            | Error::Failed(m) => Some(m),
        }
    }

    fn create_reply(
        &self,
        call: &zbus::message::Header<'_>,
    ) -> zbus::Result<zbus::message::Message> {
        zbus::message::Message::error(call, self.name()).build(&(self.text(),))
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.full_name(), self.text())
    }
}

impl std::error::Error for Error {}

impl From<zbus::Error> for Error {
    fn from(e: zbus::Error) -> Self {
        Error::ZBus(e)
    }
}

pub(crate) type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// The error a method returns for an error of class `c` (the class
    /// alone decides, as for the exit code in process).
    pub(crate) fn of_class(c: Class, message: String) -> Error {
        match c {
            Class::Invalid => Error::InvalidArgument(message),
            Class::NotPermitted => Error::NotAuthorized(message),
            Class::Failed | Class::NoDaemon => Error::Failed(message),
        }
    }
}

/// The class of a method's error, by its name (`org.hlctl.Daemon1.Error.*`,
/// or the standard names polkit and the bus send): what the client's exit
/// code follows.
pub(crate) fn class_of_name(full: &str) -> Class {
    match short_name(full) {
        Some("InvalidArgument" | "NoSuchInterface" | "InvalidState") => Class::Invalid,
        Some("NotAuthorized") => Class::NotPermitted,
        Some(_) => Class::Failed,
        None if full == INTERACTIVE || full == "org.freedesktop.DBus.Error.AccessDenied" => {
            Class::NotPermitted
        }
        None => Class::Failed,
    }
}

impl From<NicError> for Error {
    fn from(e: NicError) -> Self {
        match e {
            NicError::NoSuchInterface { .. } => Error::NoSuchInterface(e.to_string()),
            _ => Error::of_class(e.class(), e.to_string()),
        }
    }
}

impl From<SysctlError> for Error {
    fn from(e: SysctlError) -> Self {
        Error::of_class(e.class(), e.to_string())
    }
}

impl From<HistoryError> for Error {
    fn from(e: HistoryError) -> Self {
        Error::of_class(e.class(), e.to_string())
    }
}

/// The short name (`Busy`, `NotAuthorized`, ...) of an `org.hlctl.Daemon1.Error.*` name.
pub(crate) fn short_name(full: &str) -> Option<&str> {
    full.strip_prefix(PREFIX)?.strip_prefix('.')
}

#[cfg(test)]
mod tests {
    use super::*;
    use zbus::DBusError;

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
        let e = Error::InteractiveAuthorizationRequired("x".into());
        assert_eq!(e.name().as_str(), INTERACTIVE);
        assert_eq!(
            short_name(INTERACTIVE),
            None,
            "a standard name, not hlctl's"
        );
    }

    #[test]
    fn engine_errors_keep_their_text() {
        let e = NicError::NoSuchInterface {
            iface: "eth9".into(),
            existing: vec!["eth0".into(), "lo".into()],
        };
        let text = e.to_string();
        match Error::from(e) {
            Error::NoSuchInterface(m) => assert_eq!(m, text),
            other => panic!("{other:?}"),
        }
    }
}
