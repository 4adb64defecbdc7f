//! Offload features: ETHTOOL_GFEATURES (`ethtool -k`) and ETHTOOL_SFEATURES
//! (`ethtool -K`), by the kernel's ETH_SS_FEATURES names — the same names
//! netlink's FEATURES_GET uses.
//!
//! Each feature word holds four bitmaps: `available` (hw, changeable),
//! `requested` (wanted), `active` and `never_changed` (nochange). As on the
//! netlink path, a feature is `[fixed]` when it is not available or never changes.

use std::collections::BTreeMap;

use super::strings::{self, ETH_SS_FEATURES};
use super::{IoctlError, ctl_socket, ethtool_ioctl, not_supported};
use crate::nic::model::Feature;

const GET: u32 = 0x3a;
const SET: u32 = 0x3b;
const OP_GET: &str = "ETHTOOL_GFEATURES";
const OP_SET: &str = "ETHTOOL_SFEATURES";

/// Words of 32 features for `n` names.
fn words(n: usize) -> usize {
    n.div_ceil(32)
}

/// Feature `i` of one `struct ethtool_get_features_block` field, the blocks at `buf[2..]`.
fn bit(blocks: &[u32], field: usize, i: usize) -> bool {
    blocks[(i / 32) * 4 + field] & (1 << (i % 32)) != 0
}

/// The GFEATURES reply (`struct ethtool_gfeatures`, blocks of available,
/// requested, active, never_changed) by name.
fn to_features(blocks: &[u32], names: &[String]) -> BTreeMap<String, Feature> {
    names
        .iter()
        .enumerate()
        .filter(|(_, n)| !n.is_empty())
        .map(|(i, n)| {
            let f = Feature {
                active: bit(blocks, 2, i),
                requested: bit(blocks, 1, i),
                fixed: !bit(blocks, 0, i) || bit(blocks, 3, i),
            };
            (n.clone(), f)
        })
        .collect()
}

fn names(ifname: &str, op: &'static str) -> Result<Vec<String>, IoctlError> {
    let err = |e| IoctlError::new(ifname, op, e);
    strings::all(&ctl_socket().map_err(err)?, ifname, ETH_SS_FEATURES).map_err(err)
}

pub(crate) fn read(ifname: &str) -> Result<Option<BTreeMap<String, Feature>>, IoctlError> {
    let names = names(ifname, OP_GET)?;
    if names.is_empty() {
        return Ok(None);
    }
    let err = |e| IoctlError::new(ifname, OP_GET, e);
    let fd = ctl_socket().map_err(err)?;
    let n = words(names.len());
    let mut buf = vec![0u32; 2 + 4 * n];
    buf[0] = GET;
    buf[1] = n as u32;
    // SAFETY: the kernel writes at most `buf[1]` blocks of four u32 after the header.
    match unsafe { ethtool_ioctl(&fd, ifname, buf.as_mut_ptr().cast()) } {
        Ok(()) => Ok(Some(to_features(&buf[2..], &names))),
        Err(e) if not_supported(&e) => Ok(None),
        Err(e) => Err(err(e)),
    }
}

/// `struct ethtool_sfeatures`: the header, then a (valid, requested) pair per word.
fn encode_set(names: &[String], wanted: &BTreeMap<String, bool>) -> Result<Vec<u32>, String> {
    let n = words(names.len());
    let mut buf = vec![0u32; 2 + 2 * n];
    buf[0] = SET;
    buf[1] = n as u32;
    for (name, on) in wanted {
        let i = names
            .iter()
            .position(|k| k == name)
            .ok_or_else(|| format!("the kernel has no feature named {name}"))?;
        let (word, mask) = (2 + (i / 32) * 2, 1u32 << (i % 32));
        buf[word] |= mask;
        if *on {
            buf[word + 1] |= mask;
        }
    }
    Ok(buf)
}

/// Request features on/off by kernel name. Like FEATURES_SET, what the driver
/// cannot change is kept as it is (the kernel says so in a positive return
/// value we do not need): read back to see what took effect.
pub(crate) fn write(ifname: &str, wanted: &BTreeMap<String, bool>) -> Result<(), IoctlError> {
    if wanted.is_empty() {
        return Ok(());
    }
    let names = names(ifname, OP_SET)?;
    let mut buf = encode_set(&names, wanted).map_err(|m| IoctlError::invalid(ifname, OP_SET, m))?;
    let fd = ctl_socket().map_err(|e| IoctlError::new(ifname, OP_SET, e))?;
    // SAFETY: the kernel reads `buf[1]` pairs after the header and writes nothing back.
    unsafe { ethtool_ioctl(&fd, ifname, buf.as_mut_ptr().cast()) }
        .map_err(|e| IoctlError::new(ifname, OP_SET, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> Vec<String> {
        let mut n: Vec<String> = (0..40).map(|i| format!("f{i}")).collect();
        n[1] = String::new();
        n
    }

    #[test]
    fn blocks_to_features() {
        // Word 0: available 0, 2; requested 0; active 0, 2; never_changed 2.
        // Word 1: feature 33 active but not available.
        let blocks = [0b101, 0b001, 0b101, 0b100, 0, 0, 0b10, 0];
        let f = to_features(&blocks, &names());
        assert_eq!(f.len(), 39);
        assert_eq!(
            f["f0"],
            Feature {
                active: true,
                requested: true,
                fixed: false
            }
        );
        assert_eq!(
            f["f2"],
            Feature {
                active: true,
                requested: false,
                fixed: true
            }
        );
        assert_eq!(
            f["f33"],
            Feature {
                active: true,
                requested: false,
                fixed: true
            }
        );
        assert!(!f["f3"].active && f["f3"].fixed);
    }

    #[test]
    fn set_marks_valid_and_requested_bits() {
        let wanted = BTreeMap::from([("f2".to_string(), true), ("f35".to_string(), false)]);
        let buf = encode_set(&names(), &wanted).unwrap();
        assert_eq!(buf, vec![SET, 2, 0b100, 0b100, 1 << 3, 0]);
        let unknown = BTreeMap::from([("rx-nothing".to_string(), true)]);
        assert!(
            encode_set(&names(), &unknown)
                .unwrap_err()
                .contains("rx-nothing")
        );
    }
}
