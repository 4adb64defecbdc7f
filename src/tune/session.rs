//! One whole tune as the CLI (`--local`) and hlctld run it: gather the
//! doctor's inputs, measure, run the loop with a confirm callback, record the
//! result in the history.

use super::params::TuneParams;
use super::report::TuneReport;
use super::target::LiveTarget;
use super::{Context, TuneError, run};
use crate::bench::progress::{Cancel, Progress};
use crate::doctor::{self, Options as DoctorOptions};
use crate::history::settings::Snapshot;
use crate::history::store::NewResult;
use crate::history::{History, Kind, record};
use crate::nic::netlink::Netlink;
use crate::nic::read;
use crate::paths::Paths;

/// Run the tune `p` asks for. `confirm` is called when kept changes await
/// confirmation (true keeps them).
pub(crate) fn tune(
    p: &TuneParams,
    paths: &Paths,
    progress: &dyn Progress,
    cancel: &Cancel,
    confirm: &mut dyn FnMut(&TuneReport) -> bool,
) -> Result<TuneReport, TuneError> {
    let mut nl =
        Netlink::new().map_err(|e| TuneError::Nic(crate::nic::error::NicError::Connect(e)))?;
    let iface = read::interface(&mut nl, &p.interface)?;
    let opts = p.options(iface.mac.clone()).map_err(TuneError::Invalid)?;
    let addr = opts
        .peer
        .resolve()
        .map_err(|e| TuneError::Invalid(format!("peer {}: {e}", opts.peer.host)))?;
    let measure = crate::path::measure_for(&opts.peer, p.time());
    let dopts = DoctorOptions {
        interfaces: vec![p.interface.clone()],
        peer: Some(opts.peer.clone()),
        stress: std::time::Duration::ZERO,
        ..Default::default()
    };
    let inputs =
        doctor::gather::gather(&dopts, paths, None, progress, cancel).map_err(|e| match e {
            doctor::DoctorError::Nic(n) => TuneError::Nic(n),
        })?;
    let findings = doctor::check(&inputs).findings;
    let mut target = LiveTarget::new(paths, &p.interface, addr)?;
    let report = run(
        &opts,
        Context {
            paths,
            target: &mut target,
            measure: measure.as_ref(),
            inputs: &inputs,
            findings,
            progress,
            cancel,
            confirm,
        },
    )?;
    if !p.dry_run {
        let now = read::interface(&mut nl, &p.interface).ok();
        let snap = crate::history::settings::snapshot(
            &now.into_iter().collect::<Vec<_>>(),
            &doctor::gather::sysctls(paths),
        );
        if let Err(e) =
            History::open(&paths.state_dir).and_then(|mut h| h.add(&history_row(&report, snap)))
        {
            tracing::warn!("tune result not stored in the history: {e}");
        }
    }
    Ok(report)
}

/// The history row of a tune; its metrics are the throughput after the kept changes.
fn history_row(r: &TuneReport, settings: Snapshot) -> NewResult {
    let metrics = r
        .after
        .as_ref()
        .map(|a| record::net_metrics(&r.peer, a.upload.median_bps, a.download.median_bps))
        .unwrap_or_default();
    NewResult {
        kind: Kind::Tune,
        host: r.host.clone(),
        interface: Some(r.interface.clone()),
        peer: Some(r.peer.clone()),
        settings,
        result: serde_json::to_value(r).unwrap_or_default(),
        metrics,
        ts: Some(r.timestamp),
        uid: None,
    }
}
