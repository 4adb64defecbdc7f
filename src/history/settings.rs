//! A flat snapshot of the settings that shape performance, stored with every
//! result, so `compare` can say what changed ("eth0 link speed 1000 → 100").

use std::collections::BTreeMap;

use crate::nic::model::Interface;
use crate::nic::registry;

/// Features worth remembering (the offloads the doctor cares about).
pub(crate) const FEATURES: &[&str] = &[
    "rx-gro",
    "rx-lro",
    "tx-generic-segmentation",
    "tx-tcp-segmentation",
    "tx-scatter-gather",
    "rx-checksum",
    "tx-checksum-ip-generic",
    "tx-checksum-ipv4",
];

/// Setting name → value.
pub(crate) type Snapshot = BTreeMap<String, String>;

/// Every setting of the registry the interface reports (as `show` names it:
/// `eth0 ring rx`), and the offloads in [`FEATURES`].
pub(crate) fn interface(i: &Interface, into: &mut Snapshot) {
    let n = &i.name;
    for setting in registry::SETTINGS {
        let v = (setting.read)(i);
        if !v.is_null() {
            into.insert(format!("{n} {}", setting.name()), registry::value_text(&v));
        }
    }
    let mut put = |k: &str, v: String| {
        into.insert(format!("{n} {k}"), v);
    };
    if let Some(f) = &i.features {
        for k in FEATURES {
            if let Some(x) = f.get(*k) {
                put(
                    &format!("{} {k}", registry::FEATURE),
                    if x.active { "on" } else { "off" }.into(),
                );
            }
        }
    }
}

/// Interfaces plus sysctls in one snapshot.
pub(crate) fn snapshot(ifaces: &[Interface], sysctls: &BTreeMap<String, String>) -> Snapshot {
    let mut s = Snapshot::new();
    for i in ifaces {
        interface(i, &mut s);
    }
    for (k, v) in sysctls {
        if k != "net.ipv4.tcp_available_congestion_control" {
            s.insert(k.clone(), v.clone());
        }
    }
    s
}

/// One setting that differs between two snapshots.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Changed {
    pub(crate) setting: String,
    pub(crate) before: Option<String>,
    pub(crate) now: Option<String>,
}

impl std::fmt::Display for Changed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let v = |x: &Option<String>| x.clone().unwrap_or_else(|| "(absent)".into());
        write!(f, "{} {} → {}", self.setting, v(&self.before), v(&self.now))
    }
}

/// Settings present in either snapshot whose values differ. A setting only
/// one side recorded counts only when both recorded that interface.
pub(crate) fn diff(before: &Snapshot, now: &Snapshot) -> Vec<Changed> {
    let prefix = |k: &str| k.split(' ').next().unwrap_or("").to_string();
    let has_prefix =
        |s: &Snapshot, p: &str| s.keys().any(|k| k.starts_with(&format!("{p} ")) || k == p);
    let mut keys: Vec<&String> = before.keys().chain(now.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter(|k| {
            let p = prefix(k);
            has_prefix(before, &p) && has_prefix(now, &p) && before.get(*k) != now.get(*k)
        })
        .map(|k| Changed {
            setting: k.clone(),
            before: before.get(k).cloned(),
            now: now.get(k).cloned(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diff_names_what_changed() {
        let mut a = Snapshot::new();
        a.insert("eth0 link speed".into(), "1000".into());
        a.insert("eth0 mtu".into(), "1500".into());
        a.insert("net.ipv4.tcp_rmem".into(), "4096 131072 6291456".into());
        let mut b = a.clone();
        b.insert("eth0 link speed".into(), "100".into());
        b.insert("eth1 mtu".into(), "9000".into()); // an interface the baseline never saw
        let d = diff(&a, &b);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].to_string(), "eth0 link speed 1000 → 100");
    }
}
