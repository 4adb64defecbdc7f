//! Link settings: LINKMODES_GET/SET (`ethtool DEV`, `ethtool -s DEV ...`),
//! plus LINKINFO_GET (port) and LINKSTATE_GET (link detected).

use std::collections::BTreeSet;

use super::super::NetlinkError;
use super::super::attr::{AttrError, AttrTable};
use super::bitset::{self, Bitset};
use super::{Ethtool, header, msg};
use crate::nic::model::{Duplex, LinkModes, LinkSet, port_name};

const A_AUTONEG: u16 = 2;
const A_OURS: u16 = 3;
const A_PEER: u16 = 4;
const A_SPEED: u16 = 5;
const A_DUPLEX: u16 = 6;
const A_LANES: u16 = 9;
const A_LINKINFO_PORT: u16 = 2;
const A_LINKSTATE_LINK: u16 = 2;

const DUPLEX_HALF: u8 = 0;
const DUPLEX_FULL: u8 = 1;

/// Decode a LINKMODES_GET reply (verbose bitsets: modes come with their names).
/// `port` and `detected` are filled from the other two messages.
pub(crate) fn parse(attrs: &[u8]) -> Result<LinkModes, AttrError> {
    let t = AttrTable::parse(attrs)?;
    let ours = t
        .get(A_OURS)
        .map(|a| Bitset::parse(a.payload))
        .transpose()?;
    let peer = t
        .get(A_PEER)
        .map(|a| Bitset::parse(a.payload))
        .transpose()?;
    let speed = t.u32(A_SPEED)?;
    Ok(LinkModes {
        // 0 and all-ones (16 or 32 bit) mean unknown, as in ethtool.
        speed_mbps: speed.filter(|s| ![0, u16::MAX as u32, u32::MAX].contains(s)),
        duplex: match t.u8(A_DUPLEX)? {
            Some(DUPLEX_HALF) => Some(Duplex::Half),
            Some(DUPLEX_FULL) => Some(Duplex::Full),
            _ => None,
        },
        autoneg: t.bool(A_AUTONEG)?.unwrap_or(false),
        port: None,
        lanes: t.u32(A_LANES)?.filter(|&l| l != 0),
        supported_modes: ours
            .as_ref()
            .map(|o| o.mask_names(None))
            .unwrap_or_default(),
        advertised_modes: ours.as_ref().map(|o| o.set_names(None)).unwrap_or_default(),
        partner_modes: peer.map(|p| p.set_names(None)).unwrap_or_default(),
        capabilities: Vec::new(),
        detected: None,
    })
}

pub(crate) fn parse_port(attrs: &[u8]) -> Result<Option<String>, AttrError> {
    Ok(AttrTable::parse(attrs)?.u8(A_LINKINFO_PORT)?.map(port_name))
}

pub(crate) fn parse_detected(attrs: &[u8]) -> Result<Option<bool>, AttrError> {
    AttrTable::parse(attrs)?.bool(A_LINKSTATE_LINK)
}

/// LINKMODES_SET, genetlink header onward: speed, duplex, autoneg, then the
/// advertised modes as `(name, on)` pairs (ethtool's `advertise MODE on|off ...`).
pub(crate) fn encode_set(
    ifname: &str,
    speed: Option<u32>,
    duplex: Option<Duplex>,
    autoneg: Option<bool>,
    advertise: &[(&str, bool)],
) -> Result<Vec<u8>, AttrError> {
    let mut b = header::request(msg::LINKMODES_SET, ifname, 0);
    if let Some(s) = speed {
        b.put_u32(A_SPEED, s);
    }
    if let Some(d) = duplex {
        b.put_u8(
            A_DUPLEX,
            match d {
                Duplex::Half => DUPLEX_HALF,
                Duplex::Full => DUPLEX_FULL,
            },
        );
    }
    if let Some(a) = autoneg {
        b.put_bool(A_AUTONEG, a);
    }
    if !advertise.is_empty() {
        bitset::put_named(&mut b, A_OURS, advertise);
    }
    b.finish()
}

/// `(name, on)` pairs that make the advertised speeds exactly `wanted`: each
/// wanted mode on, every other supported or currently advertised speed mode
/// off. Capability bits (`Autoneg`, `TP`, `Pause`, `Asym_Pause`) are left alone.
pub(crate) fn advertise_pairs<'a>(
    wanted: &'a [String],
    current: &'a LinkModes,
) -> Vec<(&'a str, bool)> {
    let want: BTreeSet<&str> = wanted.iter().map(String::as_str).collect();
    let mut seen = BTreeSet::new();
    let mut pairs: Vec<(&str, bool)> = Vec::new();
    for m in wanted {
        if seen.insert(m.as_str()) {
            pairs.push((m, true));
        }
    }
    for m in current
        .supported_modes
        .iter()
        .chain(&current.advertised_modes)
    {
        let is_speed = m
            .split_once("base")
            .is_some_and(|(n, _)| n.parse::<u32>().is_ok());
        if is_speed && !want.contains(m.as_str()) && seen.insert(m.as_str()) {
            pairs.push((m, false));
        }
    }
    pairs
}

pub(crate) fn get(e: &mut Ethtool, ifname: &str) -> Result<Option<LinkModes>, NetlinkError> {
    let Some(mut modes) = e.get(msg::LINKMODES_GET, "LINKMODES_GET", ifname, 0, parse)? else {
        return Ok(None);
    };
    modes.port = e
        .get(msg::LINKINFO_GET, "LINKINFO_GET", ifname, 0, parse_port)?
        .flatten();
    modes.detected = e
        .get(
            msg::LINKSTATE_GET,
            "LINKSTATE_GET",
            ifname,
            0,
            parse_detected,
        )?
        .flatten();
    Ok(Some(modes))
}

