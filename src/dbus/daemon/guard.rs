//! Never fight, never lose: when a value hlctl persisted is changed by
//! someone else (the netlink monitor sees it), hlctld waits until the
//! network managers have finished their own work on the link (udev's queue
//! empty, networkd not configuring, no `ifreload`/`netplan` running,
//! NetworkManager neither activating nor holding a checkpoint), then
//! re-applies the persisted value once. If it is set back again, hlctld logs
//! one warning naming the manager and its file (journal field
//! `HLCTL_OWNER`), shows it on the link (`show`, `Link.Describe()`), and stops
//! re-applying that setting until it is persisted again.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use serde_json::Value;
use tracing::{debug, info, warn};
use zbus::Connection;

use super::link;
use super::state::{Daemon, LinkState, lock};
use crate::nic::model::{ChangeSet, Interface};
use crate::nic::owner::settle;
use crate::nic::persist::{Entry, State};
use crate::nic::{apply, diff};

/// Wait at least this long after a change before looking again: a manager
/// often sets several values in a row.
const QUIET: Duration = Duration::from_secs(2);
/// How often to ask whether the managers have finished.
const POLL: Duration = Duration::from_millis(500);
/// Give up waiting for the managers after this long (and re-apply nothing).
const SETTLE_MAX: Duration = Duration::from_secs(60);

/// (setting, persisted value, value now).
type Drift = Vec<(String, Value, Value)>;

/// Look at a link after a change the monitor saw (one task per link at a time).
pub(crate) fn watch(conn: &Connection, d: &Arc<Daemon>, l: &Arc<LinkState>) {
    if l.guard.running.swap(true, Ordering::SeqCst) {
        return;
    }
    let (c, dd, ll) = (conn.clone(), d.clone(), l.clone());
    tokio::spawn(async move {
        run(&c, &dd, &ll).await;
        ll.guard.running.store(false, Ordering::SeqCst);
    });
}

async fn run(conn: &Connection, d: &Arc<Daemon>, l: &Arc<LinkState>) {
    let Some(entry) = persisted(d, l).await else {
        return;
    };
    remember(l, &entry.conflicts);
    let cs = entry.settings;
    if l.holder().is_some() || changed_by_others(l, &cs, &l.model()).is_empty() {
        return;
    }
    let Some(now) = settled_model(d, l).await else {
        return;
    };
    let drift = changed_by_others(l, &cs, &now);
    let (again, first): (Drift, Drift) = {
        let seen = lock(&l.guard.reasserted);
        drift.into_iter().partition(|(n, _, _)| seen.contains(n))
    };
    if !again.is_empty() {
        give_up(d, l, &now, &again).await;
    }
    if !first.is_empty() {
        reassert(conn, d, l, &cs, &first).await;
    }
}

/// The conflicts hlctld noted in the state file before (a restart): not
/// re-applied again.
pub(crate) fn remember(l: &LinkState, conflicts: &std::collections::BTreeMap<String, String>) {
    let mut g = lock(&l.guard.given_up);
    for (k, v) in conflicts {
        g.entry(k.clone()).or_insert_with(|| v.clone());
    }
}

/// The link's entry in the state file, if it has one.
async fn persisted(d: &Arc<Daemon>, l: &Arc<LinkState>) -> Option<Entry> {
    let path = d.paths().nic_state_file();
    let state = tokio::task::spawn_blocking(move || State::load(&path))
        .await
        .ok()?
        .ok()?;
    let m = l.model();
    state.find(&m.name, m.mac.as_deref()).cloned()
}

/// Persisted settings the link holds differently, leaving out values hlctl
/// set itself and settings it no longer re-applies.
fn changed_by_others(l: &LinkState, cs: &ChangeSet, iface: &Interface) -> Drift {
    let own = lock(&l.guard.own).clone();
    let given_up = lock(&l.guard.given_up).clone();
    diff::drifted(iface, cs)
        .into_iter()
        .filter(|(n, _, now)| !given_up.contains_key(n) && own.get(n) != Some(now))
        .collect()
}

/// Why the managers are still busy with the link, or `None`.
async fn busy(d: &Arc<Daemon>, l: &LinkState, name: &str) -> Option<String> {
    if let Some(b) = settle::busy_files(&d.roots(), l.ifindex) {
        return Some(b);
    }
    match d.nm_bus().await {
        Some(c) => settle::busy_nm(&c, name).await,
        None => None,
    }
}

