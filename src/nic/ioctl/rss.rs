//! RSS through ETHTOOL_GRSSH (`ethtool -x` on kernels before ethtool
//! netlink's RSS_GET, which came with Linux 6.2): a first call with both
//! sizes 0 returns the table's and key's sizes and the hash function; a
//! second with those sizes fills the table and the key.

use super::{IoctlError, ctl_socket, ethtool_ioctl, not_supported};
use crate::cpu::layout::Rss;

const ETHTOOL_GRSSH: u32 = 0x46;
/// `struct ethtool_rxfh` before its `rss_config[]`, in u32 words: cmd,
/// rss_context, indir_size, key_size, hfunc (a u8) and its padding, rsvd32.
const HEAD_WORDS: usize = 6;

fn call(fd: &std::os::fd::OwnedFd, ifname: &str, buf: &mut [u32]) -> std::io::Result<()> {
    // SAFETY: `buf` holds the header and the indir_size u32s and key_size
    // bytes it asks for (words 2 and 3), all the kernel writes back.
    unsafe { ethtool_ioctl(fd, ifname, buf.as_mut_ptr().cast()) }
}

/// `Ok(None)` when the driver has no RSS (EOPNOTSUPP: veth, e1000e).
pub(crate) fn read(ifname: &str) -> Result<Option<Rss>, IoctlError> {
    let err = |e| IoctlError::new(ifname, "ETHTOOL_GRSSH", e);
    let fd = ctl_socket().map_err(err)?;
    let mut head = [0u32; HEAD_WORDS];
    head[0] = ETHTOOL_GRSSH;
    match call(&fd, ifname, &mut head) {
        Ok(()) => {}
        Err(e) if not_supported(&e) => return Ok(None),
        Err(e) => return Err(err(e)),
    }
    let (n, k) = (head[2] as usize, head[3] as usize);
    let hfunc = u32::from(head[4].to_ne_bytes()[0]);
    let mut rss = Rss {
        hash_function: Some(crate::nic::netlink::ethtool::rss::hash_function(hfunc)),
        ..Default::default()
    };
    if n == 0 && k == 0 {
        return Ok(Some(rss));
    }
    let mut buf = vec![0u32; HEAD_WORDS + n + k.div_ceil(4)];
    buf[..HEAD_WORDS].copy_from_slice(&head);
    call(&fd, ifname, &mut buf).map_err(err)?;
    rss.hash_function = Some(crate::nic::netlink::ethtool::rss::hash_function(u32::from(
        buf[4].to_ne_bytes()[0],
    )));
    rss.indirection = buf[HEAD_WORDS..HEAD_WORDS + n].to_vec();
    let key: Vec<u8> = buf[HEAD_WORDS + n..]
        .iter()
        .flat_map(|w| w.to_ne_bytes())
        .take(k)
        .collect();
    rss.hash_key = (!key.is_empty()).then(|| {
        key.iter()
            .map(|b| format!("{b:02x}"))
            .collect::<Vec<_>>()
            .join(":")
    });
    Ok(Some(rss))
}

#[cfg(test)]
mod tests {
    /// veth has no RSS: the ioctl answers EOPNOTSUPP, read as none; this
    /// host's own devices are only read (never changed).
    #[test]
    fn lo_has_no_rss() {
        assert_eq!(super::read("lo").unwrap(), None);
    }
}
