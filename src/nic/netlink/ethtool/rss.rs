//! Receive Side Scaling as the driver holds it: RSS_GET (`ethtool -x`,
//! ethtool netlink since Linux 6.2; [`crate::nic::ioctl::rss`] before) — the hash function, the indirection
//! table (which receive queue each hash bucket goes to) and the hash key.
//! Read only: hlctl shows it and sets none of it.

use super::super::NetlinkError;
use super::super::attr::{AttrError, AttrTable};
use super::{Ethtool, msg};
use crate::cpu::layout::Rss;

const A_HFUNC: u16 = 3;
const A_INDIR: u16 = 4;
const A_HKEY: u16 = 5;

/// The hash functions by bit (`ETH_RSS_HASH_*_BIT`), as ethtool names them.
const HASH_FUNCTIONS: &[&str] = &["toeplitz", "xor", "crc32"];

/// The names of the hash functions on in `bits` (`toeplitz xor`).
pub(crate) fn hash_function(bits: u32) -> String {
    let on: Vec<String> = (0..32)
        .filter(|b| bits & (1 << b) != 0)
        .map(|b| {
            HASH_FUNCTIONS
                .get(b as usize)
                .map_or_else(|| format!("bit{b}"), |s| s.to_string())
        })
        .collect();
    if on.is_empty() {
        "none".into()
    } else {
        on.join(" ")
    }
}

/// Decode an RSS_GET reply: the table is an array of u32 queue indices,
/// the key bytes as ethtool prints them (`6d:5a:…`).
pub(crate) fn parse(attrs: &[u8]) -> Result<Rss, AttrError> {
    let t = AttrTable::parse(attrs)?;
    let indirection = match t.get(A_INDIR) {
        Some(a) if a.payload.len() % 4 != 0 => {
            return Err(AttrError::BadPayload {
                kind: A_INDIR,
                expected: a.payload.len() / 4 * 4 + 4,
                got: a.payload.len(),
            });
        }
        Some(a) => a
            .payload
            .chunks_exact(4)
            .map(|c| u32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
            .collect(),
        None => Vec::new(),
    };
    let hash_key = t.get(A_HKEY).filter(|a| !a.payload.is_empty()).map(|a| {
        a.payload
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<Vec<_>>()
            .join(":")
    });
    Ok(Rss {
        hash_function: t.u32(A_HFUNC)?.map(hash_function),
        indirection,
        hash_key,
    })
}

/// `Ok(None)` when the driver has no RSS (EOPNOTSUPP: veth, e1000e).
pub(crate) fn get(e: &mut Ethtool, ifname: &str) -> Result<Option<Rss>, NetlinkError> {
    e.get(msg::RSS_GET, "RSS_GET", ifname, 0, parse)
}

#[cfg(test)]
mod tests {
    use super::super::super::attr::Builder;
    use super::*;

    /// A reply built as the kernel lays it out (no driver on the machines
    /// here gives a table: virtio_net without qemu's `rss=on`, veth and
    /// e1000e have none): a header, toeplitz, a 4-entry table over 2
    /// queues, a 4-byte key.
    #[test]
    fn built_reply_with_table_and_key_decodes_like_ethtool_prints_it() {
        let mut b = Builder::new();
        b.nested(1, |b| {
            b.put_u32(1, 2);
            b.put_str(2, "eth1");
        });
        b.put_u32(A_HFUNC, 1);
        let table: Vec<u8> = [0u32, 1, 0, 1]
            .iter()
            .flat_map(|q| q.to_ne_bytes())
            .collect();
        b.put(A_INDIR, &table);
        b.put(A_HKEY, &[0x6d, 0x5a, 0x56, 0xda]);
        let r = parse(&b.finish().unwrap()).unwrap();
        assert_eq!(r.hash_function.as_deref(), Some("toeplitz"));
        assert_eq!(r.indirection, [0, 1, 0, 1]);
        assert_eq!(r.hash_key.as_deref(), Some("6d:5a:56:da"));
    }

    /// What virtio_net without the RSS feature answers (the hash function
    /// only), and a table whose length is no multiple of 4: an error.
    #[test]
    fn built_reply_without_table_and_a_torn_table() {
        let mut b = Builder::new();
        b.put_u32(A_HFUNC, 1 | 4);
        let r = parse(&b.finish().unwrap()).unwrap();
        assert_eq!(r.hash_function.as_deref(), Some("toeplitz crc32"));
        assert!(r.indirection.is_empty() && r.hash_key.is_none());
        let mut b = Builder::new();
        b.put(A_INDIR, &[0, 0, 0, 0, 1]);
        assert!(parse(&b.finish().unwrap()).is_err());
    }
}
