//! `hlctl tune` through hlctld: start the tune job, show its progress, confirm
//! its kept changes when it asks (commit-confirm: if this client is gone by
//! then, the daemon rolls them back at the deadline), Ctrl-C cancels.

use std::collections::HashMap;

use zbus::Variant;
use zbus::proxy::CacheProperties;

use super::backend::CliError;
use super::exit;
use super::remote::{Remote, exit_for_class, fold_job_change, remote_error};
use crate::bench::progress::{Progress, ProgressEvent};
use crate::tune::TuneReport;
use crate::tune::params::TuneParams;

pub fn tune(r: &Remote, p: &TuneParams, progress: &dyn Progress) -> Result<TuneReport, CliError> {
    use crate::dbus::client::proxy::JobProxy;
    use zbus::{MatchRule, MessageStream};
    const JOBS: &str = "/org/hlctl/Daemon1/job";
    let params =
        serde_json::to_string(p).map_err(|e| CliError::new(e.to_string(), exit::FAILED))?;
    r.rt.block_on(async {
        let stream = |iface: &'static str, member: &'static str| {
            let conn = r.conn.clone();
            async move {
                let rule = MatchRule::builder()
                    .msg_type(zbus::message::Type::Signal)
                    .interface(iface)
                    .member(member)
                    .path_namespace(JOBS)
                    .build()?;
                MessageStream::for_match_rule(rule, &conn, None).await
            }
        };
        let mut finished = stream(crate::dbus::wire::JOB_IFACE, "Finished").await.map_err(remote_error)?;
        let mut changes = stream("org.freedesktop.DBus.Properties", "PropertiesChanged")
            .await
            .map_err(remote_error)?;
        // The daemon going away (crash, restart) ends the wait too.
        let gone_rule = MatchRule::builder()
            .msg_type(zbus::message::Type::Signal)
            .sender("org.freedesktop.DBus")
            .member("NameOwnerChanged")
            .arg(0, crate::dbus::wire::BUS_NAME)
            .build()
            .map_err(remote_error)?;
        let mut gone = MessageStream::for_match_rule(gone_rule, &r.conn, None)
            .await
            .map_err(remote_error)?;
        let mut opts: HashMap<&str, Variant<'_>> = HashMap::new();
        opts.insert("params", Variant::from(params.as_str()));
        let path = r.manager.tune(opts).await.map_err(remote_error)?;
        let job = JobProxy::builder(&r.conn)
            .path(path.clone())
            .cache_properties(CacheProperties::No)
            .build()
            .await
            .map_err(remote_error)?;
        let ours = |m: &zbus::Message| m.header().path().is_some_and(|p| p.as_str() == path.as_str());
        let (mut fraction, mut message) = (0.0, String::new());
        let mut ctrl_c = std::pin::pin!(tokio::signal::ctrl_c());
        let (mut cancelling, mut confirmed) = (false, false);
        loop {
            tokio::select! {
                m = crate::dbus::wire::next(&mut finished) => {
                    let Some(Ok(m)) = m else {
                        return Err(CliError::new("lost the connection to hlctld while the tune ran (it rolls back at the deadline)", exit::FAILED));
                    };
                    if !ours(&m) {
                        continue;
                    }
                    let (state, result): (String, String) = m.body().deserialize().map_err(remote_error)?;
                    if state == "succeeded" {
                        return serde_json::from_str(&result)
                            .map_err(|e| CliError::new(format!("hlctld sent a tune report this hlctl cannot read: {e}"), exit::FAILED));
                    }
                    let v: serde_json::Value = serde_json::from_str(&result).unwrap_or_default();
                    let msg = v["error"].as_str().unwrap_or(&state).to_string();
                    let code = exit_for_class(v["class"].as_str());
                    return Err(CliError::new(format!("tune {state}: {msg}"), code));
                }
                Some(Ok(m)) = crate::dbus::wire::next(&mut changes) => {
                    if !ours(&m) {
                        continue;
                    }
                    if !fold_job_change(&m, &mut fraction, &mut message) {
                        continue;
                    }
                    if !confirmed && !cancelling && message.starts_with(crate::dbus::wire::AWAITING) {
                        // We are alive and still talk to the daemon: confirm.
                        job.confirm().await.map_err(remote_error)?;
                        confirmed = true;
                    }
                    progress.report(ProgressEvent { fraction, message: message.clone() });
                }
                Some(Ok(m)) = crate::dbus::wire::next(&mut gone) => {
                    let (_, _, new): (String, String, String) = m.body().deserialize().map_err(remote_error)?;
                    if new.is_empty() {
                        return Err(CliError::new(
                            "hlctld stopped while the tune ran: it restores the journalled settings when it starts again (hlctl status shows them)",
                            exit::FAILED,
                        ));
                    }
                }
                _ = &mut ctrl_c, if !cancelling => {
                    cancelling = true;
                    progress.report(ProgressEvent { fraction, message: "cancelling: rolling back".into() });
                    job.cancel().await.map_err(remote_error)?;
                }
            }
        }
    })
}
