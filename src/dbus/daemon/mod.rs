//! hlctld's side of `org.hlctl.Daemon1`: [`manager`]
//! (`org.hlctl.Daemon1.Manager` at `/org/hlctl/Daemon1`), [`link`]
//! (`org.hlctl.Daemon1.Link`, one object per link), [`job`]
//! (`org.hlctl.Daemon1.Job`), [`limits`] (what one caller may start), [`state`] (the link cache, change claims, the job
//! table and each job's state), [`auth`] (polkit on the caller), [`monitor`]
//! (netlink notifications → `PropertiesChanged`), [`reapply`] (persisted
//! settings), [`bench`], [`tune`], [`doctor`], [`report`] and [`check`] (the jobs of
//! those verbs), [`records`] (history and baselines), [`try_job`]
//! (a change kept only once confirmed, `rollback_timeout_s`), [`service`]
//! (start, readiness, shutdown), [`notify`] (`sd_notify`), [`logging`]
//! (journald or stderr), [`memory`] (one malloc arena, trimmed), [`counters`]
//! (live counters at a rate a client asks for), [`sampler`] (link usage
//! samples for `hlctl usage`), [`args`]
//! (hlctld's command line).

pub mod args;
pub mod auth;
pub(crate) mod bench;
pub(crate) mod check;
pub(crate) mod counter_watch;
pub(crate) mod counters;
pub(crate) mod doctor;
pub(crate) mod guard;
pub(crate) mod job;
pub(crate) mod limits;
pub(crate) mod link;
pub mod logging;
pub(crate) mod manager;
pub(crate) mod memory;
pub(crate) mod monitor;
pub(crate) mod notify;
pub(crate) mod reapply;
pub(crate) mod records;
pub(crate) mod report;
pub(crate) mod sampler;
pub mod service;
pub(crate) mod state;
pub(crate) mod try_job;
pub(crate) mod tune;