pub(crate) fn set(e: &mut Ethtool, ifname: &str, set: &LinkSet) -> Result<(), NetlinkError> {
    if *set == LinkSet::default() {
        return Ok(());
    }
    let current;
    let pairs = match &set.advertise {
        Some(wanted) => {
            current = e
                .get(msg::LINKMODES_GET, "LINKMODES_GET", ifname, 0, parse)?
                .unwrap_or_default();
            advertise_pairs(wanted, &current)
        }
        None => Vec::new(),
    };
    let req = encode_set(ifname, set.speed_mbps, set.duplex, set.autoneg, &pairs);
    e.set("LINKMODES_SET", ifname, req).map(drop)
}

#[cfg(test)]
mod tests {
    use super::super::super::attr::Builder;
    use super::*;
    use crate::nic::netlink::fixtures::{assert_matches_ethtool, parse_request};

    #[test]
    fn linkmodes_set_equals_ethtool() {
        let forced = encode_set("vcap0", Some(100), Some(Duplex::Full), Some(false), &[]).unwrap();
        assert_matches_ethtool("linkmodes_set", &forced);
        let tap = encode_set("tcap0", Some(1000), Some(Duplex::Half), None, &[]).unwrap();
        assert_matches_ethtool("linkmodes_set_tap", &tap);
        let adv = encode_set(
            "tcap0",
            None,
            None,
            None,
            &[("1000baseT/Full", true), ("100baseT/Full", false)],
        )
        .unwrap();
        assert_matches_ethtool("linkmodes_set_advertise", &adv);
    }

    #[test]
    fn get_requests_equal_ethtools() {
        // Plain `ethtool DEV` sends LINKMODES_GET, LINKINFO_GET, ..., LINKSTATE_GET without flags.
        for (fixture, cmd) in [
            ("linkmodes_get", msg::LINKMODES_GET),
            ("linkinfo_get", msg::LINKINFO_GET),
            ("linkstate_get", msg::LINKSTATE_GET),
        ] {
            assert_matches_ethtool(fixture, &header::request(cmd, "vcap0", 0).finish().unwrap());
        }
    }

    #[test]
    fn verbose_reply_decodes_modes_by_name() {
        let mut b = Builder::new();
        b.put_u8(A_AUTONEG, 1);
        b.nested(A_OURS, |b| {
            b.put_u32(bitset::A_BITSET_SIZE, 100);
            b.nested(bitset::A_BITSET_BITS, |b| {
                for (i, n, v) in [(4, "1000baseT/Half", false), (5, "1000baseT/Full", true)] {
                    b.nested(bitset::A_BITSET_BITS_BIT, |b| {
                        b.put_u32(bitset::A_BITSET_BIT_INDEX, i)
                            .put_str(bitset::A_BITSET_BIT_NAME, n);
                        if v {
                            b.put_flag(bitset::A_BITSET_BIT_VALUE);
                        }
                    });
                }
            });
        });
        b.nested(A_PEER, |b| {
            b.put_flag(bitset::A_BITSET_NOMASK)
                .put_u32(bitset::A_BITSET_SIZE, 100);
            b.nested(bitset::A_BITSET_BITS, |b| {
                b.nested(bitset::A_BITSET_BITS_BIT, |b| {
                    b.put_u32(bitset::A_BITSET_BIT_INDEX, 5)
                        .put_str(bitset::A_BITSET_BIT_NAME, "1000baseT/Full");
                });
            });
        });
        b.put_u32(A_SPEED, 1000)
            .put_u8(A_DUPLEX, 1)
            .put_u32(A_LANES, 1);
        let m = parse(&b.finish().unwrap()).unwrap();
        assert!(m.autoneg);
        assert_eq!(m.speed_mbps, Some(1000));
        assert_eq!(m.duplex, Some(Duplex::Full));
        assert_eq!(m.lanes, Some(1));
        assert_eq!(m.supported_modes, vec!["1000baseT/Half", "1000baseT/Full"]);
        assert_eq!(m.advertised_modes, vec!["1000baseT/Full"]);
        assert_eq!(m.partner_modes, vec!["1000baseT/Full"]);
    }

    #[test]
    fn unknown_speed_and_duplex() {
        let mut b = Builder::new();
        b.put_u32(A_SPEED, u32::MAX).put_u8(A_DUPLEX, 0xff);
        let m = parse(&b.finish().unwrap()).unwrap();
        assert_eq!((m.speed_mbps, m.duplex), (None, None));
    }

    #[test]
    fn advertise_exactly_the_wanted_modes() {
        let cur = LinkModes {
            supported_modes: vec![
                "10baseT/Full".into(),
                "100baseT/Full".into(),
                "1000baseT/Full".into(),
            ],
            advertised_modes: vec!["100baseT/Full".into(), "1000baseT/Full".into()],
            ..Default::default()
        };
        let wanted = vec!["1000baseT/Full".to_string()];
        assert_eq!(
            advertise_pairs(&wanted, &cur),
            vec![
                ("1000baseT/Full", true),
                ("10baseT/Full", false),
                ("100baseT/Full", false)
            ]
        );
        let req = parse_request(
            &encode_set("eth0", None, None, None, &advertise_pairs(&wanted, &cur)).unwrap(),
        );
        let ours =
            Bitset::parse(AttrTable::parse(&req).unwrap().get(A_OURS).unwrap().payload).unwrap();
        assert_eq!(ours.set_names(None), vec!["1000baseT/Full"]);
    }
}