/// The link's model once the managers have finished, read afresh.
async fn settled_model(d: &Arc<Daemon>, l: &Arc<LinkState>) -> Option<Interface> {
    let name = l.model().name;
    let start = Instant::now();
    tokio::time::sleep(QUIET).await;
    // Quiet on two looks in a row: NetworkManager re-activating a
    // connection passes through "disconnected" between its busy states.
    let mut quiet_before = false;
    loop {
        match busy(d, l, &name).await {
            None if quiet_before => break,
            None => quiet_before = true,
            Some(why) if start.elapsed() > SETTLE_MAX => {
                info!(iface = %name, "{name}: persisted settings not re-applied: {why} for over {} s", SETTLE_MAX.as_secs());
                return None;
            }
            Some(why) => {
                quiet_before = false;
                debug!("{name}: waiting: {why}");
            }
        }
        tokio::time::sleep(POLL).await;
    }
    let dd = d.clone();
    let fresh = tokio::task::spawn_blocking(move || dd.read_one(&name)).await;
    let i = fresh.ok()?.ok()?;
    (i.ifindex == l.ifindex).then(|| {
        l.set_model(i.clone());
        i
    })
}

/// Re-apply the persisted values of `first` once.
async fn reassert(
    conn: &Connection,
    d: &Arc<Daemon>,
    l: &Arc<LinkState>,
    cs: &ChangeSet,
    first: &Drift,
) {
    let names: Vec<String> = first.iter().map(|(n, _, _)| n.clone()).collect();
    let Ok(claim) = l.claim("re-applying persisted settings changed by someone else") else {
        return;
    };
    lock(&l.guard.reasserted).extend(names.iter().cloned());
    let name = l.model().name;
    let list: Vec<String> = first
        .iter()
        .map(|(n, want, now)| format!("{n} {} (persisted {})", diff_text(now), diff_text(want)))
        .collect();
    info!(iface = %name, action = "reassert", "{name}: changed by someone else: {}; re-applying the persisted values once", list.join(", "));
    let (dd, only, n) = (d.clone(), diff::only(cs, &names), name.clone());
    let r =
        tokio::task::spawn_blocking(move || apply::apply(&mut lock(&dd.writer), &n, &only, false))
            .await;
    drop(claim);
    match r {
        Ok(Ok(outcome)) => l.guard.own_values(&outcome),
        Ok(Err(e)) => warn!(iface = %name, "{name}: re-applying persisted settings failed: {e}"),
        Err(e) => warn!(iface = %name, "{name}: re-apply task failed: {e}"),
    }
    link::refresh(conn, d, l).await;
}

fn diff_text(v: &Value) -> String {
    crate::nic::registry::value_text(v)
}

/// Set back again after hlctld re-applied it: say so once, naming who sets
/// it, and stop re-applying it.
async fn give_up(d: &Arc<Daemon>, l: &LinkState, now: &Interface, again: &Drift) {
    let owners = d.owners(&now.name, now.ifindex).await;
    for (setting, want, value) in again {
        let who = owners
            .iter()
            .find(|o| o.owns.contains(setting))
            .or(owners.first());
        let owner = who.map_or_else(
            || "another program (no network manager found that sets it)".to_string(),
            |o| o.describe(),
        );
        let msg = format!(
            "{setting} was set back to {} after hlctld re-applied the persisted {}; hlctld stops re-applying it. Set by: {owner}. Change it there, or persist it through that manager (hlctl set --persist)",
            diff_text(value),
            diff_text(want)
        );
        warn!(iface = %now.name, setting = %setting, owner = %owner, action = "conflict", "{}: {msg}", now.name);
        lock(&l.guard.given_up).insert(setting.clone(), msg.clone());
        note(d, now, setting, msg).await;
    }
}

/// Keep the conflict in the state file: it holds across a restart of
/// hlctld and `hlctl status` shows it.
async fn note(d: &Arc<Daemon>, now: &Interface, setting: &str, msg: String) {
    let path = d.paths().nic_state_file();
    let (name, mac, setting) = (now.name.clone(), now.mac.clone(), setting.to_string());
    let r = tokio::task::spawn_blocking(move || {
        crate::nic::persist::update(&path, |s| {
            s.note_conflict(&name, mac.as_deref(), &setting, &msg)
        })
    })
    .await;
    if let Ok(Err(e)) = r {
        warn!("{}: keeping the conflict in the state file: {e}", now.name);
    }
}
