//! Live counters: a client asks hlctld to announce every link's `Counters`
//! by `PropertiesChanged` every N ms (`Manager.SetCountersRefresh`), as
//! NetworkManager's `Device.Statistics.RefreshRateMs` does, so a page draws
//! live throughput without polling. The fastest rate any connected client
//! asked for wins; a client's request ends when it asks for 0 or leaves the
//! bus; with none, nothing is announced (the default). One rtnetlink dump
//! per tick reads every link's counters; who asked for what is
//! [`super::counter_watch`].

use std::sync::Arc;
use std::time::Duration;

use tracing::{debug, info};
use zbus::Connection;

use super::link::{self, LinkObject};
use super::state::{Daemon, lock};

/// Announce the counters of every link at the rate in force, until the
/// daemon stops.
pub(crate) fn spawn(conn: &Connection, d: &Arc<Daemon>) {
    let (conn, d) = (conn.clone(), d.clone());
    let mut rx = d.counters.rate.subscribe();
    tokio::spawn(async move {
        loop {
            let ms = *rx.borrow_and_update();
            if ms == 0 {
                if rx.changed().await.is_err() {
                    return;
                }
                info!("live counters: every {} ms", *rx.borrow());
                continue;
            }
            tokio::select! {
                _ = tokio::time::sleep(Duration::from_millis(ms.into())) => tick(&conn, &d).await,
                r = rx.changed() => if r.is_err() { return },
            }
        }
    });
}

/// One dump of every link's counters; announce those that changed.
async fn tick(conn: &Connection, d: &Arc<Daemon>) {
    let dd = d.clone();
    let dump = tokio::task::spawn_blocking(move || lock(&dd.reader).links()).await;
    let Ok(Ok(links)) = dump else {
        return debug!("live counters: the link dump failed");
    };
    for rt in links {
        let Some(l) = d.link_by_index(rt.ifindex) else {
            continue;
        };
        let mut m = l.model();
        if m.counters == rt.counters {
            continue;
        }
        m.counters = rt.counters;
        l.set_model(m);
        let server = conn.object_server();
        if let Ok(iref) = server
            .interface::<_, LinkObject>(link::path(rt.ifindex))
            .await
        {
            let _ = iref
                .get()
                .await
                .counters_changed(iref.signal_emitter())
                .await;
        }
    }
}
