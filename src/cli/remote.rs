//! hlctl as a D-Bus client of hlctld: each verb's request as method calls,
//! each reply decoded into the same types the in-process engine returns.

use std::collections::HashMap;

use serde::Deserialize;
use zbus::proxy::{CacheProperties, MethodFlags};
use zbus::{Connection, OwnedObjectPath};

use super::error::CliError;
use super::exit;
use crate::dbus::client::job::{Follow, JobClient, WaitError};
use crate::dbus::client::proxy::{LinkProxy, ManagerProxy};
use crate::dbus::wire::error::{class_of_name, short_name};
use crate::dbus::wire::job::JobStatus;
use crate::dbus::wire::verb::Verb;
use crate::dbus::wire::{BUS_NAME, PATH, set_rows, settings};

/// The interface of a link object.
use crate::nic::model::{ChangeSet, Interface};
use crate::nic::set::SetReply;
use crate::sysctl;

/// A connection to hlctld.
pub(crate) struct Remote {
    pub(crate) rt: tokio::runtime::Runtime,
    pub(crate) conn: Connection,
    pub(crate) manager: ManagerProxy<'static>,
}

/// Map a D-Bus failure to the message and exit code the in-process path gives.
pub(crate) fn remote_error(e: zbus::Error) -> CliError {
    use crate::dbus::wire::error::INTERACTIVE;
    match e {
        zbus::Error::MethodError(name, desc, _) => {
            let desc = desc.unwrap_or_default();
            let class = class_of_name(name.as_str());
            if short_name(name.as_str()).is_none() && class == crate::class::Class::Failed {
                return CliError::new(format!("hlctld: {name}: {desc}"), class.exit_code());
            }
            CliError::new(desc, class.exit_code())
        }
        // The standard names (polkit wanting to ask) arrive as fdo errors.
        zbus::Error::FDO(e) if zbus::DBusError::name(&*e).as_str() == INTERACTIVE => CliError::new(
            zbus::DBusError::description(&*e).unwrap_or_default(),
            exit::NOT_PERMITTED,
        ),
        other => CliError::new(format!("talking to hlctld: {other}"), exit::NO_DAEMON),
    }
}

/// The exit code for a failed job's `class` (`invalid`, `not_permitted`, else failed).
pub(crate) fn exit_for_class(class: Option<&str>) -> i32 {
    crate::class::Class::from_wire(class).exit_code()
}

/// The message and exit code for a job this client could not follow to its
/// end; `what` names the job (`benchmark`, `tune`, ...).
pub(crate) fn wait_error(e: WaitError, what: &str) -> CliError {
    match e {
        WaitError::Bus(e) => remote_error(e),
        WaitError::DaemonGone => CliError::new(
            format!("hlctld stopped while the {what} ran (it left the bus); its result is lost"),
            exit::NO_DAEMON,
        ),
        WaitError::ConnectionLost => CliError::new(
            format!("lost the connection to hlctld while the {what} ran"),
            exit::NO_DAEMON,
        ),
    }
}

fn decode<T: for<'de> Deserialize<'de>>(json: &str) -> Result<T, CliError> {
    serde_json::from_str(json).map_err(|e| {
        CliError::new(
            format!("hlctld sent a reply this hlctl cannot read: {e}"),
            exit::FAILED,
        )
    })
}

