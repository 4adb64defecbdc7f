//! ethtool bitsets (`ETHTOOL_A_BITSET_*`): link modes and features.
//!
//! The kernel sends either the compact form (u32 value/mask words) or the
//! verbose form (a list of bits with index, name and value); [`Bitset::parse`]
//! reads both. Requests use the verbose form with names, as ethtool does:
//! `BITS { BIT { NAME, [VALUE] } ... }` without `NOMASK`, so only the listed
//! bits change.

use std::collections::BTreeSet;

use super::super::attr::{AttrError, AttrTable, Builder};

pub(crate) const A_BITSET_NOMASK: u16 = 1;
pub(crate) const A_BITSET_SIZE: u16 = 2;
pub(crate) const A_BITSET_BITS: u16 = 3;
pub(crate) const A_BITSET_VALUE: u16 = 4;
pub(crate) const A_BITSET_MASK: u16 = 5;
pub(crate) const A_BITSET_BITS_BIT: u16 = 1;
pub(crate) const A_BITSET_BIT_INDEX: u16 = 1;
pub(crate) const A_BITSET_BIT_NAME: u16 = 2;
pub(crate) const A_BITSET_BIT_VALUE: u16 = 3;

/// One bit of a bitset.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Bit {
    pub(crate) index: Option<u32>,
    pub(crate) name: Option<String>,
    pub(crate) value: bool,
}

/// A decoded bitset: the bits in its mask (or, for a `NOMASK` list, the set bits).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Bitset {
    pub(crate) nomask: bool,
    pub(crate) size: Option<u32>,
    pub(crate) bits: Vec<Bit>,
}

fn word_bit(words: &[u8], idx: u32) -> bool {
    let byte = (idx / 32) as usize * 4;
    match words.get(byte..byte + 4) {
        Some(w) => u32::from_ne_bytes([w[0], w[1], w[2], w[3]]) & (1 << (idx % 32)) != 0,
        None => false,
    }
}

impl Bitset {
    /// Decode a bitset attribute's payload, compact or verbose.
    pub(crate) fn parse(payload: &[u8]) -> Result<Self, AttrError> {
        let t = AttrTable::parse(payload)?;
        let nomask = t.has(A_BITSET_NOMASK);
        let size = t.u32(A_BITSET_SIZE)?;
        let mut bits = Vec::new();
        if let Some(list) = t.get(A_BITSET_BITS) {
            for bit in list.nested() {
                let bit = bit?;
                if bit.kind != A_BITSET_BITS_BIT {
                    continue;
                }
                let b = AttrTable::parse(bit.payload)?;
                let index = b.u32(A_BITSET_BIT_INDEX)?;
                let name = b.string(A_BITSET_BIT_NAME);
                if index.is_none() && name.is_none() {
                    return Err(AttrError::Invalid(
                        "bitset bit without index or name".into(),
                    ));
                }
                bits.push(Bit {
                    index,
                    name,
                    // In a NOMASK list every listed bit is set.
                    value: nomask || b.has(A_BITSET_BIT_VALUE),
                });
            }
        } else {
            let size = size.ok_or(AttrError::Missing {
                kind: A_BITSET_SIZE,
            })?;
            let value = t.require(A_BITSET_VALUE)?.payload;
            let mask = if nomask {
                None
            } else {
                Some(t.require(A_BITSET_MASK)?.payload)
            };
            let words = size.div_ceil(32) as usize * 4;
            if value.len() < words || mask.is_some_and(|m| m.len() < words) {
                return Err(AttrError::Invalid(format!(
                    "compact bitset of {size} bits with a shorter value or mask"
                )));
            }
            for idx in 0..size {
                let v = word_bit(value, idx);
                let in_scope = match mask {
                    Some(m) => word_bit(m, idx),
                    None => v,
                };
                if in_scope {
                    bits.push(Bit {
                        index: Some(idx),
                        name: None,
                        value: v,
                    });
                }
            }
        }
        Ok(Bitset { nomask, size, bits })
    }

    /// Indices of the bits whose value is set.
    pub(crate) fn set_indices(&self) -> BTreeSet<u32> {
        self.bits
            .iter()
            .filter(|b| b.value)
            .filter_map(|b| b.index)
            .collect()
    }

    fn name_of(bit: &Bit, table: Option<&[String]>) -> Option<String> {
        bit.name.clone().or_else(|| {
            let i = bit.index? as usize;
            table?.get(i).filter(|n| !n.is_empty()).cloned()
        })
    }

    /// Names of the bits whose value is set (from the bit itself, else `table[index]`).
    pub(crate) fn set_names(&self, table: Option<&[String]>) -> Vec<String> {
        self.bits
            .iter()
            .filter(|b| b.value)
            .filter_map(|b| Self::name_of(b, table))
            .collect()
    }

    /// Names of every bit in the mask (for link modes: the supported modes).
    pub(crate) fn mask_names(&self, table: Option<&[String]>) -> Vec<String> {
        self.bits
            .iter()
            .filter_map(|b| Self::name_of(b, table))
            .collect()
    }
}

/// Write a verbose bitset that changes only the named bits: `(name, on)`.
pub(crate) fn put_named(b: &mut Builder, kind: u16, bits: &[(&str, bool)]) {
    b.nested(kind, |b| {
        b.nested(A_BITSET_BITS, |b| {
            for (name, on) in bits {
                b.nested(A_BITSET_BITS_BIT, |b| {
                    b.put_str(A_BITSET_BIT_NAME, name);
                    if *on {
                        b.put_flag(A_BITSET_BIT_VALUE);
                    }
                });
            }
        });
    });
}

