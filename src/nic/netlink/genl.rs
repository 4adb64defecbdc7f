//! Generic netlink: the 4-byte `struct genlmsghdr` and the controller
//! (`CTRL_CMD_GETFAMILY`) that turns a family name such as "ethtool" into
//! its id and multicast group ids.

use std::collections::BTreeMap;

use super::attr::{AttrTable, Builder};
use super::socket::{Message, Nack, Socket};

/// The controller family's fixed id.
pub(crate) const GENL_ID_CTRL: u16 = 0x10;
pub(crate) const GENL_HDRLEN: usize = 4;

const CTRL_CMD_GETFAMILY: u8 = 3;
const CTRL_VERSION: u8 = 1;
const CTRL_ATTR_FAMILY_ID: u16 = 1;
const CTRL_ATTR_FAMILY_NAME: u16 = 2;
const CTRL_ATTR_VERSION: u16 = 3;
const CTRL_ATTR_MCAST_GROUPS: u16 = 7;
const CTRL_ATTR_MCAST_GRP_NAME: u16 = 1;
const CTRL_ATTR_MCAST_GRP_ID: u16 = 2;

/// `struct genlmsghdr`: command, version, two reserved bytes.
pub(crate) fn header(cmd: u8, version: u8) -> [u8; GENL_HDRLEN] {
    [cmd, version, 0, 0]
}

/// A builder positioned after a genetlink header.
pub(crate) fn builder(cmd: u8, version: u8) -> Builder {
    Builder::with_header(&header(cmd, version))
}

/// Split a genetlink message payload into (command, attribute bytes).
pub(crate) fn split(payload: &[u8]) -> Result<(u8, &[u8]), Nack> {
    if payload.len() < GENL_HDRLEN {
        return Err(Nack::malformed("genetlink message shorter than its header"));
    }
    Ok((payload[0], &payload[GENL_HDRLEN..]))
}

/// A resolved generic netlink family.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Family {
    pub(crate) id: u16,
    pub(crate) version: u32,
    /// Multicast group name → group id (for `Socket::add_membership`).
    pub mcast_groups: BTreeMap<String, u32>,
}

/// The `CTRL_CMD_GETFAMILY` request for `name` (genetlink header onward).
pub(crate) fn encode_get_family(name: &str) -> Result<Vec<u8>, Nack> {
    let mut b = builder(CTRL_CMD_GETFAMILY, CTRL_VERSION);
    b.put_str(CTRL_ATTR_FAMILY_NAME, name);
    b.finish().map_err(|e| Nack {
        errno: libc::EINVAL,
        extack: Some(e.to_string()),
    })
}

/// Decode the controller's reply.
pub(crate) fn parse_family(msgs: &[Message]) -> Result<Family, Nack> {
    let m = msgs
        .first()
        .ok_or_else(|| Nack::malformed("no reply to CTRL_CMD_GETFAMILY"))?;
    let (_, attrs) = split(&m.payload)?;
    let t = AttrTable::parse(attrs).map_err(Nack::malformed)?;
    let id = t
        .require(CTRL_ATTR_FAMILY_ID)
        .and_then(|a| a.u16())
        .map_err(Nack::malformed)?;
    let version = t
        .u32(CTRL_ATTR_VERSION)
        .map_err(Nack::malformed)?
        .unwrap_or(0);
    let mut mcast_groups = BTreeMap::new();
    if let Some(groups) = t.get(CTRL_ATTR_MCAST_GROUPS) {
        for g in groups.nested() {
            let g = g.map_err(Nack::malformed)?;
            let gt = AttrTable::parse(g.payload).map_err(Nack::malformed)?;
            if let (Some(name), Some(gid)) = (
                gt.string(CTRL_ATTR_MCAST_GRP_NAME),
                gt.u32(CTRL_ATTR_MCAST_GRP_ID).map_err(Nack::malformed)?,
            ) {
                mcast_groups.insert(name, gid);
            }
        }
    }
    Ok(Family {
        id,
        version,
        mcast_groups,
    })
}

/// Ask the controller for family `name` (ENOENT when the kernel has no such family).
pub(crate) fn resolve_family(sock: &mut Socket, name: &str) -> Result<Family, Nack> {
    let req = encode_get_family(name)?;
    let msgs = sock.request(GENL_ID_CTRL, 0, &req)?;
    parse_family(&msgs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn get_family_request_matches_ethtools() {
        // What /usr/sbin/ethtool sends to resolve its family.
        let ours = encode_get_family("ethtool").unwrap();
        crate::nic::netlink::fixtures::assert_matches_ethtool("ctrl_getfamily", &ours);
    }

    #[test]
    fn family_reply_with_groups() {
        let mut b = builder(1, 2);
        b.put_u16(CTRL_ATTR_FAMILY_ID, 21)
            .put_str(CTRL_ATTR_FAMILY_NAME, "ethtool")
            .put_u32(CTRL_ATTR_VERSION, 1)
            .nested(CTRL_ATTR_MCAST_GROUPS, |b| {
                b.nested(1, |b| {
                    b.put_str(CTRL_ATTR_MCAST_GRP_NAME, "monitor")
                        .put_u32(CTRL_ATTR_MCAST_GRP_ID, 9);
                });
            });
        let msg = Message {
            kind: GENL_ID_CTRL,
            flags: 0,
            seq: 1,
            pid: 0,
            payload: b.finish().unwrap(),
        };
        let f = parse_family(&[msg]).unwrap();
        assert_eq!(f.id, 21);
        assert_eq!(f.version, 1);
        assert_eq!(f.mcast_groups.get("monitor"), Some(&9));
        assert!(parse_family(&[]).is_err());
    }
}
