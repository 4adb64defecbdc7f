//! Parsing the real `ethtool`'s text output, for cross-checks in tests.

#![allow(dead_code)]

use std::collections::BTreeMap;

/// ethtool prints the legacy name instead of the kernel name for these
/// one-feature groups.
pub const ETHTOOL_ALIASES: [(&str, &str); 8] = [
    ("rx-checksumming", "rx-checksum"),
    ("generic-segmentation-offload", "tx-generic-segmentation"),
    ("generic-receive-offload", "rx-gro"),
    ("large-receive-offload", "rx-lro"),
    ("rx-vlan-offload", "rx-vlan-hw-parse"),
    ("tx-vlan-offload", "tx-vlan-hw-insert"),
    ("ntuple-filters", "rx-ntuple-filter"),
    ("receive-hashing", "rx-hashing"),
];
/// ethtool's group headings (several kernel features, listed below them).
pub const ETHTOOL_GROUPS: [&str; 4] = [
    "tx-checksumming",
    "scatter-gather",
    "tcp-segmentation-offload",
    "udp-fragmentation-offload",
];

/// `ethtool -k` text as kernel name → (on, fixed, requested-suffix).
pub fn parse_k(text: &str) -> BTreeMap<String, (bool, bool, Option<bool>)> {
    let mut m = BTreeMap::new();
    for line in text.lines().skip(1) {
        let Some((name, rest)) = line.trim().split_once(": ") else {
            continue;
        };
        if ETHTOOL_GROUPS.contains(&name) {
            continue;
        }
        let name = ETHTOOL_ALIASES
            .iter()
            .find(|(l, _)| *l == name)
            .map_or(name, |(_, k)| k);
        let requested = if rest.contains("[requested on]") {
            Some(true)
        } else if rest.contains("[requested off]") {
            Some(false)
        } else {
            None
        };
        m.insert(
            name.to_string(),
            (rest.starts_with("on"), rest.contains("[fixed]"), requested),
        );
    }
    m
}
