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
use crate::nic::owner::placed::Placed;
use crate::nic::owner::write as owner_write;
use crate::nic::owner::{Roots, ifindex_of};
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
    /// Per interface, the keys hlctl had written into network managers'
    /// files before the tune (the entry's `placed`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) placed: BTreeMap<String, Vec<Placed>>,
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
    crate::fsutil::write_state(crate::fsutil::Role::LastTune, &p, text.as_bytes(), 0o600)
        .map_err(|e| TuneError::io(&p, e))
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
        let roots = Roots::new(paths);
        let mut todo: Vec<(&str, Option<&str>, &ChangeSet)> = Vec::new();
        if !kept.nic.is_empty() {
            todo.push((iface, mac, &kept.nic));
        }
        // Stack members are recorded by name (a bridge's MAC follows its ports).
        todo.extend(members.iter().map(|(m, cs)| (m.as_str(), None, *cs)));
        let devices: Vec<owner_write::Device> = todo
            .iter()
            .map(|(n, _, cs)| (*n, ifindex_of(n), *cs))
            .collect();
        let placed = owner_write::persist_all(&roots, &devices)
            .map_err(|e| TuneError::Persist(e.to_string()))?;
        let p = paths.nic_state_file();
        let recorded = crate::nic::persist::update(&p, |state| {
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
                placed: todo
                    .iter()
                    .map(|(n, m, _)| {
                        let was = state.find(n, *m).map(|e| e.placed.clone());
                        (n.to_string(), was.unwrap_or_default())
                    })
                    .collect(),
            };
            for ((name, m, cs), pl) in todo.iter().zip(&placed) {
                state.record_placed(name, *m, cs, pl);
            }
            before
        });
        if recorded.is_err() {
            owner_write::undo_all(&roots, &devices, &placed);
        }
        files.nic = Some(recorded?);
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
        let roots = Roots::new(paths);
        let mut errors = Vec::new();
        let mut files = Vec::new();
        crate::nic::persist::update(&p, |state| {
            let mut one = |name: &str, mac: Option<&str>, entry: &Option<ChangeSet>| {
                let was = before.placed.get(name).map_or(&[][..], Vec::as_slice);
                match restore_placed(state, &roots, name, mac, was) {
                    Ok(f) => files.extend(f),
                    Err(e) => errors.push(e.to_string()),
                }
                restore_entry(state, name, mac, entry);
            };
            one(&last.interface, last.mac.as_deref(), &before.entry);
            for (m, entry) in &before.stack {
                one(m, None, entry);
            }
        })?;
        done.push(p.display().to_string());
        files.sort();
        files.dedup();
        done.extend(files);
        if !errors.is_empty() {
            return Err(TuneError::Persist(errors.join("; ")));
        }
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

/// Put the network managers' files of one interface back to the keys
/// recorded before the tune (`was`), and the entry's list with them.
/// Returns the files touched.
fn restore_placed(
    state: &mut State,
    roots: &Roots,
    name: &str,
    mac: Option<&str>,
    was: &[Placed],
) -> Result<Vec<String>, crate::nic::owner::error::OwnerError> {
    let idx = state.position(name, mac);
    let Some(i) = idx else {
        return Ok(Vec::new());
    };
    let now = std::mem::replace(&mut state.interfaces[i].placed, was.to_vec());
    owner_write::restore(roots, name, &now, was)?;
    Ok(now.iter().map(|p| p.file.clone()).collect())
}

/// Put one interface's NIC state entry back as it was (`None`: no entry).
fn restore_entry(state: &mut State, name: &str, mac: Option<&str>, before: &Option<ChangeSet>) {
    let idx = state.position(name, mac);
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

    /// A tune's MTU on a Proxmox bridge and its port goes into their
    /// stanzas (ifupdown2 would reset it otherwise); rollback's unpersist
    /// puts `/etc/network/interfaces` back byte for byte.
    #[test]
    fn a_tuned_mtu_goes_into_the_stanzas_and_unpersist_restores_them() {
        const PVE: &str = "auto lo\niface lo inet loopback\n\niface hlt-nope0 inet manual\n\nauto hlt-nobr0\niface hlt-nobr0 inet static\n\taddress 192.0.2.10/24\n\tbridge-ports hlt-nope0\n\tbridge-stp off\n\tbridge-fd 0\n";
        let d = tempfile::tempdir().unwrap();
        let paths = Paths::under(d.path());
        std::fs::create_dir_all(d.path().join("etc/network")).unwrap();
        std::fs::create_dir_all(d.path().join("usr/share/ifupdown2")).unwrap();
        let file = d.path().join("etc/network/interfaces");
        std::fs::write(&file, PVE).unwrap();
        let mut kept = Change::default();
        kept.nic.mtu = Some(9000);
        kept.stack.insert(
            "hlt-nope0".into(),
            ChangeSet {
                mtu: Some(9000),
                ..Default::default()
            },
        );
        let (_, files) = persist(&paths, "hlt-nobr0", None, &kept).unwrap();
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(
            text.contains("iface hlt-nope0 inet manual\n\tmtu 9000\n"),
            "{text}"
        );
        assert!(text.ends_with("\tbridge-fd 0\n\tmtu 9000\n"), "{text}");
        let state = State::load(&paths.nic_state_file()).unwrap();
        assert_eq!(state.find("hlt-nobr0", None).unwrap().placed.len(), 1);
        let last = LastTune {
            tune_id: "t".into(),
            ts: 0,
            interface: "hlt-nobr0".into(),
            mac: None,
            original: Change::default(),
            kept,
            sysctl_file_before: None,
            nic_state_before: files.nic,
        };
        let last: LastTune = serde_json::from_str(&serde_json::to_string(&last).unwrap()).unwrap();
        let done = unpersist(&paths, &last).unwrap();
        assert!(
            done.contains(&"/etc/network/interfaces".to_string()),
            "{done:?}"
        );
        assert_eq!(std::fs::read_to_string(&file).unwrap(), PVE);
        assert!(
            State::load(&paths.nic_state_file())
                .unwrap()
                .interfaces
                .is_empty()
        );
    }
}
