//! How the CLI reports a failure: the message and the exit code (see
//! [`super::exit`]), from whichever engine or hlctld it came.

use super::exit;
use crate::nic::error::NicError;
use crate::sysctl::SysctlError;

/// A failure to report: the message (printed as `hlctl: <message>`) and the exit code.
#[derive(Debug)]
pub(crate) struct CliError {
    pub(crate) message: String,
    pub(crate) code: i32,
}

impl CliError {
    pub(crate) fn new(message: impl Into<String>, code: i32) -> Self {
        Self {
            message: message.into(),
            code,
        }
    }

    /// Print and return the exit code.
    pub(crate) fn report(&self) -> i32 {
        eprintln!("hlctl: {}", self.message);
        self.code
    }
}

impl From<NicError> for CliError {
    fn from(e: NicError) -> Self {
        CliError::new(e.to_string(), super::nic_exit_code(&e))
    }
}

impl From<SysctlError> for CliError {
    fn from(e: SysctlError) -> Self {
        CliError::new(e.to_string(), sysctl_code(&e))
    }
}

impl From<crate::ops::try_change::TryError> for CliError {
    fn from(e: crate::ops::try_change::TryError) -> Self {
        use crate::ops::try_change::TryError;
        match e {
            TryError::Nic(e) => e.into(),
            TryError::Sysctl(e) => e.into(),
            j @ TryError::Journal(_) => CliError::new(j.to_string(), exit::FAILED),
        }
    }
}

/// Exit code for a sysctl engine error.
pub(crate) fn sysctl_code(e: &SysctlError) -> i32 {
    e.class().exit_code()
}
