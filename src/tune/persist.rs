//! Persisting what a tune kept (sysctl.d and the NIC state file), and the
//! record of the last tune per interface that `hlctl rollback` undoes: live
//! values and the persisted files as they were before the tune.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::TuneError;
use super::change::Change;
use super::checkpoint;
use super::outcome::Persisted;
use crate::nic::model::ChangeSet;
use crate::nic::persist::State;
use crate::paths::Paths;
use crate::sysctl::persist as sysctl_persist;

/// The NIC state file's entry for the interface before the tune.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct NicBefore {
    /// None: there was no entry.
    pub(crate) entry: Option<ChangeSet>,
    /// The entries of the other devices of its bridge/bond stack the tune changed.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) stack: BTreeMap<String, Option<ChangeSet>>,
}

/// What `hlctl rollback` needs to undo a finished tune.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct LastTune {
    pub(crate) tune_id: String,
    pub(crate) ts: i64,
    pub(crate) interface: String,
    pub(crate) mac: Option<String>,
    /// Live values before the tune, for every kept setting.
    pub(crate) original: Change,
    pub(crate) kept: Change,
    /// 90-hlctl.conf before: key → its line's value (None: no line).
    pub(crate) sysctl_file_before: Option<BTreeMap<String, Option<String>>>,
    /// The NIC state entry before (None: the NIC state file was not written).
    pub(crate) nic_state_before: Option<NicBefore>,
}

pub(crate) fn last_path(paths: &Paths, iface: &str) -> PathBuf {
    checkpoint::dir(paths).join(format!("last-{iface}.json"))
}

