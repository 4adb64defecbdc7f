//! One function per operation, every front end a thin caller (cargo's
//! `ops` is the model): the CLI's in-process path and hlctld's jobs call the
//! same function, which runs the work, writes its history row where the
//! work ran, and returns the typed result. A client never writes a row for
//! work the daemon did, so the history holds what was measured, not what a
//! client believed it received.

pub(crate) mod bench;
pub(crate) mod bench_file;
pub(crate) mod check;
pub(crate) mod doctor;
pub(crate) mod nic;
pub(crate) mod reapply;
pub(crate) mod records;
pub(crate) mod report;
pub(crate) mod row_store;
pub(crate) mod rows;
pub(crate) mod sysctl;
pub(crate) mod try_change;
pub(crate) mod tune;
pub(crate) mod usage;
pub(crate) mod workload;

pub(crate) use row_store::{NOT_STORED_KEY, Requester, Stored};
