//! Following a job hlctld runs for this client, one way for every kind
//! (benchmark, tune, doctor, ...): subscribe before the job starts (so its end
//! cannot be missed), then [`JobClient::wait`] reports progress, confirms a
//! tune's kept changes when the job asks, cancels on Ctrl-C, and stops with
//! [`WaitError::DaemonGone`] when hlctld leaves the bus instead of waiting
//! forever.
//!
//! The system bus lets any local user broadcast a signal on any path, so
//! every subscription names hlctld's unique bus name as the sender (resolved
//! when subscribing) and every message is checked against it again: a
//! `Finished` or `PropertiesChanged` from anyone else is never read.

use std::collections::HashMap;

use zbus::proxy::CacheProperties;
use zbus::{Connection, MatchRule, Message, MessageStream, ObjectPath, OwnedVariant};

use super::proxy::JobProxy;
use crate::bench::progress::{Progress, ProgressEvent};
use crate::dbus::wire::job::{JOBS_PATH, JobStatus};
use crate::dbus::wire::{BUS_NAME, JOB_IFACE, next};

/// How a job ended.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct JobEnd {
    /// `succeeded`, `failed` or `cancelled`.
    pub(crate) state: JobStatus,
    /// The job's result as sent in `Finished` (JSON; `{"error": ..., "class": ...}`
    /// when it failed).
    pub(crate) result: String,
}

/// Why following a job stopped before it ended.
#[derive(Debug, thiserror::Error)]
pub(crate) enum WaitError {
    /// hlctld left the bus (stopped, crashed, restarted): its jobs are gone.
    #[error("hlctld left the bus (it stopped or crashed)")]
    DaemonGone,
    /// The bus connection ended.
    #[error("lost the connection to the bus")]
    ConnectionLost,
    /// A call or a signal failed on the bus.
    #[error(transparent)]
    Bus(#[from] zbus::Error),
}

/// What to do while following a job.
pub(crate) struct Follow<'a> {
    /// Where progress goes.
    pub(crate) progress: &'a dyn Progress,
    /// Call `Job.Confirm` when the job is `awaiting-confirmation` (commit-confirm:
    /// we are alive and still talk to the daemon).
    pub(crate) confirm: bool,
    /// The progress message shown once Ctrl-C asked the job to stop.
    pub(crate) cancelling: &'a str,
}

/// The signal subscriptions a job's client needs, made before the job starts.
pub(crate) struct JobClient {
    conn: Connection,
    /// hlctld's unique bus name when we subscribed.
    daemon: zbus::names::OwnedUniqueName,
    finished: MessageStream,
    changes: MessageStream,
    gone: MessageStream,
}

/// A job's progress as it arrives in `PropertiesChanged`.
#[derive(Default)]
struct Seen {
    fraction: f64,
    message: String,
    state: Option<JobStatus>,
}

impl Seen {
    /// Fold a `PropertiesChanged` body in; false when it is not one.
    fn fold(&mut self, m: &Message) -> bool {
        let body = m.body();
        let Ok((_, changed, _)) =
            body.deserialize::<(String, HashMap<String, OwnedVariant>, Vec<String>)>()
        else {
            return false;
        };
        if let Some(Ok(f)) = changed.get("Progress").map(|v| f64::try_from(&**v)) {
            self.fraction = f;
        }
        if let Some(Ok(s)) = changed.get("Message").map(|v| <&str>::try_from(&**v)) {
            self.message = s.to_string();
        }
        if let Some(Ok(s)) = changed.get("State").map(|v| <&str>::try_from(&**v)) {
            self.state = JobStatus::parse(s);
        }
        true
    }

    fn event(&self) -> ProgressEvent {
        ProgressEvent {
            fraction: self.fraction,
            message: self.message.clone(),
        }
    }
}

fn signals(
    sender: &zbus::names::UniqueName<'_>,
    iface: &'static str,
    member: &'static str,
) -> zbus::Result<MatchRule<'static>> {
    Ok(MatchRule::builder()
        .msg_type(zbus::message::Type::Signal)
        .sender(zbus::names::BusName::Unique(sender.to_owned()))
        .interface(iface)
        .member(member)
        .path_namespace(JOBS_PATH)
        .build()?
        .into_owned())
}

impl JobClient {
    /// Subscribe to the job signals and to hlctld's bus name; call before
    /// starting the job.
    pub(crate) async fn subscribe(conn: &Connection) -> zbus::Result<JobClient> {
        let daemon = zbus::fdo::DBusProxy::new(conn)
            .await?
            .get_name_owner(zbus::names::BusName::try_from(BUS_NAME)?)
            .await?;
        let finished = signals(&daemon, JOB_IFACE, "Finished")?;
        let changes = signals(
            &daemon,
            "org.freedesktop.DBus.Properties",
            "PropertiesChanged",
        )?;
        let gone = MatchRule::builder()
            .msg_type(zbus::message::Type::Signal)
            .sender("org.freedesktop.DBus")
            .member("NameOwnerChanged")
            .arg(0, BUS_NAME)
            .build()?;
        Ok(JobClient {
            conn: conn.clone(),
            daemon,
            finished: MessageStream::for_match_rule(finished, conn, None).await?,
            changes: MessageStream::for_match_rule(changes, conn, None).await?,
            gone: MessageStream::for_match_rule(gone, conn, None).await?,
        })
    }

    /// Follow job `path` until it ends.
    pub(crate) async fn wait(
        &mut self,
        path: &ObjectPath<'_>,
        follow: Follow<'_>,
    ) -> Result<JobEnd, WaitError> {
        let job = JobProxy::builder(&self.conn)
            .path(path.to_owned())
            .cache_properties(CacheProperties::No)
            .build()
            .await?;
        let daemon = self.daemon.clone();
        let ours = |m: &Message| {
            let h = m.header();
            h.path().is_some_and(|p| p == path)
                && h.sender().is_some_and(|s| s.as_str() == daemon.as_str())
        };
        let mut seen = Seen::default();
        let mut ctrl_c = std::pin::pin!(tokio::signal::ctrl_c());
        let (mut cancelling, mut confirmed) = (false, false);
        loop {
            tokio::select! {
                m = next(&mut self.finished) => {
                    let m = m.ok_or(WaitError::ConnectionLost)??;
                    if !ours(&m) {
                        continue;
                    }
                    let (state, result): (String, String) = m.body().deserialize()?;
                    let state = JobStatus::parse(&state).unwrap_or(JobStatus::Failed);
                    return Ok(JobEnd { state, result });
                }
                Some(Ok(m)) = next(&mut self.changes) => {
                    if !ours(&m) || !seen.fold(&m) {
                        continue;
                    }
                    let awaiting = seen.state == Some(JobStatus::AwaitingConfirmation);
                    if follow.confirm && awaiting && !confirmed && !cancelling {
                        job.confirm().await?;
                        confirmed = true;
                    }
                    follow.progress.report(seen.event());
                }
                m = next(&mut self.gone) => {
                    let m = m.ok_or(WaitError::ConnectionLost)??;
                    let (_, old, _): (String, String, String) = m.body().deserialize()?;
                    if !old.is_empty() {
                        return Err(WaitError::DaemonGone);
                    }
                }
                _ = &mut ctrl_c, if !cancelling => {
                    cancelling = true;
                    follow.progress.report(ProgressEvent {
                        fraction: seen.fraction,
                        message: follow.cancelling.to_string(),
                    });
                    job.cancel().await?;
                }
            }
        }
    }
}
