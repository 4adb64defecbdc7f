//! Keep the link objects current from netlink notifications: links appearing
//! (object, announced by the ObjectManager's `InterfacesAdded`, + re-apply
//! persisted settings), disappearing (object removed: `InterfacesRemoved`),
//! and any setting change — ours or made behind our
//! back with `ip`/`ethtool` — re-read and announced with `PropertiesChanged`.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use tracing::{debug, info, warn};
use zbus::Connection;

use super::link::{self, LinkObject};
use super::manager::Manager;
use super::state::{Daemon, LinkState, lock};
use crate::nic::error::NicError;
use crate::nic::model::Interface;
use crate::nic::netlink::monitor::{self, Event};
use crate::nic::read;

/// Notifications arriving within this window are handled together.
const DEBOUNCE: Duration = Duration::from_millis(20);

/// Subscribe (in the daemon's network namespace) and start following changes.
pub(crate) fn spawn(conn: &Connection, d: &Arc<Daemon>) -> std::io::Result<()> {
    let receivers = monitor::subscribe()?;
    if receivers.len() < 2 {
        warn!(
            "no ethtool netlink monitor group: ethtool changes made by others are seen on the next read only"
        );
    }
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<Vec<Event>>();
    for (i, mut r) in receivers.into_iter().enumerate() {
        let tx = tx.clone();
        std::thread::Builder::new()
            .name(format!("netlink-monitor-{i}"))
            .spawn(move || {
                loop {
                    match r.wait() {
                        Ok(ev) if ev.is_empty() => {}
                        Ok(ev) => {
                            if tx.send(ev).is_err() {
                                break;
                            }
                        }
                        Err(e) => {
                            warn!("netlink monitor: {e}");
                            std::thread::sleep(Duration::from_secs(1));
                        }
                    }
                }
            })?;
    }
    tokio::spawn(run(conn.clone(), d.clone(), rx));
    Ok(())
}

async fn run(
    conn: Connection,
    d: Arc<Daemon>,
    mut rx: tokio::sync::mpsc::UnboundedReceiver<Vec<Event>>,
) {
    while let Some(mut batch) = rx.recv().await {
        tokio::time::sleep(DEBOUNCE).await;
        while let Ok(more) = rx.try_recv() {
            batch.extend(more);
        }
        let mut touched = BTreeSet::new();
        let mut all = false;
        for ev in &batch {
            debug!("netlink event {ev:?}");
            match ev {
                Event::Link { ifindex, .. } => {
                    touched.insert(*ifindex);
                }
                Event::Ethtool {
                    ifindex: Some(i), ..
                } => {
                    touched.insert(*i);
                }
                Event::Ethtool { ifindex: None, .. } | Event::Overrun => all = true,
            }
        }
        reconcile(&conn, &d, touched, all).await;
    }
}

/// Compare the kernel's links with our objects: add, remove, refresh.
pub(crate) async fn reconcile(
    conn: &Connection,
    d: &Arc<Daemon>,
    touched: BTreeSet<u32>,
    all: bool,
) {
    let known: BTreeMap<u32, String> = d
        .all_links()
        .iter()
        .map(|l| (l.ifindex, l.model().name))
        .collect();
    let dd = d.clone();
    let read = tokio::task::spawn_blocking(move || -> Result<_, NicError> {
        let mut nl = lock(&dd.reader);
        let links = nl.links().map_err(NicError::Connect)?;
        let present: BTreeSet<u32> = links.iter().map(|l| l.ifindex).collect();
        let mut fresh = Vec::new();
        for l in links {
            let stale =
                all || touched.contains(&l.ifindex) || known.get(&l.ifindex) != Some(&l.name);
            if stale {
                match read::interface(&mut nl, &l.name) {
                    Ok(i) => fresh.push(i),
                    Err(NicError::NoSuchInterface { .. }) => {}
                    Err(e) => warn!("{}: cannot read: {e}", l.name),
                }
            }
        }
        Ok((present, fresh))
    })
    .await;
    let (present, fresh) = match read {
        Ok(Ok(r)) => r,
        Ok(Err(e)) => return warn!("cannot list links: {e}"),
        Err(e) => return warn!("link refresh task failed: {e}"),
    };
    let mut links_changed = false;
    let mut removed = 0;
    for gone in d
        .all_links()
        .into_iter()
        .filter(|l| !present.contains(&l.ifindex))
    {
        remove(conn, d, &gone).await;
        links_changed = true;
        removed += 1;
    }
    if removed > 0 {
        // The objects of the links that went are free now: give the pages
        // back (a hypervisor's guests come and go by the hundred).
        super::memory::trim();
    }
    for iface in fresh {
        match d.link(iface.ifindex) {
            Some(l) => {
                link::publish(conn, &l, iface).await;
                super::guard::watch(conn, d, &l);
            }
            None => {
                if let Some(l) = add(conn, d, iface).await {
                    links_changed = true;
                    let (c, dd) = (conn.clone(), d.clone());
                    tokio::spawn(async move {
                        super::reapply::reapply(&c, &dd, &l, "the link appeared").await
                    });
                }
            }
        }
    }
    if links_changed
        && let Ok(m) = conn
            .object_server()
            .interface::<_, Manager>(crate::dbus::wire::PATH)
            .await
    {
        let _ = m.get().await.links_changed(m.signal_emitter()).await;
    }
}

/// Register a new link object and announce it.
pub(crate) async fn add(
    conn: &Connection,
    d: &Arc<Daemon>,
    iface: Interface,
) -> Option<Arc<LinkState>> {
    let name = iface.name.clone();
    let state = Arc::new(LinkState::new(iface, d.held.clone()));
    let p = link::path(state.ifindex);
    let obj = LinkObject {
        daemon: d.clone(),
        link: state.clone(),
    };
    match conn.object_server().at(p.clone(), obj).await {
        Ok(_) => {}
        Err(e) => {
            warn!("{name}: cannot register {p}: {e}");
            return None;
        }
    }
    d.links
        .write()
        .unwrap_or_else(|p| p.into_inner())
        .insert(state.ifindex, state.clone());
    info!(iface = %name, ifindex = state.ifindex, "link {name} appeared");
    Some(state)
}

async fn remove(conn: &Connection, d: &Arc<Daemon>, l: &Arc<LinkState>) {
    let name = l.model().name;
    let p = link::path(l.ifindex);
    d.links
        .write()
        .unwrap_or_else(|p| p.into_inner())
        .remove(&l.ifindex);
    let _ = conn
        .object_server()
        .remove::<LinkObject, _>(p.clone())
        .await;
    info!(iface = %name, ifindex = l.ifindex, "link {name} disappeared");
}
