//! hlctl as a D-Bus client of hlctld: each verb's request as method calls,
//! each reply decoded into the same types the in-process engine returns.

use std::collections::HashMap;

use serde::Deserialize;
use zbus::proxy::CacheProperties;
use zbus::{Connection, OwnedObjectPath, Variant};

use super::backend::CliError;
use super::exit;
use crate::dbus::client::job::{Follow, JobClient, WaitError};
use crate::dbus::client::proxy::{LinkProxy, ManagerProxy};
use crate::dbus::wire::job::JobStatus;
use crate::dbus::wire::{BUS_NAME, PATH, error::short_name, set_rows, settings};
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
    match e {
        zbus::Error::MethodError(name, desc, _) => {
            let desc = desc.unwrap_or_default();
            let code = match short_name(name.as_str()) {
                Some("InvalidArgument") | Some("NoSuchInterface") | Some("InvalidState") => {
                    exit::INVALID
                }
                Some("NotAuthorized") => exit::NOT_PERMITTED,
                Some(_) => exit::FAILED,
                None if name.as_str() == "org.freedesktop.DBus.Error.AccessDenied" => {
                    exit::NOT_PERMITTED
                }
                None => return CliError::new(format!("hlctld: {name}: {desc}"), exit::FAILED),
            };
            CliError::new(desc, code)
        }
        other => CliError::new(format!("talking to hlctld: {other}"), exit::FAILED),
    }
}

/// The exit code for a failed job's `class` (`invalid`, `not_permitted`, else failed).
pub(crate) fn exit_for_class(class: Option<&str>) -> i32 {
    match class {
        Some("invalid") => exit::INVALID,
        Some("not_permitted") => exit::NOT_PERMITTED,
        _ => exit::FAILED,
    }
}

