//! What hlctld and hlctl share on the bus: the names and paths below,
//! [`error`] (typed `org.hlctl.Daemon1.Error.*`), [`settings`] (the `a{sv}`
//! wire form of a change set and of method options), [`bench`] (the
//! benchmark parameter types), [`doctor`], [`report`] and [`check`] (those
//! jobs' options), [`job`] (job paths and states) and the typed
//! values: [`typed`] (a link's settings groups), [`set_rows`] (`ApplyChanges`'
//! rows and summary), [`params`] (`StartBenchmark`'s `a{sv}` parameters),
//! [`headline`] (a job's typed result), [`sysctl`] (`ShowSysctl` and
//! `SetSysctl` rows); [`verb`] declares every verb once (its method,
//! polkit [`action`], history kind, errors and option keys, the keys of a
//! job's options from their [`fields`] table).

pub mod action;
pub(crate) mod bench;
pub(crate) mod bench_keys;
pub(crate) mod bounds;
pub(crate) mod check;
pub(crate) mod doctor;
pub(crate) mod error;
pub(crate) mod fields;
pub(crate) mod headline;
pub(crate) mod job;
pub mod key;
pub mod params;
pub(crate) mod records;
pub(crate) mod report;
pub mod set_rows;
pub(crate) mod settings;
pub(crate) mod start;
pub mod sysctl;
pub(crate) mod typed;
pub mod verb;

/// The well-known bus name; the version is in the name.
pub(crate) const BUS_NAME: &str = "org.hlctl.Daemon1";
/// The root object path (the Manager).
pub(crate) const PATH: &str = "/org/hlctl/Daemon1";
pub(crate) const JOB_IFACE: &str = "org.hlctl.Daemon1.Job";

/// Poll a stream for its next item (no extra stream-combinator crate needed).
pub async fn next<S: futures_core::Stream + Unpin>(s: &mut S) -> Option<S::Item> {
    std::future::poll_fn(|cx| std::pin::Pin::new(&mut *s).poll_next(cx)).await
}
