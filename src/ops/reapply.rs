//! `reapply`: put the persisted settings back — the NIC settings of
//! `nic-settings.json` on each link that has an entry (matched by MAC
//! first, so a renamed link still gets its own) and the sysctls of
//! `90-hlctl.conf`. hlctld calls [`link`] at start and when a link appears;
//! `hlctl reapply` (a NAS's boot task, no system bus) calls [`all`], and
//! `hlctl reapply --watch` calls [`link`] for each link that appears.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use tracing::{info, warn};

use crate::nic::apply::{self, Outcome};
use crate::nic::diff;
use crate::nic::error::NicError;
use crate::nic::model::ChangeSet;
use crate::nic::netlink::Netlink;
use crate::nic::netlink::monitor::Event;
use crate::nic::owner::placed::requested;
use crate::nic::persist::{Entry, State};
use crate::paths::Paths;
use crate::tune::checkpoint::{self, Restored};
use crate::tune::rollback::restore_journal;

/// What re-applying one link's entry did.
#[derive(Debug, Serialize)]
pub(crate) struct LinkResult {
    pub(crate) interface: String,
    /// The entry it matched (its name and MAC when persisted).
    pub(crate) entry: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) mac: Option<String>,
    /// Settings left alone: another program sets them back (setting → why).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) not_reapplied: BTreeMap<String, String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) outcome: Option<Outcome>,
    /// Why nothing was applied (validation, netlink), if so.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) error: Option<String>,
}

impl LinkResult {
    /// What failed, in words, or `None`.
    pub(crate) fn failure(&self) -> Option<String> {
        let f = self.outcome.as_ref().and_then(|o| o.failure.as_ref());
        self.error
            .clone()
            .or_else(|| f.map(|f| format!("{}: {} (restored)", f.step, f.error)))
            .map(|e| format!("{}: {e}", self.interface))
    }
}

/// One persisted sysctl put back.
#[derive(Debug, Serialize)]
pub(crate) struct SysctlResult {
    pub(crate) key: String,
    pub(crate) value: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) before: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) after: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) error: Option<String>,
}

/// What `hlctl reapply` did.
#[derive(Debug, Default, Serialize)]
pub(crate) struct Report {
    pub(crate) state_file: String,
    pub(crate) sysctl_file: String,
    /// Journals of a tune or try whose process is gone (a crash), restored
    /// first, as hlctld does at start.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) restored: Vec<Restored>,
    pub(crate) links: Vec<LinkResult>,
    /// Entries whose link is not here (unplugged, not yet up): not a failure.
    pub(crate) absent: Vec<String>,
    pub(crate) sysctls: Vec<SysctlResult>,
    /// Everything that failed, one line each (empty: all put back).
    pub(crate) failed: Vec<String>,
}

/// The persisted entry of the link `name`/`mac`, if it has one.
pub(crate) fn entry_for(
    paths: &Paths,
    name: &str,
    mac: Option<&str>,
) -> Result<Option<Entry>, NicError> {
    let state = State::load(&paths.nic_state_file())?;
    Ok(state.find(name, mac).cloned())
}

/// Re-apply `entry` on the link `name` (but the settings in conflict), and
/// log each setting; `why` says what prompted it.
pub(crate) fn link(nl: &mut Netlink, name: &str, entry: &Entry, why: &str) -> LinkResult {
    let mut r = LinkResult {
        interface: name.to_string(),
        entry: entry.name.clone(),
        mac: entry.mac.clone(),
        not_reapplied: entry.conflicts.clone(),
        outcome: None,
        error: None,
    };
    let settings = without_conflicts(entry);
    if settings.is_empty() {
        return r;
    }
    info!(
        iface = %name,
        action = "reapply",
        "re-applying persisted settings of {name} ({why}; entry {} {})",
        entry.name,
        entry.mac.as_deref().unwrap_or("")
    );
    match apply::apply(nl, name, &settings, false) {
        Ok(outcome) => {
            log(&outcome);
            r.outcome = Some(outcome);
        }
        Err(e) => {
            warn!(iface = %name, "persisted settings not re-applied: {e}");
            r.error = Some(e.to_string());
        }
    }
    r
}

