//! The Manager's reads of what hlctld keeps — history, baselines, a
//! comparison, the tune status — open to every local user, and its changes to
//! it — saving a baseline, rolling a tune back — each behind polkit. The
//! engine runs on a blocking thread; the wire form is
//! [`crate::dbus::wire::records`].

use tracing::info;
use zbus::Connection;
use zbus::message::Header;

use super::auth::{self, Action};
use super::state::Daemon;
use crate::dbus::wire::error::{Error, Result};
use crate::dbus::wire::records::{self, Dict, HistoryFilter, OwnedDict};
use crate::ops::records as ops;
use crate::paths::Paths;

/// Run `f` on a blocking thread with the daemon's paths.
async fn blocking<T: Send + 'static>(
    d: &Daemon,
    f: impl FnOnce(&Paths) -> Result<T> + Send + 'static,
) -> Result<T> {
    let paths = d.opts.paths.clone();
    tokio::task::spawn_blocking(move || f(&paths))
        .await
        .map_err(|e| Error::Failed(format!("the worker thread failed: {e}")))?
}

pub(crate) async fn list_history(d: &Daemon, filter: &OwnedDict) -> Result<Vec<Dict>> {
    let f = HistoryFilter::decode(filter)?;
    blocking(d, move |p| {
        let rows = ops::history(p, f.kind, f.since, f.limit)?;
        Ok(rows.iter().map(records::encode_row).collect())
    })
    .await
}

pub(crate) async fn list_baselines(d: &Daemon) -> Result<Vec<Dict>> {
    blocking(d, |p| {
        let b = ops::baselines(p)?;
        Ok(b.iter().map(records::encode_baseline).collect())
    })
    .await
}

pub(crate) async fn compare(d: &Daemon, name: &str, options: &OwnedDict) -> Result<Dict> {
    let threshold = records::compare_threshold(options)?;
    let name = (!name.is_empty()).then(|| name.to_string());
    blocking(d, move |p| {
        let c = ops::compare(p, name.as_deref(), threshold)?;
        Ok(records::encode_comparison(&c))
    })
    .await
}

pub(crate) async fn usage(d: &Daemon, iface: &str, options: &OwnedDict) -> Result<Dict> {
    let days = records::usage_days(options)?;
    let iface = (!iface.is_empty()).then(|| iface.to_string());
    blocking(d, move |p| {
        let u = crate::ops::usage::usage(p, iface.as_deref(), days)?;
        Ok(records::encode_usage(&u))
    })
    .await
}

pub(crate) async fn save_baseline(
    d: &Daemon,
    conn: &Connection,
    hdr: &Header<'_>,
    name: &str,
) -> Result<u32> {
    crate::history::compare::check_name(name)?;
    let who = auth::authorize(conn, hdr, &[Action::SaveBaseline], name).await?;
    let n = name.to_string();
    let saved = blocking(d, move |p| Ok(ops::save_baseline(p, &n)?)).await?;
    info!(caller_uid = %who.uid_text(), "baseline '{name}' saved: {saved} metric(s)");
    Ok(saved as u32)
}

pub(crate) async fn tune_status(d: &Daemon) -> Result<Dict> {
    blocking(d, |p| Ok(records::encode_status(&ops::status(p)))).await
}

pub(crate) async fn rollback(
    d: &Daemon,
    conn: &Connection,
    hdr: &Header<'_>,
    interface: &str,
) -> Result<Dict> {
    let who = auth::authorize(conn, hdr, &[Action::Tune], "rollback").await?;
    let iface = (!interface.is_empty()).then(|| interface.to_string());
    if let Some(i) = &iface
        && d.link_by_name(i).is_none()
    {
        return Err(Error::NoSuchInterface(
            crate::nic::error::NicError::no_such_interface(i).to_string(),
        ));
    }
    let r = blocking(d, move |p| {
        ops::rollback(p, iface.as_deref()).map_err(|e| Error::Failed(e.to_string()))
    })
    .await?;
    info!(
        caller_uid = %who.uid_text(),
        "rollback: {} pending tune(s) restored, {} tune(s) undone",
        r.pending_restored.len(),
        r.undone.len()
    );
    Ok(records::encode_rollback(&r))
}
