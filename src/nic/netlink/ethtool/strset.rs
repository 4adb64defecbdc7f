//! String sets (STRSET_GET): the kernel's names for feature bits and other
//! indexed things. Only the global sets are needed (feature names).

use super::super::attr::{AttrError, AttrTable};
use super::super::genl;
use super::{VERSION, header, msg};

/// `ETH_SS_FEATURES`: netdev feature names.
pub(crate) const ETH_SS_FEATURES: u32 = 4;
/// `ETH_SS_LINK_MODES`: link mode names (5.6 on).
#[cfg(test)]
const ETH_SS_LINK_MODES: u32 = 9;

const A_STRSET_STRINGSETS: u16 = 2;
const A_STRINGSETS_STRINGSET: u16 = 1;
const A_STRINGSET_ID: u16 = 1;
const A_STRINGSET_COUNT: u16 = 2;
const A_STRINGSET_STRINGS: u16 = 3;
const A_STRINGS_STRING: u16 = 1;
const A_STRING_INDEX: u16 = 1;
const A_STRING_VALUE: u16 = 2;

/// Upper bound on a string set's size we accept (the kernel's own limit is far lower).
const MAX_STRINGS: u32 = 1 << 16;

/// STRSET_GET for one global set (empty device header), as `ethtool -k` sends it.
pub(crate) fn encode_get_global(set_id: u32) -> Result<Vec<u8>, AttrError> {
    let mut b = genl::builder(msg::STRSET_GET, VERSION);
    b.nested(header::A_HEADER, |_| {});
    b.nested(A_STRSET_STRINGSETS, |b| {
        b.nested(A_STRINGSETS_STRINGSET, |b| {
            b.put_u32(A_STRINGSET_ID, set_id);
        });
    });
    b.finish()
}

/// The strings of set `set_id`, by index (missing indices are empty strings).
pub(crate) fn parse(attrs: &[u8], set_id: u32) -> Result<Vec<String>, AttrError> {
    let t = AttrTable::parse(attrs)?;
    let sets = t.require(A_STRSET_STRINGSETS)?;
    for set in sets.nested() {
        let set = AttrTable::parse(set?.payload)?;
        if set.u32(A_STRINGSET_ID)? != Some(set_id) {
            continue;
        }
        let count = set.u32(A_STRINGSET_COUNT)?.unwrap_or(0);
        if count > MAX_STRINGS {
            return Err(AttrError::Invalid(format!("string set of {count} strings")));
        }
        let mut out = vec![String::new(); count as usize];
        if let Some(strings) = set.get(A_STRINGSET_STRINGS) {
            for s in strings.nested() {
                let s = s?;
                if s.kind != A_STRINGS_STRING {
                    continue;
                }
                let st = AttrTable::parse(s.payload)?;
                let idx = st.require(A_STRING_INDEX)?.u32()?;
                let slot = out.get_mut(idx as usize).ok_or_else(|| {
                    AttrError::Invalid(format!("string index {idx} beyond count {count}"))
                })?;
                *slot = st.string(A_STRING_VALUE).unwrap_or_default();
            }
        }
        return Ok(out);
    }
    Err(AttrError::Invalid(format!(
        "string set {set_id} missing from the reply"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nic::netlink::attr::Builder;

    fn reply(count: u32, strings: &[(u32, &str)]) -> Vec<u8> {
        let mut b = Builder::new();
        b.nested(A_STRSET_STRINGSETS, |b| {
            b.nested(A_STRINGSETS_STRINGSET, |b| {
                b.put_u32(A_STRINGSET_ID, ETH_SS_FEATURES)
                    .put_u32(A_STRINGSET_COUNT, count)
                    .nested(A_STRINGSET_STRINGS, |b| {
                        for (i, s) in strings {
                            b.nested(A_STRINGS_STRING, |b| {
                                b.put_u32(A_STRING_INDEX, *i).put_str(A_STRING_VALUE, s);
                            });
                        }
                    });
            });
        });
        b.finish().unwrap()
    }

    #[test]
    fn strings_by_index() {
        let names = parse(
            &reply(3, &[(2, "rx-gro"), (0, "tx-scatter-gather")]),
            ETH_SS_FEATURES,
        )
        .unwrap();
        assert_eq!(names, vec!["tx-scatter-gather", "", "rx-gro"]);
    }

    #[test]
    fn bad_index_or_set_is_an_error() {
        assert!(parse(&reply(1, &[(4, "x")]), ETH_SS_FEATURES).is_err());
        assert!(parse(&reply(1, &[]), 9).is_err());
        assert!(parse(&reply(u32::MAX, &[]), ETH_SS_FEATURES).is_err());
    }

    /// The ioctl path names link mode bits from its own table; this kernel
    /// names them over netlink: the table must spell each bit as it does.
    #[test]
    fn the_ioctl_link_mode_table_agrees_with_this_kernel() {
        let mut e = super::super::Ethtool::open().unwrap();
        let replies = e
            .send(&encode_get_global(ETH_SS_LINK_MODES).unwrap())
            .unwrap();
        let kernel = parse(&replies[0], ETH_SS_LINK_MODES).unwrap();
        let ours = crate::nic::ioctl::link_modes::NAMES;
        assert!(kernel.len() >= ours.len(), "{}", kernel.len());
        for (i, n) in ours.iter().enumerate() {
            assert_eq!(kernel[i], *n, "bit {i}");
        }
    }
}
