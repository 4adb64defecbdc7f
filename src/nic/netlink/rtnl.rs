//! rtnetlink links: RTM_GETLINK (dump, or one link by name) decoded into
//! [`RtLink`], and RTM_NEWLINK requests that change MTU or txqueuelen
//! (what `ip link set dev X mtu N` sends).

use super::RtLink;
use super::attr::{AttrTable, Builder};
use super::socket::Nack;
use crate::nic::model::Counters;

pub(crate) const RTM_NEWLINK: u16 = 16;
pub(crate) const RTM_GETLINK: u16 = 18;

const IFINFOMSG_LEN: usize = 16;
const IFF_UP: u32 = 0x1;

const IFLA_ADDRESS: u16 = 1;
const IFLA_IFNAME: u16 = 3;
pub(crate) const IFLA_MTU: u16 = 4;
const IFLA_MASTER: u16 = 10;
pub(crate) const IFLA_TXQLEN: u16 = 13;
const IFLA_OPERSTATE: u16 = 16;
const IFLA_LINKINFO: u16 = 18;
const IFLA_STATS64: u16 = 23;
const IFLA_CARRIER_CHANGES: u16 = 35;
pub(crate) const IFLA_GSO_MAX_SIZE: u16 = 41;
const IFLA_MIN_MTU: u16 = 50;
const IFLA_MAX_MTU: u16 = 51;
const IFLA_PARENT_DEV_NAME: u16 = 56;
const IFLA_TSO_MAX_SIZE: u16 = 59;
const IFLA_INFO_KIND: u16 = 1;
const IFLA_INFO_DATA: u16 = 2;
const IFLA_INFO_SLAVE_KIND: u16 = 4;
const IFLA_INFO_SLAVE_DATA: u16 = 5;
const IFLA_BOND_MODE: u16 = 1;
const IFLA_BOND_ACTIVE_SLAVE: u16 = 2;
const IFLA_BOND_SLAVE_STATE: u16 = 1;
const IFLA_BRPORT_STATE: u16 = 1;

/// A link's place in a stack: its master (bridge, bond) and, for a bond or
/// a port, what `IFLA_LINKINFO` says about it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Relations {
    /// IFLA_MASTER: the bridge or bond this link is a port or slave of.
    pub(crate) master: Option<u32>,
    /// A bond's mode (IFLA_BOND_MODE: 0 balance-rr, 1 active-backup, ...).
    pub(crate) bond_mode: Option<u8>,
    /// A bond's active slave (IFLA_BOND_ACTIVE_SLAVE).
    pub(crate) active_slave: Option<u32>,
    /// IFLA_INFO_SLAVE_KIND: `bridge` or `bond` when this link is a port/slave.
    pub(crate) slave_kind: Option<String>,
    /// Bond slave state (0 active, 1 backup) or bridge port state (STP, 0..4).
    pub(crate) slave_state: Option<u8>,
}

/// Decode IFLA_MASTER and the bond/port parts of IFLA_LINKINFO.
fn relations(t: &AttrTable, linkinfo: Option<&AttrTable>) -> Result<Relations, Nack> {
    let m = Nack::malformed;
    let mut r = Relations {
        master: t.u32(IFLA_MASTER).map_err(m)?.filter(|i| *i != 0),
        ..Default::default()
    };
    let Some(li) = linkinfo else {
        return Ok(r);
    };
    if li.string(IFLA_INFO_KIND).as_deref() == Some("bond")
        && let Some(d) = li.get(IFLA_INFO_DATA)
    {
        let d = AttrTable::parse(d.payload).map_err(m)?;
        r.bond_mode = d.u8(IFLA_BOND_MODE).map_err(m)?;
        r.active_slave = d
            .u32(IFLA_BOND_ACTIVE_SLAVE)
            .map_err(m)?
            .filter(|i| *i != 0);
    }
    r.slave_kind = li.string(IFLA_INFO_SLAVE_KIND);
    if let Some(d) = li.get(IFLA_INFO_SLAVE_DATA) {
        let d = AttrTable::parse(d.payload).map_err(m)?;
        r.slave_state = match r.slave_kind.as_deref() {
            Some("bond") => d.u8(IFLA_BOND_SLAVE_STATE).map_err(m)?,
            Some("bridge") => d.u8(IFLA_BRPORT_STATE).map_err(m)?,
            _ => None,
        };
    }
    Ok(r)
}

/// Longest interface name the kernel accepts (IFNAMSIZ - 1).
pub(crate) const IFNAME_MAX: usize = 15;

/// `struct ifinfomsg` with family AF_UNSPEC.
fn ifinfomsg(index: u32) -> [u8; IFINFOMSG_LEN] {
    let mut h = [0u8; IFINFOMSG_LEN];
    h[4..8].copy_from_slice(&index.to_ne_bytes());
    h
}

/// RTM_GETLINK dump request payload.
pub(crate) fn encode_dump() -> Vec<u8> {
    ifinfomsg(0).to_vec()
}

