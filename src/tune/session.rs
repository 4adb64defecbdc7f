//! One whole tune as the CLI (`--local`) and hlctld run it: gather the
//! doctor's inputs, measure, run the loop with a confirm callback
//! ([`crate::ops::tune`] records the result in the history).

use super::outcome::TuneReport;
use super::params::TuneParams;
use super::target::LiveTarget;
use super::{Context, TuneError, run};
use crate::bench::progress::{Cancel, Progress};
use crate::doctor::{self, Options as DoctorOptions};
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
            doctor::DoctorError::Peer(m) => TuneError::Peer(m),
            doctor::DoctorError::Invalid(m) => TuneError::Invalid(m),
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
    Ok(report)
}
