//! Offload features: FEATURES_GET (`ethtool -k`) and FEATURES_SET (`ethtool -K`).
//!
//! The reply holds four bitsets over the kernel's feature names
//! (ETH_SS_FEATURES): `hw` (changeable), `wanted` (requested), `active`,
//! `nochange`. Like ethtool, a feature is `[fixed]` when it is not in `hw`
//! or is in `nochange`.

use std::collections::BTreeMap;

use super::super::NetlinkError;
use super::super::attr::{AttrError, AttrTable};
use super::bitset::{self, Bitset};
use super::{Ethtool, header, msg};
use crate::nic::model::Feature;

const A_HW: u16 = 2;
const A_WANTED: u16 = 3;
const A_ACTIVE: u16 = 4;
const A_NOCHANGE: u16 = 5;

/// The four bitsets of a FEATURES_GET reply.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Raw {
    pub(crate) hw: Bitset,
    pub(crate) wanted: Bitset,
    pub(crate) active: Bitset,
    pub(crate) nochange: Bitset,
}

pub(crate) fn parse_raw(attrs: &[u8]) -> Result<Raw, AttrError> {
    let t = AttrTable::parse(attrs)?;
    let set = |k| Bitset::parse(t.require(k)?.payload);
    Ok(Raw {
        hw: set(A_HW)?,
        wanted: set(A_WANTED)?,
        active: set(A_ACTIVE)?,
        nochange: set(A_NOCHANGE)?,
    })
}

/// Every named feature (by its index in `names`) with active, requested, fixed.
pub(crate) fn to_features(raw: &Raw, names: &[String]) -> BTreeMap<String, Feature> {
    let (hw, wanted, active, nochange) = (
        raw.hw.set_indices(),
        raw.wanted.set_indices(),
        raw.active.set_indices(),
        raw.nochange.set_indices(),
    );
    names
        .iter()
        .enumerate()
        .filter(|(_, n)| !n.is_empty())
        .map(|(i, n)| {
            let i = i as u32;
            let f = Feature {
                active: active.contains(&i),
                requested: wanted.contains(&i),
                fixed: !hw.contains(&i) || nochange.contains(&i),
            };
            (n.clone(), f)
        })
        .collect()
}

/// FEATURES_SET, genetlink header onward: a WANTED bitset of the named
/// features, in name order. Like ethtool, it asks for compact bitsets in the reply.
pub(crate) fn encode_set(
    ifname: &str,
    wanted: &BTreeMap<String, bool>,
) -> Result<Vec<u8>, AttrError> {
    let mut b = header::request(msg::FEATURES_SET, ifname, header::FLAG_COMPACT_BITSETS);
    let bits: Vec<(&str, bool)> = wanted.iter().map(|(n, v)| (n.as_str(), *v)).collect();
    bitset::put_named(&mut b, A_WANTED, &bits);
    b.finish()
}

pub(crate) fn get(
    e: &mut Ethtool,
    ifname: &str,
) -> Result<Option<BTreeMap<String, Feature>>, NetlinkError> {
    let Some(raw) = e.get(
        msg::FEATURES_GET,
        "FEATURES_GET",
        ifname,
        header::FLAG_COMPACT_BITSETS,
        parse_raw,
    )?
    else {
        return Ok(None);
    };
    let names = e.feature_names()?;
    Ok(Some(to_features(&raw, &names)))
}

/// Request features on/off by kernel name. The kernel silently keeps what the
/// driver cannot change; read back to see what took effect.
pub(crate) fn set(
    e: &mut Ethtool,
    ifname: &str,
    wanted: &BTreeMap<String, bool>,
) -> Result<(), NetlinkError> {
    if wanted.is_empty() {
        return Ok(());
    }
    e.set("FEATURES_SET", ifname, encode_set(ifname, wanted))
        .map(drop)
}

#[cfg(test)]
mod tests {
    use super::super::super::attr::Builder;
    use super::super::bitset::put_compact;
    use super::*;
    use crate::nic::netlink::fixtures::{assert_matches_ethtool, parse_request};

    #[test]
    fn features_set_equals_ethtool() {
        // `ethtool -K DEV gro off gso on`: ethtool maps gro → rx-gro, gso → tx-generic-segmentation.
        let wanted = BTreeMap::from([
            ("rx-gro".to_string(), false),
            ("tx-generic-segmentation".to_string(), true),
        ]);
        assert_matches_ethtool("features_set", &encode_set("vcap0", &wanted).unwrap());
    }

    #[test]
    fn features_get_equals_ethtool() {
        let req = header::request(msg::FEATURES_GET, "vcap0", header::FLAG_COMPACT_BITSETS)
            .finish()
            .unwrap();
        assert_matches_ethtool("features_get", &req);
        let strset =
            super::super::strset::encode_get_global(super::super::strset::ETH_SS_FEATURES).unwrap();
        assert_matches_ethtool("features_strset_get", &strset);
    }

    #[test]
    fn set_request_decodes_as_named_bits() {
        let wanted = BTreeMap::from([
            ("rx-gro".to_string(), true),
            ("tx-tcp-segmentation".to_string(), false),
        ]);
        let req = parse_request(&encode_set("eth0", &wanted).unwrap());
        let t = AttrTable::parse(&req).unwrap();
        let set = Bitset::parse(t.get(A_WANTED).unwrap().payload).unwrap();
        assert_eq!(set.set_names(None), vec!["rx-gro"]);
        assert_eq!(set.mask_names(None), vec!["rx-gro", "tx-tcp-segmentation"]);
    }

    #[test]
    fn compact_reply_to_features() {
        let names: Vec<String> = ["tx-scatter-gather", "", "rx-gro", "rx-lro", "highdma"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let mut b = Builder::new();
        // hw: 0, 2, 4; wanted: 0, 2; active: 0, 4; nochange: 4.
        put_compact(&mut b, A_HW, 5, &[0b10101], None);
        put_compact(&mut b, A_WANTED, 5, &[0b00101], None);
        put_compact(&mut b, A_ACTIVE, 5, &[0b10001], None);
        put_compact(&mut b, A_NOCHANGE, 5, &[0b10000], None);
        let f = to_features(&parse_raw(&b.finish().unwrap()).unwrap(), &names);
        assert_eq!(f.len(), 4);
        let sg = f["tx-scatter-gather"];
        assert!(sg.active && sg.requested && !sg.fixed);
        let gro = f["rx-gro"];
        assert!(!gro.active && gro.requested && !gro.fixed);
        assert!(f["rx-lro"].fixed && !f["rx-lro"].active);
        assert!(f["highdma"].fixed && f["highdma"].active);
    }

    #[test]
    fn reply_missing_a_bitset_is_an_error() {
        let mut b = Builder::new();
        put_compact(&mut b, A_HW, 5, &[1], None);
        assert!(parse_raw(&b.finish().unwrap()).is_err());
    }
}
