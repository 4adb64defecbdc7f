//! hlctl's side of `org.hlctl.Daemon1`: [`proxy`] (typed proxies of the
//! Manager, Link and Job interfaces) and [`job`] (following a job to its end).

pub(crate) mod job;
pub(crate) mod proxy;