fn log(outcome: &Outcome) {
    for s in &outcome.settings {
        let after = s.after.as_ref().map_or("-".to_string(), |v| v.to_string());
        info!(
            caller_uid = "hlctl (persisted settings)",
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

/// The entry's settings but those hlctl stopped re-applying.
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

/// What a start runs first (hlctld's, `hlctl reapply`'s): restore every
/// journal of a tune or try whose process is gone — a crash left its
/// changes unconfirmed, so they are undone.
pub(crate) fn restore_unfinished(paths: &Paths) -> Vec<Restored> {
    checkpoint::restore_pending(paths, &mut restore_journal(paths))
}

/// Unfinished tunes and tries restored ([`restore_unfinished`]), then
/// every link's persisted settings and every persisted sysctl, once.
pub(crate) fn all(nl: &mut Netlink, paths: &Paths) -> Report {
    let mut report = Report {
        state_file: paths.nic_state_file().display().to_string(),
        sysctl_file: paths.sysctl_file().display().to_string(),
        restored: restore_unfinished(paths),
        ..Default::default()
    };
    report.failed.extend(
        report
            .restored
            .iter()
            .filter(|r| !r.errors.is_empty())
            .map(|r| {
                format!(
                    "{}: restoring {}: {}",
                    r.interface,
                    r.tune_id,
                    r.errors.join("; ")
                )
            }),
    );
    match (State::load(&paths.nic_state_file()), nl.links()) {
        (Ok(state), Ok(links)) => {
            let mut matched = vec![false; state.interfaces.len()];
            for l in &links {
                let Some(i) = state.position(&l.name, l.mac.as_deref()) else {
                    continue;
                };
                matched[i] = true;
                report
                    .links
                    .push(link(nl, &l.name, &state.interfaces[i], "hlctl reapply"));
            }
            report.absent = (state.interfaces.iter().zip(matched))
                .filter(|(_, m)| !m)
                .map(|(e, _)| e.name.clone())
                .collect();
        }
        (Err(e), _) => report.failed.push(format!("{}: {e}", report.state_file)),
        (_, Err(e)) => report.failed.push(format!("cannot list links: {e}")),
    }
    report.sysctls = sysctls(paths);
    let links = report.links.iter().filter_map(LinkResult::failure);
    let keys = report
        .sysctls
        .iter()
        .filter_map(|s| Some(format!("{}: {}", s.key, s.error.as_ref()?)));
    report.failed.extend(links.chain(keys).collect::<Vec<_>>());
    report
}

/// Each assignment of `90-hlctl.conf` on its own: one key that cannot be
/// written (a global key in a container) does not hold the others back.
pub(crate) fn sysctls(paths: &Paths) -> Vec<SysctlResult> {
    let text = match std::fs::read_to_string(paths.sysctl_file()) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Vec::new(),
        Err(e) => {
            return vec![SysctlResult {
                key: paths.sysctl_file().display().to_string(),
                value: String::new(),
                before: None,
                after: None,
                error: Some(e.to_string()),
            }];
        }
    };
    crate::sysctl::persist::parse_assignments(&text)
        .into_iter()
        .map(|(key, value)| sysctl(paths, key, value))
        .collect()
}

fn sysctl(paths: &Paths, key: String, value: String) -> SysctlResult {
    let one = [(key.clone(), value.clone())];
    let mut r = SysctlResult {
        key,
        value,
        before: None,
        after: None,
        error: None,
    };
    match crate::sysctl::plan(paths, &one) {
        Ok(changes) => {
            r.before = changes.first().map(|c| c.before.clone());
            let out = crate::sysctl::apply(paths, changes);
            r.after = out.changes.first().and_then(|c| c.after.clone());
            r.error = out.failed;
        }
        Err(e) => r.error = Some(e.to_string()),
    }
    info!(action = "reapply", key = %r.key, "persisted sysctl {} = {}: {} -> {}{}", r.key, r.value,
        r.before.as_deref().unwrap_or("?"), r.after.as_deref().unwrap_or("?"),
        r.error.as_deref().map(|e| format!(" (failed: {e})")).unwrap_or_default());
    r
}

/// Follow link notifications (rtnetlink, this network namespace) and
/// re-apply the entry of each link that appears; `seen` gets each result.
/// Runs until netlink fails.
pub(crate) fn watch(
    nl: &mut Netlink,
    paths: &Paths,
    mut seen: impl FnMut(LinkResult),
) -> Result<(), NicError> {
    let mut receivers = crate::nic::netlink::monitor::subscribe().map_err(monitor_err)?;
    let mut rx = receivers.swap_remove(0);
    let list = |nl: &mut Netlink| -> Result<BTreeSet<u32>, NicError> {
        Ok(nl
            .links()
            .map_err(NicError::Connect)?
            .iter()
            .map(|l| l.ifindex)
            .collect())
    };
    let mut known = list(nl)?;
    info!(
        "watching for links that appear (persisted settings: {})",
        paths.nic_state_file().display()
    );
    loop {
        let events = rx.wait().map_err(monitor_err)?;
        let mut appeared = BTreeSet::new();
        for ev in events {
            match ev {
                Event::Link {
                    ifindex,
                    removed: true,
                    ..
                } => {
                    known.remove(&ifindex);
                }
                Event::Link { ifindex, .. } if known.insert(ifindex) => {
                    appeared.insert(ifindex);
                }
                Event::Overrun => {
                    let now = list(nl)?;
                    appeared.extend(now.difference(&known).copied());
                    known = now;
                }
                _ => {}
            }
        }
        for ifindex in appeared {
            let Some(l) = nl
                .links()
                .map_err(NicError::Connect)?
                .into_iter()
                .find(|l| l.ifindex == ifindex)
            else {
                continue;
            };
            match entry_for(paths, &l.name, l.mac.as_deref()) {
                Ok(Some(entry)) => seen(link(nl, &l.name, &entry, "the link appeared")),
                Ok(None) => {}
                Err(e) => warn!("cannot read persisted settings: {e}"),
            }
        }
    }
}

fn monitor_err(e: std::io::Error) -> NicError {
    NicError::Connect(crate::nic::netlink::NetlinkError {
        op: "link monitor",
        ifname: None,
        errno: e.raw_os_error().unwrap_or(libc::EIO),
        extack: None,
    })
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
