//! The throughput measurement the doctor, the tuner and `report` use.

use crate::path::Peer;
use crate::path::measure::Measure;

/// A network benchmark towards `peer`, `time_s` seconds per run; `None` when
/// this build has no network benchmark.
pub fn for_peer(_peer: &Peer, _time_s: u32) -> Option<Box<dyn Measure>> {
    None
}

/// Disk figures for a directory; none in this build.
pub fn disk(
    _dir: &str,
    _cancel: &crate::bench::progress::Cancel,
) -> Result<Vec<crate::report::Figure>, String> {
    Err("no disk benchmark in this build".into())
}

/// CPU figures for `threads` threads; none in this build.
pub fn cpu(
    _threads: u32,
    _cancel: &crate::bench::progress::Cancel,
) -> Result<Vec<crate::report::Figure>, String> {
    Err("no CPU benchmark in this build".into())
}

/// The settings snapshot of these interfaces and the network sysctls.
pub fn settings_snapshot(
    paths: &crate::paths::Paths,
    ifaces: &[String],
) -> crate::history::settings::Snapshot {
    let mut list = Vec::new();
    if let Ok(mut nl) = crate::nic::netlink::Netlink::new() {
        for i in ifaces {
            if let Ok(x) = crate::nic::read::interface(&mut nl, i) {
                list.push(x);
            }
        }
    }
    crate::history::settings::snapshot(&list, &crate::doctor::gather::sysctls(paths))
}