impl Remote {
    /// Connect to the bus (`address`, else the system bus, honouring
    /// `DBUS_SYSTEM_BUS_ADDRESS`) and make sure hlctld answers (the bus
    /// starts it by activation where it can). Err: why it is unreachable.
    pub(crate) fn connect(address: Option<&str>) -> Result<Remote, String> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| format!("cannot start the client runtime: {e}"))?;
        let (conn, manager) = rt.block_on(async {
            let b = match address {
                Some(a) => zbus::connection::Builder::address(a),
                None => zbus::connection::Builder::system(),
            };
            let conn = b.build().await.map_err(|e| {
                format!(
                    "cannot connect to {}: {e}",
                    address.unwrap_or("the system bus")
                )
            })?;
            conn.call_method(
                Some(BUS_NAME),
                PATH,
                Some("org.freedesktop.DBus.Peer"),
                "Ping",
                &(),
            )
            .await
            .map_err(|e| match e {
                zbus::Error::MethodError(n, d, _) => {
                    format!("{BUS_NAME} does not answer: {n}: {}", d.unwrap_or_default())
                }
                e => format!("{BUS_NAME} does not answer: {e}"),
            })?;
            let manager = ManagerProxy::builder(&conn)
                .cache_properties(CacheProperties::No)
                .build()
                .await
                .map_err(|e| e.to_string())?;
            Ok::<_, String>((conn, manager))
        })?;
        Ok(Remote { rt, conn, manager })
    }

    async fn link(&self, path: OwnedObjectPath) -> Result<LinkProxy<'static>, CliError> {
        LinkProxy::builder(&self.conn)
            .path(path)
            .cache_properties(CacheProperties::No)
            .build()
            .await
            .map_err(remote_error)
    }

    /// The links named (every link but `lo` when none), physical first,
    /// in one `DescribeLinks` call however many links there are.
    async fn models(&self, names: &[String]) -> Result<Vec<Interface>, CliError> {
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let json = self
            .manager
            .describe_links(&names)
            .await
            .map_err(remote_error)?;
        let mut all: Vec<Interface> = decode(&json)?;
        if names.is_empty() {
            all.retain(|i| i.name != "lo");
        }
        Ok(all)
    }

    pub(crate) fn show(&self, names: &[String]) -> Result<Vec<Interface>, CliError> {
        self.rt.block_on(self.models(names))
    }

    /// `set`; with `try_s` > 0 the change is kept only once confirmed, and
    /// the path of the job that waits for the confirmation comes back too.
    pub(crate) fn set(
        &self,
        iface: &str,
        cs: &ChangeSet,
        (dry_run, persist): (bool, bool),
        try_s: u32,
    ) -> Result<(SetReply, Option<OwnedObjectPath>), CliError> {
        self.rt.block_on(async {
            let p = self.manager.get_link(iface).await.map_err(remote_error)?;
            let opts = settings::encode_change_options(dry_run, persist, try_s);
            let (rows, summary) = self
                .link(p)
                .await?
                .apply_changes(settings::encode_changes(cs), opts)
                .await
                .map_err(remote_error)?;
            let job = job_of(&summary);
            let reply = set_rows::decode(rows, &summary).map_err(|e| {
                CliError::new(
                    format!("hlctld sent a reply this hlctl cannot read: {e}"),
                    exit::FAILED,
                )
            })?;
            Ok((reply, job))
        })
    }

    pub(crate) fn sysctl_show(&self, keys: &[String]) -> Result<Vec<sysctl::Entry>, CliError> {
        let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
        let rows = self
            .rt
            .block_on(self.manager.show_sysctl(&keys))
            .map_err(remote_error)?;
        Ok(crate::dbus::wire::sysctl::decode_show(rows))
    }

    /// `sysctl KEY=VALUE...`; `try_s` as in [`Remote::set`].
    pub(crate) fn sysctl_set(
        &self,
        assignments: &[(String, String)],
        (dry_run, persist): (bool, bool),
        try_s: u32,
    ) -> Result<(sysctl::set::SysctlReply, Option<OwnedObjectPath>), CliError> {
        let pairs: Vec<(&str, &str)> = assignments
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let opts = settings::encode_change_options(dry_run, persist, try_s);
        let (rows, summary) = self
            .rt
            .block_on(self.manager.set_sysctl(&pairs, opts))
            .map_err(remote_error)?;
        let job = job_of(&summary);
        let reply = crate::dbus::wire::sysctl::decode_set(rows, &summary).map_err(|e| {
            CliError::new(
                format!("hlctld sent a SetSysctl reply this hlctl cannot read: {e}"),
                exit::FAILED,
            )
        })?;
        Ok((reply, job))
    }

    /// End a try's job by `answer` (confirm, cancel, or let hlctld restore
    /// at its deadline), then wait for the job's end and read how it ended.
    pub(crate) fn end_try(
        &self,
        path: &OwnedObjectPath,
        answer: crate::ops::try_change::Answer,
    ) -> Result<crate::ops::try_change::TryEnd, CliError> {
        use crate::ops::try_change::Answer;
        self.rt.block_on(async {
            let job = crate::dbus::client::proxy::JobProxy::builder(&self.conn)
                .path(path.clone())
                .cache_properties(CacheProperties::No)
                .build()
                .await
                .map_err(remote_error)?;
            let said = match answer {
                Answer::Confirmed => job.confirm().await,
                Answer::Cancelled => job.cancel().await,
                Answer::TimedOut => Ok(()),
            };
            // InvalidState: the job ended first (its deadline); read how.
            if let Err(e) = said.map_err(remote_error)
                && e.code != exit::INVALID
            {
                return Err(e);
            }
            let gone = |e| {
                CliError::new(
                    format!(
                        "cannot read how the try ended ({e}); hlctld restores an unconfirmed \
                         change at its deadline, or when it starts again (hlctl status shows it)"
                    ),
                    exit::FAILED,
                )
            };
            loop {
                let state = job.state().await.map_err(gone)?;
                if !matches!(state.as_str(), "running" | "awaiting-confirmation") {
                    break;
                }
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
            let v: serde_json::Value = decode(&job.result_json().await.map_err(gone)?)?;
            match v.get("error").and_then(|e| e.as_str()) {
                Some(e) => Ok(crate::ops::try_change::TryEnd {
                    why: e.to_string(),
                    ..Default::default()
                }),
                None => decode(&v.to_string()),
            }
        })
    }
}

