//! ethtool's short feature names (`ethtool -K eth0 gro off`) and the kernel
//! features each one stands for. A short name changes every one of its kernel
//! features that the device has and does not hold fixed, as ethtool does.

/// (short name, kernel feature names).
pub(crate) const FEATURE_ALIASES: &[(&str, &[&str])] = &[
    ("rx", &["rx-checksum"]),
    (
        "tx",
        &[
            "tx-checksum-ipv4",
            "tx-checksum-ip-generic",
            "tx-checksum-ipv6",
            "tx-checksum-fcoe-crc",
            "tx-checksum-sctp",
        ],
    ),
    ("sg", &["tx-scatter-gather", "tx-scatter-gather-fraglist"]),
    (
        "tso",
        &[
            "tx-tcp-segmentation",
            "tx-tcp-ecn-segmentation",
            "tx-tcp-mangleid-segmentation",
            "tx-tcp6-segmentation",
        ],
    ),
    ("ufo", &["tx-udp-fragmentation"]),
    ("gso", &["tx-generic-segmentation"]),
    ("gro", &["rx-gro"]),
    ("lro", &["rx-lro"]),
    ("rxvlan", &["rx-vlan-hw-parse"]),
    ("txvlan", &["tx-vlan-hw-insert"]),
    ("ntuple", &["rx-ntuple-filter"]),
    ("rxhash", &["rx-hashing"]),
];

/// The kernel features a short name stands for, or `None` if it is not a short name.
pub(crate) fn expand(short: &str) -> Option<&'static [&'static str]> {
    FEATURE_ALIASES
        .iter()
        .find(|(s, _)| *s == short)
        .map(|(_, k)| *k)
}

/// All short names, for error messages.
pub(crate) fn short_names() -> Vec<&'static str> {
    FEATURE_ALIASES.iter().map(|(s, _)| *s).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_names_expand_to_kernel_names() {
        assert_eq!(expand("gro"), Some(&["rx-gro"][..]));
        assert_eq!(expand("tso").unwrap().len(), 4);
        assert_eq!(expand("rx-gro"), None);
        assert!(short_names().contains(&"ntuple"));
    }
}
