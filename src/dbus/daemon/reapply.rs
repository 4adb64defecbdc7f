//! Re-apply persisted NIC settings: at start, and when a link with persisted
//! settings appears again (hot-plug, driver reload, a re-created device).
//! Entries match by MAC first, so a renamed interface still gets its settings.
//! The work is `ops::reapply::link`, which `hlctl reapply` calls too; here
//! the link is claimed while it runs and its object refreshed after.

use std::sync::Arc;

use tracing::warn;
use zbus::Connection;

use super::link;
use super::state::{Daemon, LinkState, lock};
use crate::ops::reapply;

/// Re-apply the persisted settings of one link, if it has any; log each setting.
pub(crate) async fn reapply(conn: &Connection, d: &Arc<Daemon>, l: &Arc<LinkState>, why: &str) {
    let model = l.model();
    let paths = d.paths().clone();
    let (name, mac) = (model.name.clone(), model.mac.clone());
    let found =
        tokio::task::spawn_blocking(move || reapply::entry_for(&paths, &name, mac.as_deref()))
            .await;
    let entry = match found {
        Ok(Ok(Some(e))) => e,
        Ok(Ok(None)) | Err(_) => return,
        Ok(Err(e)) => return warn!("cannot read persisted settings: {e}"),
    };
    // Settings another program kept setting back (noted before a restart)
    // are not fought over again.
    super::guard::remember(l, &entry.conflicts);
    let claim = match l.claim("re-applying persisted settings") {
        Ok(c) => c,
        Err(e) => return warn!("{}: persisted settings not re-applied: {e:?}", model.name),
    };
    let (dd, name, why) = (d.clone(), model.name.clone(), why.to_string());
    let r = tokio::task::spawn_blocking(move || {
        reapply::link(&mut lock(&dd.writer), &name, &entry, &why)
    })
    .await;
    drop(claim);
    match r {
        Ok(result) => {
            if let Some(outcome) = &result.outcome {
                l.guard.own_values(outcome);
            }
        }
        Err(e) => warn!(iface = %model.name, "re-apply task failed: {e}"),
    }
    link::refresh(conn, d, l).await;
}