/// RTM_GETLINK request payload for one link by name.
pub(crate) fn encode_get_by_name(name: &str) -> Result<Vec<u8>, Nack> {
    let mut b = Builder::with_header(&ifinfomsg(0));
    b.put_str(IFLA_IFNAME, name);
    b.finish().map_err(|e| Nack {
        errno: libc::EINVAL,
        extack: Some(e.to_string()),
    })
}

/// RTM_NEWLINK request payload setting one u32 attribute of `ifindex`
/// (IFLA_MTU, IFLA_TXQLEN, IFLA_GSO_MAX_SIZE).
pub(crate) fn encode_set(ifindex: u32, attr: u16, value: u32) -> Vec<u8> {
    let mut b = Builder::with_header(&ifinfomsg(ifindex));
    b.put_u32(attr, value);
    // Only u32 attributes: encoding cannot fail.
    b.finish().unwrap_or_default()
}

fn oper_state_name(v: u8) -> String {
    match v {
        0 => "unknown",
        1 => "notpresent",
        2 => "down",
        3 => "lowerlayerdown",
        4 => "testing",
        5 => "dormant",
        6 => "up",
        _ => return format!("state{v}"),
    }
    .to_string()
}

fn mac_string(bytes: &[u8]) -> Option<String> {
    if bytes.is_empty() {
        return None;
    }
    let parts: Vec<String> = bytes.iter().map(|b| format!("{b:02x}")).collect();
    Some(parts.join(":"))
}

/// `struct rtnl_link_stats64`; fields beyond a short (older kernel) payload read as 0.
fn counters(stats: &[u8]) -> Counters {
    let at = |i: usize| -> u64 {
        stats
            .get(i * 8..i * 8 + 8)
            .and_then(|s| s.try_into().ok())
            .map(u64::from_ne_bytes)
            .unwrap_or(0)
    };
    Counters {
        rx_packets: at(0),
        tx_packets: at(1),
        rx_bytes: at(2),
        tx_bytes: at(3),
        rx_errors: at(4),
        tx_errors: at(5),
        rx_dropped: at(6),
        tx_dropped: at(7),
        // 8: multicast
        collisions: at(9),
        // 10: rx_length_errors
        rx_over_errors: at(11),
        rx_crc_errors: at(12),
        rx_frame_errors: at(13),
        rx_fifo_errors: at(14),
        rx_missed_errors: at(15),
        // 16: tx_aborted_errors
        tx_carrier_errors: at(17),
        tx_fifo_errors: at(18),
    }
}