/// The `job` key of a change's summary: the try's job, when there is one.
fn job_of(summary: &HashMap<String, zbus::OwnedVariant>) -> Option<OwnedObjectPath> {
    let v = summary.get("job")?;
    let p = zbus::ObjectPath::try_from(&**v).ok()?;
    Some(p.into())
}

/// How to follow one job to its end.
pub(crate) struct JobCall<'a> {
    /// What runs, for messages: `benchmark`, `doctor`, `report`, `tune`.
    pub(crate) what: &'a str,
    pub(crate) progress: &'a dyn crate::bench::progress::Progress,
    /// Confirm the job when it awaits confirmation (a tune's commit-confirm).
    pub(crate) confirm: bool,
    /// The progress message once Ctrl-C asked the job to stop.
    pub(crate) cancelling: &'a str,
    /// A job that ended without an `error` still has a result to show (a
    /// cancelled benchmark reports what it measured).
    pub(crate) partial_ok: bool,
}

/// The message of a job that ended without a result.
fn failure(call: &JobCall<'_>, state: JobStatus, v: &serde_json::Value) -> CliError {
    let msg = v["error"].as_str().unwrap_or(state.as_str());
    // The first line as in process: `VERB: message` for a failure.
    let text = if call.partial_ok {
        msg.to_string()
    } else if state == JobStatus::Failed {
        format!("{}: {msg}", call.what)
    } else {
        format!("{} {state}: {msg}", call.what)
    };
    CliError::new(text, exit_for_class(v["class"].as_str()))
}

/// A tune cut off from hlctld: what happens to its changes.
fn lost(call: &JobCall<'_>, e: WaitError) -> CliError {
    match (call.confirm, e) {
        (true, WaitError::DaemonGone) => CliError::new(
            "hlctld stopped while the tune ran: it restores the journalled settings when it \
             starts again (hlctl status shows them)",
            exit::FAILED,
        ),
        (true, WaitError::ConnectionLost) => CliError::new(
            "lost the connection to hlctld while the tune ran (it rolls back at the deadline)",
            exit::FAILED,
        ),
        (_, e) => wait_error(e, call.what),
    }
}

impl Remote {
    /// Start job verb `v` (`Manager.<member>(options)`, one `a{sv}` in, the
    /// job's path out) as its declaration says: the member, and whether
    /// polkit may ask the user.
    pub(crate) async fn start(
        &self,
        v: &Verb,
        options: HashMap<String, zbus::Variant<'static>>,
    ) -> zbus::Result<OwnedObjectPath> {
        let flags = match v.interactive {
            true => MethodFlags::ALLOW_INTERACTIVE_AUTH,
            false => MethodFlags::empty(),
        };
        self.manager
            .inner()
            .call_with_flags(v.member, flags, &(options,))
            .await?
            .ok_or_else(|| zbus::Error::Failure(format!("{}: no reply", v.member)))
    }

    /// The one way to run a job through hlctld: subscribe to its signals
    /// (from hlctld alone), start it with `start`, follow its progress
    /// (Ctrl-C cancels it; a tune is confirmed when it asks), and decode its
    /// result, or turn its failure into the message and exit code of its
    /// class.
    pub(crate) fn follow<T: serde::de::DeserializeOwned>(
        &self,
        call: JobCall<'_>,
        start: impl Future<Output = zbus::Result<OwnedObjectPath>>,
    ) -> Result<T, CliError> {
        let end = self.rt.block_on(async {
            let mut jobs = JobClient::subscribe(&self.conn)
                .await
                .map_err(remote_error)?;
            let path = start.await.map_err(remote_error)?;
            let follow = Follow {
                progress: call.progress,
                confirm: call.confirm,
                cancelling: call.cancelling,
            };
            jobs.wait(&path, follow).await.map_err(|e| lost(&call, e))
        })?;
        let v: serde_json::Value = serde_json::from_str(&end.result).unwrap_or_default();
        let has_result = if call.partial_ok {
            v.get("error").is_none()
        } else {
            end.state == JobStatus::Succeeded
        };
        if !has_result {
            return Err(failure(&call, end.state, &v));
        }
        if let Some(w) = v.get(crate::ops::NOT_STORED_KEY).and_then(|w| w.as_str()) {
            super::unstored::say(w);
        }
        serde_json::from_value(v).map_err(|e| {
            CliError::new(
                format!(
                    "hlctld sent a {} result this hlctl cannot read: {e}",
                    call.what
                ),
                exit::FAILED,
            )
        })
    }
}
