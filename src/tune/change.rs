//! A tuning change: NIC settings of one interface plus sysctls, what a
//! candidate applies, what a checkpoint journals to undo, what is persisted.
//! On a bridge or bond the other devices of the stack carry their own NIC
//! settings in [`Change::stack`]: one change set, applied and restored as one.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::nic::diff;
use crate::nic::model::ChangeSet;

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Change {
    #[serde(default, skip_serializing_if = "ChangeSet::is_empty")]
    pub(crate) nic: ChangeSet,
    /// sysctl key → value (whitespace-normalised).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) sysctl: BTreeMap<String, String>,
    /// NIC settings of the other devices of the interface's bridge/bond
    /// stack (upper or ports), by name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) stack: BTreeMap<String, ChangeSet>,
}

impl Change {
    pub(crate) fn is_empty(&self) -> bool {
        self.nic.is_empty()
            && self.sysctl.is_empty()
            && self.stack.values().all(ChangeSet::is_empty)
    }

    /// The NIC settings of `member` (`iface` itself or a stack member), created empty.
    pub(crate) fn nic_of(&mut self, iface: &str, member: &str) -> &mut ChangeSet {
        if member == iface {
            &mut self.nic
        } else {
            self.stack.entry(member.to_string()).or_default()
        }
    }

    /// Lay `newer` over `self` (newer values win).
    pub(crate) fn merge(&mut self, newer: &Change) {
        self.nic.merge(&newer.nic);
        for (k, v) in &newer.sysctl {
            self.sysctl.insert(k.clone(), v.clone());
        }
        for (m, cs) in &newer.stack {
            self.stack.entry(m.clone()).or_default().merge(cs);
        }
    }

    /// Add the values of `older` for settings `self` does not hold yet: the
    /// journal's "original values" keep the first value seen for each setting.
    pub(crate) fn keep_first(&mut self, older: &Change) {
        let mut nic = older.nic.clone();
        nic.merge(&self.nic);
        self.nic = nic;
        for (k, v) in &older.sysctl {
            self.sysctl.entry(k.clone()).or_insert_with(|| v.clone());
        }
        for (m, old) in &older.stack {
            let mut nic = old.clone();
            if let Some(new) = self.stack.get(m) {
                nic.merge(new);
            }
            self.stack.insert(m.clone(), nic);
        }
    }

    /// Every setting with its value, as `hlctl set`/`sysctl` name them; a
    /// stack member's settings start with its name (`vmbr0: mtu`).
    pub(crate) fn settings(&self) -> Vec<(String, Value)> {
        let mut v = diff::flatten(&self.nic);
        for (m, cs) in &self.stack {
            v.extend(
                diff::flatten(cs)
                    .into_iter()
                    .map(|(k, val)| (format!("{m}: {k}"), val)),
            );
        }
        for (k, val) in &self.sysctl {
            v.push((k.clone(), Value::String(val.clone())));
        }
        v
    }

    /// Only the settings of `self` that `other` also names, with `other`'s values.
    pub(crate) fn restricted_to(&self, names: &Change) -> Change {
        let wanted: Vec<String> = names.settings().into_iter().map(|(k, _)| k).collect();
        let mut out = Change::default();
        for (k, v) in &self.sysctl {
            if names.sysctl.contains_key(k) {
                out.sysctl.insert(k.clone(), v.clone());
            }
        }
        out.nic = restrict_nic(&self.nic, &names.nic, &wanted, "");
        for (m, cs) in &self.stack {
            if let Some(o) = names.stack.get(m) {
                let r = restrict_nic(cs, o, &wanted, &format!("{m}: "));
                if !r.is_empty() {
                    out.stack.insert(m.clone(), r);
                }
            }
        }
        out
    }
}

/// The groups of `n` that `o` names, whole (a link's undo is its speed,
/// duplex and autonegotiation together), every group of the settings
/// table; features one by one, by `wanted` setting names with `prefix`.
fn restrict_nic(n: &ChangeSet, o: &ChangeSet, wanted: &[String], prefix: &str) -> ChangeSet {
    use crate::nic::registry::{SETTINGS, in_group};
    let mut out = ChangeSet::default();
    for s in SETTINGS {
        if in_group(s.group).any(|g| (g.get)(o).is_some())
            && let Some(v) = (s.get)(n)
        {
            (s.put)(&mut out, &v);
        }
    }
    for (k, v) in &n.features {
        if wanted.contains(&format!("{prefix}feature {k}")) {
            out.features.insert(k.clone(), *v);
        }
    }
    out
}

/// Render a JSON value the way tables show it (`on`, `4096`, `4096 131072 6291456`,
/// a list space-separated).
pub(crate) fn show(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "-".into(),
        // Link modes: `1000baseT/Full 100baseT/Full`.
        Value::Array(items) => items.iter().map(show).collect::<Vec<_>>().join(" "),
        other => other.to_string(),
    }
}

/// One thing the tuner tries: a change with why.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Candidate {
    /// `link-renegotiate`, `rings-max`, `tcp-buffers`, `offloads-on`, `flow-control`, `mtu-jumbo`,
    /// `congestion-bbr`, `txqueuelen`, `channels`, `rps`, `coalescing`, `irq-affinity`, `xps`, `backlog`,
    /// `budget`, `try-N`.
    pub(crate) id: String,
    pub(crate) title: String,
    pub(crate) reason: String,
    pub(crate) change: Change,
    /// Keep only if a don't-fragment probe of this size reaches the peer.
    pub(crate) probe_mtu: Option<u32>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn originals_keep_the_first_value() {
        let mut orig = Change::default();
        orig.sysctl
            .insert("net.ipv4.tcp_rmem".into(), "4096 131072 65536".into());
        orig.nic.mtu = Some(1500);
        let mut later = Change::default();
        later
            .sysctl
            .insert("net.ipv4.tcp_rmem".into(), "4096 131072 67108864".into());
        later.nic.mtu = Some(9000);
        later.nic.txqueuelen = Some(100);
        orig.keep_first(&later);
        assert_eq!(orig.sysctl["net.ipv4.tcp_rmem"], "4096 131072 65536");
        assert_eq!(orig.nic.mtu, Some(1500));
        assert_eq!(orig.nic.txqueuelen, Some(100));
    }
}
