//! What lies between this host and a peer, measured without shelling out:
//!
//! - [`peer`]: `HOST[:PORT]` and its address;
//! - [`rtt`]: round-trip time of a TCP handshake to the peer's port, and
//!   whether the port still answers (the tuner's connectivity check);
//! - [`icmp`]: ICMP echo with the don't-fragment bit (path MTU, RTT under load);
//! - [`pmtu`]: the largest packet that reaches the peer unfragmented;
//! - [`route`]: default routes and the interface that carries traffic to the peer;
//! - [`throughput`]: throughput to the peer as a series of samples, behind the
//!   [`Measure`](throughput::Measure) trait ([`bench_net`] gives the real one);
//!   not to be confused with [`crate::measure`], the measurements doctor,
//!   tune, report and check make from the benchmark library.

pub(crate) mod bench_net;
pub(crate) mod icmp;
pub(crate) mod limit;
pub(crate) mod peer;
pub(crate) mod pmtu;
pub(crate) mod route;
pub(crate) mod rtt;
pub(crate) mod throughput;

pub(crate) use peer::Peer;

/// The network throughput measurement towards `peer` (`time_s` seconds per
/// run).
pub(crate) fn measure_for(peer: &Peer, time_s: u32) -> Box<dyn throughput::Measure> {
    Box::new(bench_net::NetMeasure::new(peer.clone(), time_s))
}