/// The message and exit code for a job this client could not follow to its
/// end; `what` names the job (`benchmark`, `tune`, ...).
pub(crate) fn wait_error(e: WaitError, what: &str) -> CliError {
    match e {
        WaitError::Bus(e) => remote_error(e),
        WaitError::DaemonGone => CliError::new(
            format!("hlctld stopped while the {what} ran (it left the bus); its result is lost"),
            exit::FAILED,
        ),
        WaitError::ConnectionLost => CliError::new(
            format!("lost the connection to hlctld while the {what} ran"),
            exit::FAILED,
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

    async fn model(&self, path: OwnedObjectPath) -> Result<Interface, CliError> {
        let json = self
            .link(path)
            .await?
            .settings()
            .await
            .map_err(remote_error)?;
        decode(&json)
    }

    pub(crate) fn show(&self, names: &[String]) -> Result<Vec<Interface>, CliError> {
        self.rt.block_on(async {
            let mut out = Vec::new();
            if names.is_empty() {
                // All links' models in parallel: one round trip's latency, not N.
                let paths = self.manager.links().await.map_err(remote_error)?;
                let mut reads = tokio::task::JoinSet::new();
                for p in paths {
                    let conn = self.conn.clone();
                    reads.spawn(async move {
                        let link = LinkProxy::builder(&conn)
                            .path(p)
                            .cache_properties(CacheProperties::No)
                            .build()
                            .await?;
                        link.settings().await
                    });
                }
                while let Some(r) = reads.join_next().await {
                    let json = match r {
                        Ok(Ok(j)) => j,
                        // Gone between the listing and the read: skip it, as in-process does.
                        Ok(Err(zbus::Error::MethodError(n, _, _)))
                            if n.as_str() == "org.freedesktop.DBus.Error.UnknownObject" =>
                        {
                            continue;
                        }
                        Ok(Err(e)) => return Err(remote_error(e)),
                        Err(e) => return Err(CliError::new(e.to_string(), exit::FAILED)),
                    };
                    let i: Interface = decode(&json)?;
                    if i.name != "lo" {
                        out.push(i);
                    }
                }
                out.sort_by_key(|i| (!i.physical, i.ifindex));
            } else {
                for n in names {
                    let p = self.manager.get_link(n).await.map_err(remote_error)?;
                    out.push(self.model(p).await?);
                }
            }
            Ok(out)
        })
    }

    pub(crate) fn set(
        &self,
        iface: &str,
        cs: &ChangeSet,
        dry_run: bool,
        persist: bool,
    ) -> Result<SetReply, CliError> {
        self.rt.block_on(async {
            let p = self.manager.get_link(iface).await.map_err(remote_error)?;
            let mut opts: HashMap<&str, Variant<'_>> = HashMap::new();
            opts.insert("dry_run", Variant::Bool(dry_run));
            opts.insert("persist", Variant::Bool(persist));
            let (rows, summary) = self
                .link(p)
                .await?
                .apply_changes(settings::encode_changes(cs), opts)
                .await
                .map_err(remote_error)?;
            set_rows::decode(rows, &summary).map_err(|e| {
                CliError::new(
                    format!("hlctld sent a reply this hlctl cannot read: {e}"),
                    exit::FAILED,
                )
            })
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

    pub(crate) fn sysctl_set(
        &self,
        assignments: &[(String, String)],
        dry_run: bool,
        persist: bool,
    ) -> Result<sysctl::set::SetReply, CliError> {
        let pairs: Vec<(&str, &str)> = assignments
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let mut opts: HashMap<&str, Variant<'_>> = HashMap::new();
        opts.insert("dry_run", Variant::Bool(dry_run));
        opts.insert("persist", Variant::Bool(persist));
        let (rows, summary) = self
            .rt
            .block_on(self.manager.set_sysctl(&pairs, opts))
            .map_err(remote_error)?;
        crate::dbus::wire::sysctl::decode_set(rows, &summary).map_err(|e| {
            CliError::new(
                format!("hlctld sent a SetSysctl reply this hlctl cannot read: {e}"),
                exit::FAILED,
            )
        })
    }
}

impl Remote {
    /// Start a benchmark job, follow its progress into `progress`, cancel it
    /// on Ctrl-C, and return its result (JSON; `{"error": ...}` when it failed).
    pub(crate) fn run_job(
        &self,
        kind: &str,
        params: &HashMap<String, zbus::OwnedVariant>,
        progress: &dyn crate::bench::progress::Progress,
    ) -> Result<serde_json::Value, CliError> {
        self.rt.block_on(async {
            let mut jobs = JobClient::subscribe(&self.conn)
                .await
                .map_err(remote_error)?;
            let path = self
                .manager
                .start_benchmark(kind, params, HashMap::new())
                .await
                .map_err(remote_error)?;
            let follow = Follow {
                progress,
                confirm: false,
                cancelling: "cancelling",
            };
            let end = jobs
                .wait(&path, follow)
                .await
                .map_err(|e| wait_error(e, "benchmark"))?;
            decode(&end.result)
        })
    }

    /// Start a job with `start` (after subscribing to its signals), follow it
    /// into `progress` (Ctrl-C cancels it), and decode its result; a failed
    /// job is an error naming `what` with its class's exit code.
    pub(crate) fn follow_job<T: serde::de::DeserializeOwned>(
        &self,
        what: &str,
        progress: &dyn crate::bench::progress::Progress,
        start: impl Future<Output = zbus::Result<OwnedObjectPath>>,
    ) -> Result<T, CliError> {
        let end = self.rt.block_on(async {
            let mut jobs = JobClient::subscribe(&self.conn)
                .await
                .map_err(remote_error)?;
            let path = start.await.map_err(remote_error)?;
            let follow = Follow {
                progress,
                confirm: false,
                cancelling: "cancelling",
            };
            jobs.wait(&path, follow)
                .await
                .map_err(|e| wait_error(e, what))
        })?;
        let v: serde_json::Value = serde_json::from_str(&end.result).unwrap_or_default();
        if end.state != JobStatus::Succeeded {
            let msg = v["error"]
                .as_str()
                .unwrap_or(end.state.as_str())
                .to_string();
            return Err(CliError::new(
                format!("{what} {}: {msg}", end.state),
                exit_for_class(v["class"].as_str()),
            ));
        }
        serde_json::from_value(v).map_err(|e| {
            CliError::new(
                format!("hlctld sent a {what} result this hlctl cannot read: {e}"),
                exit::FAILED,
            )
        })
    }
}
