//! Re-apply persisted NIC settings: at start, and when a link with persisted
//! settings appears again (hot-plug, driver reload, a re-created device).
//! Entries match by MAC first, so a renamed interface still gets its settings.

use std::sync::Arc;

use tracing::{info, warn};
use zbus::Connection;

use super::link;
use super::state::{Daemon, LinkState, lock};
use crate::nic::model::ChangeSet;
use crate::nic::owner::placed::requested;
use crate::nic::persist::{Entry, State};
use crate::nic::{apply, diff};

/// Re-apply the persisted settings of one link, if it has any; log each setting.
pub(crate) async fn reapply(conn: &Connection, d: &Arc<Daemon>, l: &Arc<LinkState>, why: &str) {
    let model = l.model();
    let path = d.paths().nic_state_file();
    let state = match tokio::task::spawn_blocking(move || State::load(&path)).await {
        Ok(Ok(s)) => s,
        Ok(Err(e)) => return warn!("cannot read persisted settings: {e}"),
        Err(_) => return,
    };
    let Some(entry) = state.find(&model.name, model.mac.as_deref()).cloned() else {
        return;
    };
    // Settings another program kept setting back (noted before a restart)
    // are not fought over again.
    super::guard::remember(l, &entry.conflicts);
    let settings = without_conflicts(&entry);
    if settings.is_empty() {
        return link::refresh(conn, d, l).await;
    }
    let claim = match l.claim("re-applying persisted settings") {
        Ok(c) => c,
        Err(e) => return warn!("{}: persisted settings not re-applied: {e:?}", model.name),
    };
    info!(
        iface = %model.name,
        action = "reapply",
        "re-applying persisted settings of {} ({why}; entry {} {})",
        model.name,
        entry.name,
        entry.mac.as_deref().unwrap_or("")
    );
    let (dd, name) = (d.clone(), model.name.clone());
    let r = tokio::task::spawn_blocking(move || {
        apply::apply(&mut lock(&dd.writer), &name, &settings, false)
    })
    .await;
    drop(claim);
    match r {
        Ok(Ok(outcome)) => {
            l.guard.own_values(&outcome);
            for s in &outcome.settings {
                let after = s.after.as_ref().map_or("-".to_string(), |v| v.to_string());
                info!(
                    caller_uid = "hlctld (persisted settings)",
                    action = "reapply",
                    iface = %outcome.interface,
                    setting = %s.setting,
                    "persisted {} {}: {} -> {} ({:?})",
                    outcome.interface,
                    s.setting,
                    s.before,
                    after,
                    s.status
                );
            }
            if let Some(f) = &outcome.failure {
                warn!(iface = %outcome.interface, "re-applying failed at {}: {}; restored", f.step, f.error);
            }
        }
        Ok(Err(e)) => warn!(iface = %model.name, "persisted settings not re-applied: {e}"),
        Err(e) => warn!(iface = %model.name, "re-apply task failed: {e}"),
    }
    link::refresh(conn, d, l).await;
}

/// The entry's settings but those hlctld stopped re-applying.
fn without_conflicts(entry: &Entry) -> ChangeSet {
    if entry.conflicts.is_empty() {
        return entry.settings.clone();
    }
    let names: Vec<String> = requested(&entry.settings)
        .into_iter()
        .map(|(n, _)| n)
        .filter(|n| !entry.conflicts.contains_key(n))
        .collect();
    diff::only(&entry.settings, &names)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_setting_in_conflict_is_not_reapplied_the_others_are() {
        let mut entry = Entry {
            settings: ChangeSet {
                mtu: Some(9000),
                txqueuelen: Some(5000),
                ..Default::default()
            },
            ..Default::default()
        };
        assert_eq!(without_conflicts(&entry), entry.settings);
        entry
            .conflicts
            .insert("mtu".into(), "set back by ifupdown2".into());
        let left = without_conflicts(&entry);
        assert_eq!((left.mtu, left.txqueuelen), (None, Some(5000)));
    }
}
