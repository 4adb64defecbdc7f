//! The request/reply header every ethtool message starts with
//! (`ETHTOOL_A_*_HEADER`, attribute 1 in every message kind).

use super::super::attr::Builder;
#[cfg(any(test, feature = "fuzzing"))]
use super::super::attr::{AttrError, AttrTable};
use super::super::genl;
use super::VERSION;

/// The header attribute's type in every ethtool message.
pub(crate) const A_HEADER: u16 = 1;

#[cfg(any(test, feature = "fuzzing"))]
pub(crate) const A_HEADER_DEV_INDEX: u16 = 1;
pub(crate) const A_HEADER_DEV_NAME: u16 = 2;
pub(crate) const A_HEADER_FLAGS: u16 = 3;

/// Ask for compact bitsets in the reply.
pub(crate) const FLAG_COMPACT_BITSETS: u32 = 1 << 0;

/// Write the header nest naming the device; `flags` only when non-zero
/// (as ethtool does).
pub(crate) fn put(b: &mut Builder, ifname: &str, flags: u32) {
    b.nested(A_HEADER, |b| {
        b.put_str(A_HEADER_DEV_NAME, ifname);
        if flags != 0 {
            b.put_u32(A_HEADER_FLAGS, flags);
        }
    });
}

/// A builder holding the genetlink header for `cmd` and the device header;
/// the message's own attributes go after it.
pub(crate) fn request(cmd: u8, ifname: &str, flags: u32) -> Builder {
    let mut b = genl::builder(cmd, VERSION);
    put(&mut b, ifname, flags);
    b
}

/// The device a reply or notification is about (read back only by the unit
/// tests and the fuzz target `netlink_ethtool`: the replies hlctl asks for
/// name the device it asked about).
#[cfg(any(test, feature = "fuzzing"))]
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Device {
    pub(crate) ifindex: Option<u32>,
    pub(crate) name: Option<String>,
}

/// Decode the header nest of a reply (attribute bytes of the whole message).
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) fn parse(attrs: &[u8]) -> Result<Device, AttrError> {
    let t = AttrTable::parse(attrs)?;
    let Some(h) = t.get(A_HEADER) else {
        return Ok(Device::default());
    };
    let h = AttrTable::parse(h.payload)?;
    Ok(Device {
        ifindex: h.u32(A_HEADER_DEV_INDEX)?,
        name: h.string(A_HEADER_DEV_NAME),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trip() {
        let mut b = Builder::new();
        b.nested(A_HEADER, |b| {
            b.put_u32(A_HEADER_DEV_INDEX, 4)
                .put_str(A_HEADER_DEV_NAME, "eth0");
        });
        let d = parse(&b.finish().unwrap()).unwrap();
        assert_eq!(d.ifindex, Some(4));
        assert_eq!(d.name.as_deref(), Some("eth0"));
    }

    #[test]
    fn get_requests_equal_ethtools() {
        for (fixture, cmd) in [
            ("rings_get", super::super::msg::RINGS_GET),
            ("pause_get", super::super::msg::PAUSE_GET),
            ("coalesce_get", super::super::msg::COALESCE_GET),
            ("channels_get", super::super::msg::CHANNELS_GET),
        ] {
            let ours = request(cmd, "vcap0", 0).finish().unwrap();
            crate::nic::netlink::fixtures::assert_matches_ethtool(fixture, &ours);
        }
    }
}
