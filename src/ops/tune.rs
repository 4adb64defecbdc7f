//! `tune` as an operation: the whole tune, then its history row (unless a
//! dry run) with the settings the link has afterwards, under the uid that
//! asked.

use super::bench::Ran;
use super::row_store::{Requester, Stored, store};
use super::rows;
use crate::bench::progress::{Cancel, Progress};
use crate::nic::netlink::Netlink;
use crate::paths::Paths;
use crate::tune::params::TuneParams;
use crate::tune::{TuneError, TuneReport, session};

/// Tune as `p` asks; `confirm` is called when kept changes await
/// confirmation (true keeps them).
pub(crate) fn run(
    p: &TuneParams,
    paths: &Paths,
    who: Requester,
    progress: &dyn Progress,
    cancel: &Cancel,
    confirm: &mut dyn FnMut(&TuneReport) -> bool,
) -> Result<Ran<TuneReport>, TuneError> {
    // An interface that does not exist is the caller's mistake, said before
    // any peer is asked (hlctld's Tune method checks the same before its
    // job starts: both paths give the same class and exit code).
    if nix::net::if_::if_nametoindex(p.interface.as_str()).is_err() {
        return Err(crate::nic::error::NicError::no_such_interface(&p.interface).into());
    }
    // Where the tune runs (this process or hlctld), before anything changes:
    // a peer where no benchmark server answers stops it within seconds;
    // a path still coming up (the link was just reset) gets the carrier's
    // time to return.
    if let Ok(o) = p.options(None) {
        crate::bench::net::check_peer_settling(
            &o.peer.host,
            o.peer.port,
            crate::tune::link::CARRIER_WAIT,
        )
        .map_err(|e| TuneError::Peer(e.to_string()))?;
    }
    let report = session::tune(p, paths, progress, cancel, confirm)?;
    if p.dry_run {
        return Ok(Ran {
            report,
            stored: Stored::NotAsked,
        });
    }
    let now: Vec<_> = Netlink::new()
        .ok()
        .and_then(|mut nl| crate::nic::read::interface(&mut nl, &p.interface).ok())
        .into_iter()
        .collect();
    let snap = crate::history::settings::snapshot(&now, &crate::doctor::gather::sysctls(paths));
    let stored = store(paths, who, rows::tune(&report, snap));
    Ok(Ran { report, stored })
}