pub(crate) fn load_last(paths: &Paths, iface: &str) -> Result<Option<LastTune>, TuneError> {
    let p = last_path(paths, iface);
    match std::fs::read_to_string(&p) {
        Ok(t) => serde_json::from_str(&t)
            .map(Some)
            .map_err(|e| TuneError::Journal(format!("{}: {e}", p.display()))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(TuneError::io(&p, e)),
    }
}

pub(crate) fn save_last(paths: &Paths, last: &LastTune) -> Result<(), TuneError> {
    let p = last_path(paths, &last.interface);
    let text = serde_json::to_string_pretty(last).unwrap_or_default() + "\n";
    crate::fsutil::write_atomic(&p, text.as_bytes(), 0o600).map_err(|e| TuneError::io(&p, e))
}

/// Write the kept changes to sysctl.d and the NIC state file; returns where,
/// and the files' previous values for [`LastTune`].
pub(crate) fn persist(
    paths: &Paths,
    iface: &str,
    mac: Option<&str>,
    kept: &Change,
) -> Result<(Persisted, LastTuneFiles), TuneError> {
    let mut files = LastTuneFiles::default();
    let mut out = Persisted {
        sysctl_file: None,
        nic_state_file: None,
    };
    // Each file's "before" is read under the same lock as the write.
    if !kept.sysctl.is_empty() {
        let path = sysctl_persist::update(paths, |text| {
            let before: BTreeMap<String, String> = sysctl_persist::parse_assignments(text)
                .into_iter()
                .collect();
            files.sysctl = Some(
                kept.sysctl
                    .keys()
                    .map(|k| (k.clone(), before.get(k).cloned()))
                    .collect(),
            );
            sysctl_persist::merge(text, &kept.sysctl)
        })
        .map_err(|e| TuneError::Persist(e.to_string()))?;
        out.sysctl_file = Some(path.display().to_string());
    }
    let members: Vec<(&String, &ChangeSet)> =
        kept.stack.iter().filter(|(_, cs)| !cs.is_empty()).collect();
    if !kept.nic.is_empty() || !members.is_empty() {
        let p = paths.nic_state_file();
        files.nic = Some(crate::nic::persist::update(&p, |state| {
            let before = NicBefore {
                entry: state.find(iface, mac).map(|e| e.settings.clone()),
                stack: members
                    .iter()
                    .map(|(m, _)| {
                        (
                            (*m).clone(),
                            state.find(m, None).map(|e| e.settings.clone()),
                        )
                    })
                    .collect(),
            };
            if !kept.nic.is_empty() {
                state.record(iface, mac, &kept.nic);
            }
            // Stack members are recorded by name (a bridge's MAC follows its ports).
            for (m, cs) in &members {
                state.record(m, None, cs);
            }
            before
        })?);
        out.nic_state_file = Some(p.display().to_string());
    }
    Ok((out, files))
}

/// The persisted files' state before a tune.
#[derive(Clone, Debug, Default)]
pub(crate) struct LastTuneFiles {
    pub(crate) sysctl: Option<BTreeMap<String, Option<String>>>,
    pub(crate) nic: Option<NicBefore>,
}

/// Put the persisted files back as they were before the tune.
pub(crate) fn unpersist(paths: &Paths, last: &LastTune) -> Result<Vec<String>, TuneError> {
    let mut done = Vec::new();
    if let Some(before) = &last.sysctl_file_before {
        let path = sysctl_persist::update(paths, |text| restore_sysctl_text(text, before))
            .map_err(|e| TuneError::Persist(e.to_string()))?;
        done.push(path.display().to_string());
    }
    if let Some(before) = &last.nic_state_before {
        let p = paths.nic_state_file();
        crate::nic::persist::update(&p, |state| {
            restore_entry(state, &last.interface, last.mac.as_deref(), &before.entry);
            for (m, entry) in &before.stack {
                restore_entry(state, m, None, entry);
            }
        })?;
        done.push(p.display().to_string());
    }
    Ok(done)
}

/// 90-hlctl.conf's text with the tune's keys as they were before it.
fn restore_sysctl_text(text: &str, before: &BTreeMap<String, Option<String>>) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let key = sysctl_persist::parse_assignments(line)
            .into_iter()
            .next()
            .map(|(k, _)| k);
        match key.as_deref().and_then(|k| before.get(k)) {
            Some(None) => {} // the tune added this line: drop it
            _ => {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    let restore: BTreeMap<String, String> = before
        .iter()
        .filter_map(|(k, v)| v.clone().map(|v| (k.clone(), v)))
        .collect();
    if restore.is_empty() {
        out
    } else {
        sysctl_persist::merge(&out, &restore)
    }
}

/// Put one interface's NIC state entry back as it was (`None`: no entry).
fn restore_entry(state: &mut State, name: &str, mac: Option<&str>, before: &Option<ChangeSet>) {
    let idx = mac
        .and_then(|m| {
            state
                .interfaces
                .iter()
                .position(|e| e.mac.as_deref() == Some(m))
        })
        .or_else(|| state.interfaces.iter().position(|e| e.name == name));
    match (idx, before) {
        (Some(i), None) => {
            state.interfaces.remove(i);
        }
        (Some(i), Some(cs)) => state.interfaces[i].settings = cs.clone(),
        (None, Some(cs)) => state.record(name, mac, cs),
        (None, None) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn persist_then_unpersist_restores_the_files() {
        let d = tempfile::tempdir().unwrap();
        let mut paths = Paths::under(d.path());
        paths.state_dir = d.path().join("state");
        paths.sysctl_dir = d.path().join("sysctl.d");
        std::fs::create_dir_all(&paths.sysctl_dir).unwrap();
        std::fs::write(paths.sysctl_file(), "# mine\nnet.core.rmem_max = 1048576\n").unwrap();
        let mut kept = Change::default();
        kept.sysctl
            .insert("net.core.rmem_max".into(), "67108864".into());
        kept.sysctl
            .insert("net.ipv4.tcp_rmem".into(), "4096 131072 67108864".into());
        kept.nic.txqueuelen = Some(1000);
        let (p, files) = persist(&paths, "eth0", None, &kept).unwrap();
        assert!(p.sysctl_file.is_some() && p.nic_state_file.is_some());
        let text = std::fs::read_to_string(paths.sysctl_file()).unwrap();
        assert!(
            text.contains("net.ipv4.tcp_rmem = 4096 131072 67108864"),
            "{text}"
        );
        let last = LastTune {
            tune_id: "t".into(),
            ts: 0,
            interface: "eth0".into(),
            mac: None,
            original: Change::default(),
            kept,
            sysctl_file_before: files.sysctl,
            nic_state_before: files.nic,
        };
        // Through JSON, as `hlctl rollback` reads it ("no entry before" must survive).
        let last: LastTune = serde_json::from_str(&serde_json::to_string(&last).unwrap()).unwrap();
        unpersist(&paths, &last).unwrap();
        let text = std::fs::read_to_string(paths.sysctl_file()).unwrap();
        assert_eq!(text, "# mine\nnet.core.rmem_max = 1048576\n");
        let state = State::load(&paths.nic_state_file()).unwrap();
        assert!(state.interfaces.is_empty());
    }
}
