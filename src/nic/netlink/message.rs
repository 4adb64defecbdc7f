//! The netlink wire format around the attributes: `struct nlmsghdr`
//! (encode a request, split a datagram into messages) and `struct nlmsgerr`
//! (ACK, or errno plus the extended-ACK message).

use std::io;

use super::attr::{AttrTable, align};

pub(crate) const NLMSG_HDRLEN: usize = 16;
pub(crate) const NLMSG_NOOP: u16 = 1;
pub(crate) const NLMSG_ERROR: u16 = 2;
pub(crate) const NLMSG_DONE: u16 = 3;
pub(crate) const NLMSG_OVERRUN: u16 = 4;

pub(crate) const NLM_F_REQUEST: u16 = 0x01;
#[cfg_attr(not(test), expect(dead_code, reason = "only the unit tests use it"))]
pub(crate) const NLM_F_MULTI: u16 = 0x02;
pub(crate) const NLM_F_ACK: u16 = 0x04;
pub(crate) const NLM_F_DUMP_INTR: u16 = 0x10;
pub(crate) const NLM_F_DUMP: u16 = 0x300;
/// The header flags of every non-dump request we send (what ethtool and ip send).
pub(crate) const REQUEST_FLAGS: u16 = NLM_F_REQUEST | NLM_F_ACK;
/// In an error message: the original request's payload was left out.
const NLM_F_CAPPED: u16 = 0x100;
/// In an error message: extended-ACK attributes follow.
const NLM_F_ACK_TLVS: u16 = 0x200;

const NLMSGERR_ATTR_MSG: u16 = 1;
const NLMSGERR_ATTR_OFFS: u16 = 2;

/// The kernel refused a request (or the reply could not be understood):
/// errno plus the extended-ACK message when there was one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Nack {
    pub(crate) errno: i32,
    pub(crate) extack: Option<String>,
}

impl Nack {
    pub(crate) fn errno(errno: i32) -> Self {
        Nack {
            errno,
            extack: None,
        }
    }
    /// A reply we could not parse (errno EPROTO, our description as message).
    pub(crate) fn malformed(what: impl std::fmt::Display) -> Self {
        Nack {
            errno: libc::EPROTO,
            extack: Some(format!("malformed reply from the kernel: {what}")),
        }
    }
}

impl From<io::Error> for Nack {
    fn from(e: io::Error) -> Self {
        Nack::errno(e.raw_os_error().unwrap_or(libc::EIO))
    }
}

/// One netlink message as received.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Message {
    pub(crate) kind: u16,
    pub(crate) flags: u16,
    pub(crate) seq: u32,
    pub(crate) pid: u32,
    /// Everything after `struct nlmsghdr`.
    pub(crate) payload: Vec<u8>,
}

/// `struct nlmsghdr` followed by `payload`.
pub(crate) fn encode_message(
    kind: u16,
    flags: u16,
    seq: u32,
    payload: &[u8],
) -> Result<Vec<u8>, Nack> {
    let len =
        u32::try_from(NLMSG_HDRLEN + payload.len()).map_err(|_| Nack::errno(libc::EMSGSIZE))?;
    let mut m = Vec::with_capacity(align(len as usize));
    m.extend_from_slice(&len.to_ne_bytes());
    m.extend_from_slice(&kind.to_ne_bytes());
    m.extend_from_slice(&flags.to_ne_bytes());
    m.extend_from_slice(&seq.to_ne_bytes());
    m.extend_from_slice(&0u32.to_ne_bytes()); // pid: 0 = to the kernel
    m.extend_from_slice(payload);
    Ok(m)
}

/// Split a datagram into messages.
pub(crate) fn parse_messages(mut buf: &[u8]) -> Result<Vec<Message>, Nack> {
    let mut out = Vec::new();
    while buf.len() >= NLMSG_HDRLEN {
        let u32_at = |i: usize| u32::from_ne_bytes([buf[i], buf[i + 1], buf[i + 2], buf[i + 3]]);
        let len = u32_at(0) as usize;
        if len < NLMSG_HDRLEN || len > buf.len() {
            return Err(Nack::malformed(format!(
                "message length {len} with {} byte(s) left",
                buf.len()
            )));
        }
        out.push(Message {
            kind: u16::from_ne_bytes([buf[4], buf[5]]),
            flags: u16::from_ne_bytes([buf[6], buf[7]]),
            seq: u32_at(8),
            pid: u32_at(12),
            payload: buf[NLMSG_HDRLEN..len].to_vec(),
        });
        buf = &buf[align(len).min(buf.len())..];
    }
    if !buf.is_empty() {
        return Err(Nack::malformed(format!("{} trailing byte(s)", buf.len())));
    }
    Ok(out)
}