/// Write a compact bitset (`mask` `None` makes it a `NOMASK` list).
#[cfg_attr(not(test), expect(dead_code, reason = "only the unit tests use it"))]
pub(crate) fn put_compact(
    b: &mut Builder,
    kind: u16,
    size: u32,
    value: &[u32],
    mask: Option<&[u32]>,
) {
    let bytes = |w: &[u32]| w.iter().flat_map(|x| x.to_ne_bytes()).collect::<Vec<u8>>();
    b.nested(kind, |b| {
        if mask.is_none() {
            b.put_flag(A_BITSET_NOMASK);
        }
        b.put_u32(A_BITSET_SIZE, size);
        b.put(A_BITSET_VALUE, &bytes(value));
        if let Some(m) = mask {
            b.put(A_BITSET_MASK, &bytes(m));
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn only_attr(bytes: &[u8]) -> Vec<u8> {
        AttrTable::parse(bytes)
            .unwrap()
            .get(7)
            .unwrap()
            .payload
            .to_vec()
    }

    #[test]
    fn named_bits_round_trip() {
        let mut b = Builder::new();
        put_named(
            &mut b,
            7,
            &[("rx-gro", false), ("tx-generic-segmentation", true)],
        );
        let set = Bitset::parse(&only_attr(&b.finish().unwrap())).unwrap();
        assert!(!set.nomask);
        assert_eq!(set.bits.len(), 2);
        assert_eq!(set.bits[0].name.as_deref(), Some("rx-gro"));
        assert!(!set.bits[0].value);
        assert_eq!(set.set_names(None), vec!["tx-generic-segmentation"]);
        assert_eq!(set.mask_names(None).len(), 2);
    }

    #[test]
    fn compact_with_mask_round_trip() {
        // 40 bits: value has bits 1 and 33, mask has 1, 2, 33.
        let mut b = Builder::new();
        put_compact(&mut b, 7, 40, &[0b10, 0b10], Some(&[0b110, 0b10]));
        let set = Bitset::parse(&only_attr(&b.finish().unwrap())).unwrap();
        assert_eq!(set.size, Some(40));
        assert_eq!(set.set_indices(), BTreeSet::from([1, 33]));
        assert_eq!(set.bits.len(), 3);
        let table: Vec<String> = (0..40).map(|i| format!("b{i}")).collect();
        assert_eq!(set.set_names(Some(&table)), vec!["b1", "b33"]);
        assert_eq!(set.mask_names(Some(&table)), vec!["b1", "b2", "b33"]);
    }

    #[test]
    fn compact_nomask_list() {
        let mut b = Builder::new();
        put_compact(&mut b, 7, 6, &[0x20], None);
        let set = Bitset::parse(&only_attr(&b.finish().unwrap())).unwrap();
        assert!(set.nomask);
        assert_eq!(set.set_indices(), BTreeSet::from([5]));
    }

    #[test]
    fn verbose_nomask_reply() {
        // The kernel's verbose list: NOMASK, SIZE, BITS{BIT{INDEX,NAME}} with no VALUE flags.
        let mut b = Builder::new();
        b.nested(7, |b| {
            b.put_flag(A_BITSET_NOMASK).put_u32(A_BITSET_SIZE, 100);
            b.nested(A_BITSET_BITS, |b| {
                b.nested(A_BITSET_BITS_BIT, |b| {
                    b.put_u32(A_BITSET_BIT_INDEX, 5)
                        .put_str(A_BITSET_BIT_NAME, "1000baseT/Full");
                });
            });
        });
        let set = Bitset::parse(&only_attr(&b.finish().unwrap())).unwrap();
        assert_eq!(set.set_names(None), vec!["1000baseT/Full"]);
        assert_eq!(set.set_indices(), BTreeSet::from([5]));
    }

    #[test]
    fn malformed_bitsets_are_errors() {
        // Compact without SIZE.
        let mut b = Builder::new();
        b.nested(7, |b| {
            b.put(A_BITSET_VALUE, &[1, 0, 0, 0])
                .put(A_BITSET_MASK, &[1, 0, 0, 0]);
        });
        assert!(Bitset::parse(&only_attr(&b.finish().unwrap())).is_err());
        // SIZE larger than the value words.
        let mut b = Builder::new();
        put_compact(&mut b, 7, 4000, &[1], Some(&[1]));
        assert!(Bitset::parse(&only_attr(&b.finish().unwrap())).is_err());
        // Compact with a mask required but missing.
        let mut b = Builder::new();
        b.nested(7, |b| {
            b.put_u32(A_BITSET_SIZE, 8)
                .put(A_BITSET_VALUE, &[1, 0, 0, 0]);
        });
        assert!(Bitset::parse(&only_attr(&b.finish().unwrap())).is_err());
        // A bit with neither index nor name.
        let mut b = Builder::new();
        b.nested(7, |b| {
            b.nested(A_BITSET_BITS, |b| {
                b.nested(A_BITSET_BITS_BIT, |b| {
                    b.put_flag(A_BITSET_BIT_VALUE);
                });
            });
        });
        assert!(Bitset::parse(&only_attr(&b.finish().unwrap())).is_err());
        // Garbage.
        assert!(Bitset::parse(&[3, 0, 1]).is_err());
    }
}
