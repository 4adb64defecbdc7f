//! `hlctl tune` through hlctld: start the tune job, show its progress, confirm
//! its kept changes when it asks (commit-confirm: if this client is gone by
//! then, the daemon rolls them back at the deadline), Ctrl-C cancels.

use std::collections::HashMap;

use zbus::Variant;

use super::backend::CliError;
use super::exit;
use super::remote::{Remote, exit_for_class, remote_error, wait_error};
use crate::bench::progress::Progress;
use crate::dbus::client::job::{Follow, JobClient, WaitError};
use crate::dbus::wire::job::JobStatus;
use crate::tune::TuneReport;
use crate::tune::params::TuneParams;

pub(crate) fn tune(
    r: &Remote,
    p: &TuneParams,
    progress: &dyn Progress,
) -> Result<TuneReport, CliError> {
    let params =
        serde_json::to_string(p).map_err(|e| CliError::new(e.to_string(), exit::FAILED))?;
    let end = r.rt.block_on(async {
        let mut jobs = JobClient::subscribe(&r.conn).await.map_err(remote_error)?;
        let mut opts: HashMap<&str, Variant<'_>> = HashMap::new();
        opts.insert("params", Variant::from(params.as_str()));
        let path = r.manager.tune(opts).await.map_err(remote_error)?;
        let follow = Follow {
            progress,
            confirm: true,
            cancelling: "cancelling: rolling back",
        };
        jobs.wait(&path, follow).await.map_err(tune_wait_error)
    })?;
    if end.state == JobStatus::Succeeded {
        return serde_json::from_str(&end.result).map_err(|e| {
            CliError::new(
                format!("hlctld sent a tune report this hlctl cannot read: {e}"),
                exit::FAILED,
            )
        });
    }
    let v: serde_json::Value = serde_json::from_str(&end.result).unwrap_or_default();
    let msg = v["error"]
        .as_str()
        .unwrap_or(end.state.as_str())
        .to_string();
    let code = exit_for_class(v["class"].as_str());
    Err(CliError::new(format!("tune {}: {msg}", end.state), code))
}

/// A tune cut off from hlctld: what happens to its changes.
fn tune_wait_error(e: WaitError) -> CliError {
    match e {
        WaitError::DaemonGone => CliError::new(
            "hlctld stopped while the tune ran: it restores the journalled settings when it \
             starts again (hlctl status shows them)",
            exit::FAILED,
        ),
        WaitError::ConnectionLost => CliError::new(
            "lost the connection to hlctld while the tune ran (it rolls back at the deadline)",
            exit::FAILED,
        ),
        e => wait_error(e, "tune"),
    }
}
