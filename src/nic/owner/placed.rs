//! What hlctl wrote into a network manager's file: one [`Placed`] per line
//! or key, recorded with the persisted entry in hlctl's own file so that
//! rollback can put the manager's file back as it was.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::Manager;
use crate::nic::model::ChangeSet;
use crate::nic::registry;

/// One line or key hlctl wrote into a manager's file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Placed {
    pub(crate) manager: Manager,
    /// The file written (as the live system names it).
    pub(crate) file: String,
    /// The stanza (`vmbr0`) or section (`Link`) the key is in.
    pub(crate) section: String,
    pub(crate) key: String,
    pub(crate) value: String,
    /// The key's value before hlctl first wrote it (`None`: hlctl added the key).
    pub(crate) before: Option<String>,
    /// The settings the key carries (`mtu`, `feature rx-gro`).
    pub(crate) settings: Vec<String>,
}

impl Placed {
    pub(crate) fn same_key(&self, other: &Placed) -> bool {
        (self.manager, &self.file, &self.section, &self.key)
            == (other.manager, &other.file, &other.section, &other.key)
    }

    /// `mtu 9000 in iface vmbr0 of /etc/network/interfaces`.
    pub(crate) fn describe(&self) -> String {
        format!(
            "{} {} in {} of {}",
            self.key, self.value, self.section, self.file
        )
    }
}

/// The settings a change set requests, as (registry name, value), and its
/// features as (`feature NAME`, on/off).
pub(crate) fn requested(cs: &ChangeSet) -> Vec<(String, Value)> {
    let mut out: Vec<(String, Value)> = registry::SETTINGS
        .iter()
        .filter_map(|s| (s.get)(cs).map(|v| (s.name(), v)))
        .collect();
    out.extend(cs.features.iter().map(|(k, on)| {
        let v = if *on { "on" } else { "off" };
        (super::feature(k), Value::from(v))
    }));
    out
}

/// Merge newly placed keys into an entry's list: a key written again keeps
/// the value it had before hlctl first wrote it.
pub(crate) fn merge(list: &mut Vec<Placed>, new: &[Placed]) {
    for n in new {
        match list.iter_mut().find(|p| p.same_key(n)) {
            Some(p) => {
                p.value = n.value.clone();
                p.settings = n.settings.clone();
            }
            None => list.push(n.clone()),
        }
    }
}
