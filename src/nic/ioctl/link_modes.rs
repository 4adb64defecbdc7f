//! Link mode names by bit index (`enum ethtool_link_mode_bit_indices`).
//!
//! Kernels name them (ETH_SS_LINK_MODES) only from 5.6 on, the kernels that
//! have ethtool netlink and so never need this path; we carry the names the
//! kernel gives them and use them always, so that forcing the ioctl path on
//! a new kernel exercises what an old one gets. A test of the netlink string
//! sets (netlink/ethtool/strset.rs) holds this table against the running
//! kernel's.

/// Bit 0 onward, as the kernel's ETH_SS_LINK_MODES strings spell them.
pub(crate) const NAMES: &[&str] = &[
    "10baseT/Half",
    "10baseT/Full",
    "100baseT/Half",
    "100baseT/Full",
    "1000baseT/Half",
    "1000baseT/Full",
    "Autoneg",
    "TP",
    "AUI",
    "MII",
    "FIBRE",
    "BNC",
    "10000baseT/Full",
    "Pause",
    "Asym_Pause",
    "2500baseX/Full",
    "Backplane",
    "1000baseKX/Full",
    "10000baseKX4/Full",
    "10000baseKR/Full",
    "10000baseR_FEC",
    "20000baseMLD2/Full",
    "20000baseKR2/Full",
    "40000baseKR4/Full",
    "40000baseCR4/Full",
    "40000baseSR4/Full",
    "40000baseLR4/Full",
    "56000baseKR4/Full",
    "56000baseCR4/Full",
    "56000baseSR4/Full",
    "56000baseLR4/Full",
    "25000baseCR/Full",
    "25000baseKR/Full",
    "25000baseSR/Full",
    "50000baseCR2/Full",
    "50000baseKR2/Full",
    "100000baseKR4/Full",
    "100000baseSR4/Full",
    "100000baseCR4/Full",
    "100000baseLR4_ER4/Full",
    "50000baseSR2/Full",
    "1000baseX/Full",
    "10000baseCR/Full",
    "10000baseSR/Full",
    "10000baseLR/Full",
    "10000baseLRM/Full",
    "10000baseER/Full",
    "2500baseT/Full",
    "5000baseT/Full",
    "None",
    "RS",
    "BASER",
    "50000baseKR/Full",
    "50000baseSR/Full",
    "50000baseCR/Full",
    "50000baseLR_ER_FR/Full",
    "50000baseDR/Full",
    "100000baseKR2/Full",
    "100000baseSR2/Full",
    "100000baseCR2/Full",
    "100000baseLR2_ER2_FR2/Full",
    "100000baseDR2/Full",
    "200000baseKR4/Full",
    "200000baseSR4/Full",
    "200000baseLR4_ER4_FR4/Full",
    "200000baseDR4/Full",
    "200000baseCR4/Full",
    "100baseT1/Full",
    "1000baseT1/Full",
    "400000baseKR8/Full",
    "400000baseSR8/Full",
    "400000baseLR8_ER8_FR8/Full",
    "400000baseDR8/Full",
    "400000baseCR8/Full",
    "LLRS",
    "100000baseKR/Full",
    "100000baseSR/Full",
    "100000baseLR_ER_FR/Full",
    "100000baseCR/Full",
    "100000baseDR/Full",
    "200000baseKR2/Full",
    "200000baseSR2/Full",
    "200000baseLR2_ER2_FR2/Full",
    "200000baseDR2/Full",
    "200000baseCR2/Full",
    "400000baseKR4/Full",
    "400000baseSR4/Full",
    "400000baseLR4_ER4_FR4/Full",
    "400000baseDR4/Full",
    "400000baseCR4/Full",
    "100baseFX/Half",
    "100baseFX/Full",
];

/// The names by bit.
pub(crate) fn names() -> Vec<String> {
    NAMES.iter().map(|s| s.to_string()).collect()
}

/// The name of bit `i`.
pub(crate) fn name(names: &[String], i: usize) -> String {
    names.get(i).cloned().unwrap_or_else(|| format!("bit{i}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_past_the_table_are_named_by_number() {
        let ours = names();
        assert_eq!(name(&ours, 5), "1000baseT/Full");
        assert_eq!(name(&ours, 500), "bit500");
    }
}
