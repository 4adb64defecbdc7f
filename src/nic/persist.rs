//! Persisted NIC settings: a JSON state file under the state directory that
//! the daemon re-applies at start and when the interface appears again.
//! Entries are matched by MAC address first (rename-safe), then by name.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::nic::error::NicError;
use crate::nic::model::ChangeSet;
use crate::nic::owner::placed::{Placed, merge as merge_placed};

/// One interface's persisted settings.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Entry {
    pub(crate) name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) mac: Option<String>,
    pub(crate) settings: ChangeSet,
    /// Where the settings also went: the lines and keys hlctl wrote into the
    /// files of the network managers that own them ([`crate::nic::owner`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) placed: Vec<Placed>,
    /// Settings hlctld stopped re-applying because another program set them
    /// back again: setting → what hlctld said (who sets it, where). Kept
    /// across restarts; persisting the setting again clears it.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub(crate) conflicts: std::collections::BTreeMap<String, String>,
}

/// The whole state file.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct State {
    pub(crate) version: u32,
    pub(crate) interfaces: Vec<Entry>,
}

pub(crate) const VERSION: u32 = 1;

impl State {
    /// Read the state file; a missing file is an empty state.
    pub(crate) fn load(path: &Path) -> Result<State, NicError> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(State {
                    version: VERSION,
                    interfaces: Vec::new(),
                });
            }
            Err(source) => {
                return Err(NicError::State {
                    path: path.display().to_string(),
                    source,
                });
            }
        };
        let state: State = serde_json::from_str(&text).map_err(|e| NicError::StateFormat {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
        if state.version != VERSION {
            return Err(NicError::StateFormat {
                path: path.display().to_string(),
                message: format!(
                    "version {} is not supported (this hlctl reads version {VERSION})",
                    state.version
                ),
            });
        }
        Ok(state)
    }

    /// Write the state file atomically.
    pub(crate) fn save(&self, path: &Path) -> Result<(), NicError> {
        let mut text = serde_json::to_string_pretty(self).expect("state serialises");
        text.push('\n');
        crate::fsutil::write_state(
            crate::fsutil::Role::NicSettings,
            path,
            text.as_bytes(),
            0o644,
        )
        .map_err(|source| NicError::State {
            path: path.display().to_string(),
            source,
        })
    }

    /// The entry for an interface: by MAC when both sides know it, else by name.
    pub(crate) fn find(&self, name: &str, mac: Option<&str>) -> Option<&Entry> {
        self.position(name, mac).map(|i| &self.interfaces[i])
    }

    /// Merge `settings` into the entry for this interface (creating it).
    pub(crate) fn record(&mut self, name: &str, mac: Option<&str>, settings: &ChangeSet) {
        self.record_placed(name, mac, settings, &[]);
    }

    /// [`State::record`], with the keys written into managers' files.
    pub(crate) fn record_placed(
        &mut self,
        name: &str,
        mac: Option<&str>,
        settings: &ChangeSet,
        placed: &[Placed],
    ) {
        let idx = self.position(name, mac);
        match idx {
            Some(i) => {
                let e = &mut self.interfaces[i];
                e.name = name.to_string();
                if mac.is_some() {
                    e.mac = mac.map(str::to_string);
                }
                e.settings.merge(settings);
                merge_placed(&mut e.placed, placed);
                let names: Vec<String> = crate::nic::owner::placed::requested(settings)
                    .into_iter()
                    .map(|(n, _)| n)
                    .collect();
                e.conflicts.retain(|k, _| !names.contains(k));
            }
            None => self.interfaces.push(Entry {
                name: name.to_string(),
                mac: mac.map(str::to_string),
                settings: settings.clone(),
                placed: placed.to_vec(),
                conflicts: Default::default(),
            }),
        }
    }

    /// The index of the entry for this interface: by MAC first, then by name.
    pub(crate) fn position(&self, name: &str, mac: Option<&str>) -> Option<usize> {
        mac.and_then(|m| {
            self.interfaces
                .iter()
                .position(|e| e.mac.as_deref() == Some(m))
        })
        .or_else(|| self.interfaces.iter().position(|e| e.name == name))
    }

    /// Note that hlctld stopped re-applying `setting` of this interface's entry.
    pub(crate) fn note_conflict(
        &mut self,
        name: &str,
        mac: Option<&str>,
        setting: &str,
        why: &str,
    ) {
        let idx = self.position(name, mac);
        if let Some(i) = idx {
            self.interfaces[i]
                .conflicts
                .insert(setting.to_string(), why.to_string());
        }
    }
}

/// Load, change and save the state file under its lock, so that concurrent
/// writers (two `Apply --persist` calls, a tune) lose nothing.
pub(crate) fn update<T>(path: &Path, f: impl FnOnce(&mut State) -> T) -> Result<T, NicError> {
    let _lock = crate::fsutil::lock(path).map_err(|source| NicError::State {
        path: path.display().to_string(),
        source,
    })?;
    let mut state = State::load(path)?;
    let out = f(&mut state);
    state.save(path)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nic::model::RingsSet;

    #[test]
    fn record_merges_by_mac_and_follows_renames() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("state.json");
        let a = ChangeSet {
            mtu: Some(9000),
            ..Default::default()
        };
        let b = ChangeSet {
            rings: Some(RingsSet {
                rx: Some(4096),
                ..Default::default()
            }),
            ..Default::default()
        };
        update(&p, |s| {
            s.record_placed("eth0", Some("02:00:00:00:00:01"), &a, &[])
        })
        .unwrap();
        update(&p, |s| {
            s.record_placed("enp3s0", Some("02:00:00:00:00:01"), &b, &[])
        })
        .unwrap();
        let s = State::load(&p).unwrap();
        assert_eq!(s.interfaces.len(), 1);
        let e = s.find("whatever", Some("02:00:00:00:00:01")).unwrap();
        assert_eq!(e.name, "enp3s0");
        assert_eq!(e.settings.mtu, Some(9000));
        assert_eq!(e.settings.rings.as_ref().unwrap().rx, Some(4096));
    }

    #[test]
    fn unknown_versions_and_garbage_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("state.json");
        std::fs::write(&p, r#"{"version": 7, "interfaces": []}"#).unwrap();
        assert!(
            State::load(&p)
                .unwrap_err()
                .to_string()
                .contains("version 7")
        );
        std::fs::write(&p, "not json").unwrap();
        assert!(matches!(State::load(&p), Err(NicError::StateFormat { .. })));
    }
}