/// Decode an `NLMSG_ERROR` payload: `Ok(())` for an ACK (error 0).
pub(crate) fn parse_error(flags: u16, payload: &[u8]) -> Result<(), Nack> {
    if payload.len() < 4 + NLMSG_HDRLEN {
        return Err(Nack::malformed("short NLMSG_ERROR"));
    }
    let error = i32::from_ne_bytes([payload[0], payload[1], payload[2], payload[3]]);
    if error == 0 {
        return Ok(());
    }
    let mut nack = Nack::errno(error.checked_neg().unwrap_or(libc::EIO));
    if flags & NLM_F_ACK_TLVS != 0 {
        // The original request's header, and unless capped its payload, come first.
        let orig_len =
            u32::from_ne_bytes([payload[4], payload[5], payload[6], payload[7]]) as usize;
        let skip = if flags & NLM_F_CAPPED != 0 {
            4 + NLMSG_HDRLEN
        } else {
            4 + align(orig_len)
        };
        if let Some(Ok(t)) = payload.get(skip..).map(AttrTable::parse) {
            let msg = t.string(NLMSGERR_ATTR_MSG).filter(|m| !m.is_empty());
            let offs = t.u32(NLMSGERR_ATTR_OFFS).ok().flatten();
            nack.extack = match (msg, offs) {
                (Some(m), Some(o)) => Some(format!("{m} (at byte {o} of the request)")),
                (m, _) => m,
            };
        }
    }
    Err(nack)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nic::netlink::attr::Builder;

    fn error_msg(errno: i32, flags: u16, tlvs: &[u8]) -> Vec<u8> {
        let mut p = (-errno).to_ne_bytes().to_vec();
        p.extend_from_slice(&encode_message(0x15, NLM_F_REQUEST | NLM_F_ACK, 7, &[]).unwrap());
        p.extend_from_slice(tlvs);
        encode_message(NLMSG_ERROR, flags, 7, &p).unwrap()
    }

    #[test]
    fn messages_round_trip() {
        let mut buf = encode_message(20, NLM_F_MULTI, 3, &[1, 2, 3, 4, 5]).unwrap();
        buf.resize(align(buf.len()), 0);
        buf.extend_from_slice(&encode_message(NLMSG_DONE, NLM_F_MULTI, 3, &[0; 4]).unwrap());
        let msgs = parse_messages(&buf).unwrap();
        assert_eq!(msgs.len(), 2);
        assert_eq!(msgs[0].kind, 20);
        assert_eq!(msgs[0].seq, 3);
        assert_eq!(msgs[0].payload, vec![1, 2, 3, 4, 5]);
        assert_eq!(msgs[1].kind, NLMSG_DONE);
    }

    #[test]
    fn malformed_datagrams_are_errors() {
        assert!(parse_messages(&[40, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]).is_err());
        assert!(parse_messages(&[4, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]).is_err());
        assert!(parse_messages(&[1, 2, 3]).is_err());
        assert!(parse_error(0, &[0, 0]).is_err());
    }

    #[test]
    fn error_with_extended_ack() {
        let mut b = Builder::new();
        b.put_str(NLMSGERR_ATTR_MSG, "requested channel count exceeds maximum")
            .put_u32(NLMSGERR_ATTR_OFFS, 36);
        let tlvs = b.finish().unwrap();
        let m = &parse_messages(&error_msg(
            libc::EINVAL,
            NLM_F_CAPPED | NLM_F_ACK_TLVS,
            &tlvs,
        ))
        .unwrap()[0];
        let nack = parse_error(m.flags, &m.payload).unwrap_err();
        assert_eq!(nack.errno, libc::EINVAL);
        assert_eq!(
            nack.extack.as_deref(),
            Some("requested channel count exceeds maximum (at byte 36 of the request)")
        );
    }

    #[test]
    fn ack_and_plain_error() {
        let m = &parse_messages(&error_msg(0, NLM_F_CAPPED, &[])).unwrap()[0];
        assert_eq!(parse_error(m.flags, &m.payload), Ok(()));
        let m = &parse_messages(&error_msg(libc::EOPNOTSUPP, NLM_F_CAPPED, &[])).unwrap()[0];
        assert_eq!(
            parse_error(m.flags, &m.payload),
            Err(Nack::errno(libc::EOPNOTSUPP))
        );
    }
}
