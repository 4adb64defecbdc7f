//! hlctl's side of `org.hlctl.Daemon1`: [`proxy`] (typed proxies of the
//! Manager, Link and Job interfaces).

pub mod proxy;
