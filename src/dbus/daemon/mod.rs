//! hlctld's side of `org.hlctl.Daemon1`: [`manager`]
//! (`org.hlctl.Daemon1.Manager` at `/org/hlctl/Daemon1`), [`link`]
//! (`org.hlctl.Daemon1.Link`, one object per link), [`job`]
//! (`org.hlctl.Daemon1.Job`), [`state`] (the link cache, change claims, the job
//! table and each job's state), [`auth`] (polkit on the caller), [`monitor`]
//! (netlink notifications → `PropertiesChanged`), [`reapply`] (persisted
//! settings), [`bench`] and [`tune`] (benchmark and tune jobs), [`service`]
//! (start, readiness, shutdown), [`notify`] (`sd_notify`), [`logging`]
//! (journald or stderr), [`memory`] (one malloc arena, trimmed), [`args`]
//! (hlctld's command line).

pub mod args;
pub mod auth;
pub mod bench;
pub mod doctor;
pub mod job;
pub mod link;
pub mod logging;
pub mod manager;
pub(crate) mod memory;
pub mod monitor;
pub mod notify;
pub mod reapply;
pub mod records;
pub mod report;
pub mod service;
pub mod state;
pub mod tune;
