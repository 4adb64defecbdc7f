//! The one rule from an error to what the user sees: every error of every
//! verb has a [`Class`], and the class alone decides the exit code and the
//! `class` of a failed job on the bus. The engines' and workflows' errors
//! each say their class (`NicError::class`, `SysctlError::class`,
//! `TuneError::class`, ...); the CLI (in process or through hlctld) and
//! hlctld's jobs only read it, so a verb exits the same whichever path ran it.

use serde::{Deserialize, Serialize};

/// What kind of failure an error is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Class {
    /// The caller's input is wrong (a bad value, no such interface, nothing
    /// to do); nothing changed. Exit 2.
    Invalid,
    /// The caller may not do this (polkit said no, EPERM/EACCES). Exit 3.
    NotPermitted,
    /// The work ran and failed (a driver refusing, a measurement that could
    /// not be taken); a change was restored. Exit 1.
    Failed,
    /// hlctld is not reachable, or left while the work ran. Exit 4.
    NoDaemon,
}

impl Class {
    /// Every class, in the order of their exit codes' table.
    pub const ALL: [Class; 4] = [
        Class::Invalid,
        Class::NotPermitted,
        Class::Failed,
        Class::NoDaemon,
    ];

    /// The process's exit code.
    pub const fn exit_code(self) -> i32 {
        match self {
            Class::Failed => 1,
            Class::Invalid => 2,
            Class::NotPermitted => 3,
            Class::NoDaemon => 4,
        }
    }

    /// The `class` of a failed job's result on the bus.
    pub fn wire(self) -> &'static str {
        match self {
            Class::Invalid => "invalid",
            Class::NotPermitted => "not_permitted",
            Class::Failed => "failed",
            Class::NoDaemon => "no_daemon",
        }
    }

    /// The class a job's result names (an unknown or absent one is failed).
    pub fn from_wire(s: Option<&str>) -> Class {
        Class::ALL
            .into_iter()
            .find(|c| Some(c.wire()) == s)
            .unwrap_or(Class::Failed)
    }

    /// The class of a failed system call: not permitted for EPERM and
    /// EACCES, else failed.
    pub fn of_errno(errno: Option<i32>) -> Class {
        match errno {
            Some(libc::EPERM) | Some(libc::EACCES) => Class::NotPermitted,
            _ => Class::Failed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_class_has_its_own_code_and_name_and_reads_back() {
        let codes: std::collections::HashSet<_> =
            Class::ALL.iter().map(|c| c.exit_code()).collect();
        assert_eq!(codes.len(), Class::ALL.len());
        for c in Class::ALL {
            assert_eq!(Class::from_wire(Some(c.wire())), c);
            assert_ne!(c.exit_code(), 0);
        }
        assert_eq!(Class::from_wire(Some("nonsense")), Class::Failed);
        assert_eq!(Class::from_wire(None), Class::Failed);
        assert_eq!(Class::of_errno(Some(libc::EACCES)), Class::NotPermitted);
        assert_eq!(Class::of_errno(Some(libc::EOPNOTSUPP)), Class::Failed);
    }
}