/// Decode one RTM_NEWLINK message (the reply to RTM_GETLINK).
pub(crate) fn parse_link(payload: &[u8]) -> Result<RtLink, Nack> {
    let head = payload
        .get(..IFINFOMSG_LEN)
        .ok_or_else(|| Nack::malformed("RTM_NEWLINK shorter than struct ifinfomsg"))?;
    let index = u32::from_ne_bytes([head[4], head[5], head[6], head[7]]);
    let flags = u32::from_ne_bytes([head[8], head[9], head[10], head[11]]);
    let t = AttrTable::parse(&payload[IFINFOMSG_LEN..]).map_err(Nack::malformed)?;
    let m = Nack::malformed;
    let linkinfo = match t.get(IFLA_LINKINFO) {
        Some(li) => Some(AttrTable::parse(li.payload).map_err(m)?),
        None => None,
    };
    let kind = linkinfo.as_ref().and_then(|li| li.string(IFLA_INFO_KIND));
    let relations = relations(&t, linkinfo.as_ref())?;
    Ok(RtLink {
        ifindex: index,
        name: t.string(IFLA_IFNAME).unwrap_or_default(),
        mac: t.get(IFLA_ADDRESS).and_then(|a| mac_string(a.payload)),
        kind,
        physical: t.has(IFLA_PARENT_DEV_NAME),
        oper_state: oper_state_name(t.u8(IFLA_OPERSTATE).map_err(m)?.unwrap_or(0)),
        admin_up: flags & IFF_UP != 0,
        carrier_changes: t.u32(IFLA_CARRIER_CHANGES).map_err(m)?,
        mtu: t.u32(IFLA_MTU).map_err(m)?.unwrap_or(0),
        mtu_min: t.u32(IFLA_MIN_MTU).map_err(m)?,
        mtu_max: t.u32(IFLA_MAX_MTU).map_err(m)?,
        txqueuelen: t.u32(IFLA_TXQLEN).map_err(m)?.unwrap_or(0),
        gso_max_size: t.u32(IFLA_GSO_MAX_SIZE).map_err(m)?,
        tso_max_size: t.u32(IFLA_TSO_MAX_SIZE).map_err(m)?,
        counters: t
            .get(IFLA_STATS64)
            .map(|a| counters(a.payload))
            .unwrap_or_default(),
        relations,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply() -> Vec<u8> {
        let mut head = ifinfomsg(7);
        head[8..12].copy_from_slice(&(IFF_UP | 0x1000).to_ne_bytes());
        let mut stats = vec![0u8; 200];
        for i in 0..25u64 {
            stats[i as usize * 8..i as usize * 8 + 8].copy_from_slice(&(100 + i).to_ne_bytes());
        }
        let mut b = Builder::with_header(&head);
        b.put_str(IFLA_IFNAME, "veth7")
            .put(IFLA_ADDRESS, &[0x92, 0x77, 0xe6, 0x55, 0x25, 0xdf])
            .put_u32(IFLA_MTU, 1500)
            .put_u32(IFLA_MIN_MTU, 68)
            .put_u32(IFLA_MAX_MTU, 65535)
            .put_u32(IFLA_TXQLEN, 1000)
            .put_u8(IFLA_OPERSTATE, 3)
            .put_u32(IFLA_CARRIER_CHANGES, 2)
            .nested(IFLA_LINKINFO, |b| {
                b.put_str(IFLA_INFO_KIND, "veth");
            })
            .put(IFLA_STATS64, &stats);
        b.finish().unwrap()
    }

    #[test]
    fn decodes_a_link() {
        let l = parse_link(&reply()).unwrap();
        assert_eq!(l.ifindex, 7);
        assert_eq!(l.name, "veth7");
        assert_eq!(l.mac.as_deref(), Some("92:77:e6:55:25:df"));
        assert_eq!(l.kind.as_deref(), Some("veth"));
        assert!(!l.physical);
        assert!(l.admin_up);
        assert_eq!(l.oper_state, "lowerlayerdown");
        assert_eq!((l.mtu, l.mtu_min, l.mtu_max), (1500, Some(68), Some(65535)));
        assert_eq!(l.txqueuelen, 1000);
        assert_eq!(l.carrier_changes, Some(2));
        let c = &l.counters;
        assert_eq!(
            (c.rx_packets, c.tx_packets, c.rx_bytes, c.tx_bytes),
            (100, 101, 102, 103)
        );
        assert_eq!(
            (c.rx_dropped, c.collisions, c.rx_over_errors),
            (106, 109, 111)
        );
        assert_eq!(
            (c.rx_crc_errors, c.rx_frame_errors, c.rx_fifo_errors),
            (112, 113, 114)
        );
        assert_eq!(
            (c.rx_missed_errors, c.tx_carrier_errors, c.tx_fifo_errors),
            (115, 117, 118)
        );
    }

    #[test]
    fn decodes_bond_and_slave_relations() {
        // A bond (active-backup, active slave 3) that is itself a bridge port.
        let mut b = Builder::with_header(&ifinfomsg(5));
        b.put_str(IFLA_IFNAME, "bond0")
            .put_u32(IFLA_MTU, 1500)
            .put_u32(IFLA_MASTER, 6)
            .nested(IFLA_LINKINFO, |b| {
                b.put_str(IFLA_INFO_KIND, "bond")
                    .nested(IFLA_INFO_DATA, |b| {
                        b.put_u8(IFLA_BOND_MODE, 1)
                            .put_u32(IFLA_BOND_ACTIVE_SLAVE, 3);
                    })
                    .put_str(IFLA_INFO_SLAVE_KIND, "bridge")
                    .nested(IFLA_INFO_SLAVE_DATA, |b| {
                        b.put_u8(IFLA_BRPORT_STATE, 3);
                    });
            });
        let l = parse_link(&b.finish().unwrap()).unwrap();
        assert_eq!(
            l.relations,
            Relations {
                master: Some(6),
                bond_mode: Some(1),
                active_slave: Some(3),
                slave_kind: Some("bridge".into()),
                slave_state: Some(3),
            }
        );
        // A plain link: no relations.
        assert_eq!(
            parse_link(&reply()).unwrap().relations,
            Relations::default()
        );
    }

    #[test]
    fn truncated_replies_are_errors() {
        let r = reply();
        assert!(parse_link(&r[..10]).is_err());
        for n in IFINFOMSG_LEN..r.len() {
            // Never panics; most prefixes cut an attribute and fail.
            let _ = parse_link(&r[..n]);
        }
    }

    #[test]
    fn set_requests_equal_iproute2s() {
        // `ip link set dev X mtu 1400` / `txqueuelen 500`: RTM_NEWLINK, ifinfomsg + one attribute.
        for (fixture, attr, value) in [
            ("iproute2/set_mtu", IFLA_MTU, 1400),
            ("iproute2/set_txqueuelen", IFLA_TXQLEN, 500),
        ] {
            let msg = crate::nic::netlink::fixtures::load(fixture);
            assert_eq!(
                u16::from_ne_bytes([msg[4], msg[5]]),
                RTM_NEWLINK,
                "{fixture}"
            );
            // The ifindex is an input (it differs per capture): take it from the fixture.
            let ifindex = u32::from_ne_bytes([msg[20], msg[21], msg[22], msg[23]]);
            let ours = encode_set(ifindex, attr, value);
            crate::nic::netlink::fixtures::assert_matches(fixture, IFINFOMSG_LEN, &ours);
        }
    }

    #[test]
    fn set_request_layout() {
        let p = encode_set(3, IFLA_MTU, 1400);
        assert_eq!(p.len(), 16 + 8);
        assert_eq!(&p[4..8], &3u32.to_ne_bytes());
        assert_eq!(&p[16..], &[8, 0, 4, 0, 0x78, 0x05, 0, 0]);
    }
}
