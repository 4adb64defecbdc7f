//! Netlink attributes: the type-length-value records every netlink payload
//! is made of (`struct nlattr`: u16 length, u16 type, payload padded to 4 bytes).
//!
//! [`Builder`] encodes them (nested attributes get `NLA_F_NESTED`, padding is
//! zeroed); [`Attrs`] decodes them and never panics: malformed input gives an
//! [`AttrError`].

/// Set on the type of an attribute whose payload is itself attributes.
pub(crate) const NLA_F_NESTED: u16 = 1 << 15;
/// Set on the type of an attribute whose payload is in network byte order.
pub(crate) const NLA_F_NET_BYTEORDER: u16 = 1 << 14;
/// The bits of `nla_type` that are the type proper.
pub(crate) const NLA_TYPE_MASK: u16 = !(NLA_F_NESTED | NLA_F_NET_BYTEORDER);
/// Size of `struct nlattr`.
pub(crate) const NLA_HDRLEN: usize = 4;

/// Round `len` up to netlink's 4-byte alignment.
pub(crate) const fn align(len: usize) -> usize {
    (len + 3) & !3
}

/// Why attribute bytes could not be encoded or decoded.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum AttrError {
    #[error("attribute header truncated: {left} byte(s) left")]
    TruncatedHeader { left: usize },
    #[error("attribute type {kind} claims length {len}, but {left} byte(s) are left")]
    BadLength { kind: u16, len: usize, left: usize },
    #[error("attribute type {kind}: expected a {expected}-byte payload, got {got}")]
    BadPayload {
        kind: u16,
        expected: usize,
        got: usize,
    },
    #[error("attribute type {kind} is missing")]
    Missing { kind: u16 },
    #[error("attribute payload of {len} bytes does not fit in a netlink attribute")]
    TooLong { len: usize },
    #[error("{0}")]
    Invalid(String),
}

/// One decoded attribute, borrowing its payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Attr<'a> {
    /// The type without the `NLA_F_*` flag bits.
    pub(crate) kind: u16,
    /// `NLA_F_NESTED` was set.
    pub(crate) nested: bool,
    pub(crate) payload: &'a [u8],
}

impl<'a> Attr<'a> {
    fn exact<const N: usize>(&self) -> Result<[u8; N], AttrError> {
        self.payload.try_into().map_err(|_| AttrError::BadPayload {
            kind: self.kind,
            expected: N,
            got: self.payload.len(),
        })
    }
    pub(crate) fn u8(&self) -> Result<u8, AttrError> {
        Ok(self.exact::<1>()?[0])
    }
    pub(crate) fn u16(&self) -> Result<u16, AttrError> {
        Ok(u16::from_ne_bytes(self.exact()?))
    }
    pub(crate) fn u32(&self) -> Result<u32, AttrError> {
        Ok(u32::from_ne_bytes(self.exact()?))
    }
    pub(crate) fn u64(&self) -> Result<u64, AttrError> {
        Ok(u64::from_ne_bytes(self.exact()?))
    }
    /// A NUL-terminated string (the terminator and anything after it are dropped;
    /// invalid UTF-8 is replaced, never an error).
    pub(crate) fn string(&self) -> String {
        let end = self
            .payload
            .iter()
            .position(|&b| b == 0)
            .unwrap_or(self.payload.len());
        String::from_utf8_lossy(&self.payload[..end]).into_owned()
    }
    /// The payload read as attributes.
    pub(crate) fn nested(&self) -> Attrs<'a> {
        Attrs::new(self.payload)
    }
}

/// An iterator over the attributes in a buffer. After the first error it yields
/// that error and then stops.
#[derive(Clone, Debug)]
pub(crate) struct Attrs<'a> {
    buf: &'a [u8],
    failed: bool,
}

impl<'a> Attrs<'a> {
    pub(crate) fn new(buf: &'a [u8]) -> Self {
        Attrs { buf, failed: false }
    }
}

impl<'a> Iterator for Attrs<'a> {
    type Item = Result<Attr<'a>, AttrError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.buf.is_empty() {
            return None;
        }
        let left = self.buf.len();
        if left < NLA_HDRLEN {
            self.failed = true;
            return Some(Err(AttrError::TruncatedHeader { left }));
        }
        let len = u16::from_ne_bytes([self.buf[0], self.buf[1]]) as usize;
        let raw_kind = u16::from_ne_bytes([self.buf[2], self.buf[3]]);
        let kind = raw_kind & NLA_TYPE_MASK;
        if len < NLA_HDRLEN || len > left {
            self.failed = true;
            return Some(Err(AttrError::BadLength { kind, len, left }));
        }
        let attr = Attr {
            kind,
            nested: raw_kind & NLA_F_NESTED != 0,
            payload: &self.buf[NLA_HDRLEN..len],
        };
        // The last attribute may omit its padding.
        self.buf = &self.buf[align(len).min(left)..];
        Some(Ok(attr))
    }
}

/// All attributes of one level, looked up by type (the last of a repeated type wins).
#[derive(Clone, Debug, Default)]
pub(crate) struct AttrTable<'a> {
    attrs: Vec<Attr<'a>>,
}

impl<'a> AttrTable<'a> {
    pub(crate) fn parse(buf: &'a [u8]) -> Result<Self, AttrError> {
        Ok(AttrTable {
            attrs: Attrs::new(buf).collect::<Result<_, _>>()?,
        })
    }
    pub(crate) fn get(&self, kind: u16) -> Option<Attr<'a>> {
        self.attrs.iter().rev().find(|a| a.kind == kind).copied()
    }
    pub(crate) fn require(&self, kind: u16) -> Result<Attr<'a>, AttrError> {
        self.get(kind).ok_or(AttrError::Missing { kind })
    }
    pub(crate) fn has(&self, kind: u16) -> bool {
        self.get(kind).is_some()
    }
    pub(crate) fn u8(&self, kind: u16) -> Result<Option<u8>, AttrError> {
        self.get(kind).map(|a| a.u8()).transpose()
    }
    pub(crate) fn u32(&self, kind: u16) -> Result<Option<u32>, AttrError> {
        self.get(kind).map(|a| a.u32()).transpose()
    }
    #[cfg_attr(not(test), expect(dead_code, reason = "only the unit tests use it"))]
    pub(crate) fn u64(&self, kind: u16) -> Result<Option<u64>, AttrError> {
        self.get(kind).map(|a| a.u64()).transpose()
    }
    /// A u8 used as a boolean (any non-zero value is true).
    pub(crate) fn bool(&self, kind: u16) -> Result<Option<bool>, AttrError> {
        Ok(self.u8(kind)?.map(|v| v != 0))
    }
    pub(crate) fn string(&self, kind: u16) -> Option<String> {
        self.get(kind).map(|a| a.string())
    }
}

/// Encodes attributes into a byte buffer (which may already hold a fixed
/// header, e.g. the genetlink header, as long as its length is a multiple of 4).
///
/// Errors are sticky: the first one is returned by [`Builder::finish`].
#[derive(Debug, Default)]
pub(crate) struct Builder {
    buf: Vec<u8>,
    error: Option<AttrError>,
}

/// Where an open nested attribute starts; close it with [`Builder::end_nested`].
#[must_use]
pub(crate) struct Nest(usize);

impl Builder {
    #[cfg_attr(not(test), expect(dead_code, reason = "only the unit tests use it"))]
    pub(crate) fn new() -> Self {
        Self::default()
    }
    /// Continue after `head` (a fixed header); it is padded to 4 bytes.
    pub(crate) fn with_header(head: &[u8]) -> Self {
        let mut buf = head.to_vec();
        buf.resize(align(buf.len()), 0);
        Builder { buf, error: None }
    }

    fn header(&mut self, kind: u16, len: usize) {
        match u16::try_from(NLA_HDRLEN + len) {
            Ok(total) => {
                self.buf.extend_from_slice(&total.to_ne_bytes());
                self.buf.extend_from_slice(&kind.to_ne_bytes());
            }
            Err(_) => {
                self.error.get_or_insert(AttrError::TooLong { len });
                // Keep the layout consistent so later code does not misbehave.
                self.buf.extend_from_slice(&0u16.to_ne_bytes());
                self.buf.extend_from_slice(&kind.to_ne_bytes());
            }
        }
    }
    fn pad(&mut self) {
        self.buf.resize(align(self.buf.len()), 0);
    }

    /// An attribute with a raw payload.
    pub(crate) fn put(&mut self, kind: u16, payload: &[u8]) -> &mut Self {
        self.header(kind & NLA_TYPE_MASK, payload.len());
        self.buf.extend_from_slice(payload);
        self.pad();
        self
    }
    pub(crate) fn put_u8(&mut self, kind: u16, v: u8) -> &mut Self {
        self.put(kind, &[v])
    }
    #[cfg_attr(not(test), expect(dead_code, reason = "only the unit tests use it"))]
    pub(crate) fn put_u16(&mut self, kind: u16, v: u16) -> &mut Self {
        self.put(kind, &v.to_ne_bytes())
    }
    pub(crate) fn put_u32(&mut self, kind: u16, v: u32) -> &mut Self {
        self.put(kind, &v.to_ne_bytes())
    }
    #[cfg_attr(not(test), expect(dead_code, reason = "only the unit tests use it"))]
    pub(crate) fn put_u64(&mut self, kind: u16, v: u64) -> &mut Self {
        self.put(kind, &v.to_ne_bytes())
    }
    pub(crate) fn put_bool(&mut self, kind: u16, v: bool) -> &mut Self {
        self.put_u8(kind, u8::from(v))
    }
    /// A NUL-terminated string. A string containing NUL is an error.
    pub(crate) fn put_str(&mut self, kind: u16, s: &str) -> &mut Self {
        if s.as_bytes().contains(&0) {
            self.error
                .get_or_insert(AttrError::Invalid(format!("string {s:?} contains NUL")));
        }
        let mut v = Vec::with_capacity(s.len() + 1);
        v.extend_from_slice(s.as_bytes());
        v.push(0);
        self.put(kind, &v)
    }
    /// A flag: an attribute with no payload, true by its presence.
    pub(crate) fn put_flag(&mut self, kind: u16) -> &mut Self {
        self.put(kind, &[])
    }

    /// Open a nested attribute (`NLA_F_NESTED` is set, as ethtool does).
    pub(crate) fn begin_nested(&mut self, kind: u16) -> Nest {
        let at = self.buf.len();
        self.buf.extend_from_slice(&0u16.to_ne_bytes());
        self.buf
            .extend_from_slice(&((kind & NLA_TYPE_MASK) | NLA_F_NESTED).to_ne_bytes());
        Nest(at)
    }
    /// Close a nested attribute: write its final length.
    pub(crate) fn end_nested(&mut self, nest: Nest) -> &mut Self {
        let len = self.buf.len() - nest.0;
        match u16::try_from(len) {
            Ok(l) => self.buf[nest.0..nest.0 + 2].copy_from_slice(&l.to_ne_bytes()),
            Err(_) => {
                self.error.get_or_insert(AttrError::TooLong { len });
            }
        }
        self
    }
    /// A nested attribute whose content `f` writes.
    pub(crate) fn nested(&mut self, kind: u16, f: impl FnOnce(&mut Builder)) -> &mut Self {
        let n = self.begin_nested(kind);
        f(self);
        self.end_nested(n)
    }

    pub(crate) fn finish(self) -> Result<Vec<u8>, AttrError> {
        match self.error {
            Some(e) => Err(e),
            None => Ok(self.buf),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalars_round_trip_with_padding() {
        let mut b = Builder::new();
        b.put_u8(1, 7)
            .put_u16(2, 0xbeef)
            .put_u32(3, 0xdead_beef)
            .put_u64(4, u64::MAX - 5)
            .put_str(5, "veth0")
            .put_flag(6)
            .put_bool(7, true);
        let bytes = b.finish().unwrap();
        assert_eq!(bytes.len() % 4, 0);
        // u8: 4-byte header + 1 byte + 3 zero padding bytes.
        assert_eq!(&bytes[..8], &[5, 0, 1, 0, 7, 0, 0, 0]);
        let t = AttrTable::parse(&bytes).unwrap();
        assert_eq!(t.u8(1).unwrap(), Some(7));
        assert_eq!(t.get(2).unwrap().u16().unwrap(), 0xbeef);
        assert_eq!(t.u32(3).unwrap(), Some(0xdead_beef));
        assert_eq!(t.u64(4).unwrap(), Some(u64::MAX - 5));
        assert_eq!(t.string(5).as_deref(), Some("veth0"));
        assert!(t.has(6) && t.get(6).unwrap().payload.is_empty());
        assert_eq!(t.bool(7).unwrap(), Some(true));
        assert_eq!(t.u32(99).unwrap(), None);
    }

    #[test]
    fn nested_round_trip() {
        let mut b = Builder::with_header(&[9, 1, 0, 0]);
        b.nested(1, |b| {
            b.put_str(2, "eth0");
            b.nested(3, |b| {
                b.put_u32(1, 42);
            });
        });
        b.put_u32(4, 1);
        let bytes = b.finish().unwrap();
        assert_eq!(&bytes[..4], &[9, 1, 0, 0]);
        let t = AttrTable::parse(&bytes[4..]).unwrap();
        let outer = t.get(1).unwrap();
        assert!(outer.nested);
        // Raw type carries NLA_F_NESTED.
        assert_eq!(u16::from_ne_bytes([bytes[6], bytes[7]]), 1 | NLA_F_NESTED);
        let inner = AttrTable::parse(outer.payload).unwrap();
        assert_eq!(inner.string(2).as_deref(), Some("eth0"));
        let deeper = AttrTable::parse(inner.get(3).unwrap().payload).unwrap();
        assert_eq!(deeper.u32(1).unwrap(), Some(42));
        assert_eq!(t.u32(4).unwrap(), Some(1));
        assert_eq!(outer.payload.len() + NLA_HDRLEN, 4 + 12 + 4 + 8);
    }

    #[test]
    fn malformed_input_is_an_error_not_a_panic() {
        // Header cut short.
        assert_eq!(
            Attrs::new(&[8, 0, 1]).next(),
            Some(Err(AttrError::TruncatedHeader { left: 3 }))
        );
        // Length beyond the buffer.
        assert!(matches!(
            AttrTable::parse(&[12, 0, 1, 0, 0, 0, 0, 0]),
            Err(AttrError::BadLength { len: 12, .. })
        ));
        // Length below the header size.
        assert!(AttrTable::parse(&[2, 0, 1, 0]).is_err());
        // Wrong payload size for the type asked for.
        let t = AttrTable::parse(&[5, 0, 1, 0, 7, 0, 0, 0]).unwrap();
        assert!(matches!(
            t.u32(1),
            Err(AttrError::BadPayload {
                expected: 4,
                got: 1,
                ..
            })
        ));
        // Iteration stops after the first error.
        let mut it = Attrs::new(&[1, 0, 0, 0, 8, 0, 1, 0]);
        assert!(it.next().unwrap().is_err());
        assert!(it.next().is_none());
        // Every prefix of a valid buffer decodes or errors, never panics.
        let mut b = Builder::new();
        b.nested(1, |b| {
            b.put_str(2, "abc").put_u64(3, 1);
        });
        let bytes = b.finish().unwrap();
        for n in 0..bytes.len() {
            let _ = AttrTable::parse(&bytes[..n]).map(|t| t.get(1).map(|a| a.nested().count()));
        }
    }

    #[test]
    fn missing_last_padding_is_accepted() {
        // A final u8 attribute without its 3 padding bytes.
        let t = AttrTable::parse(&[5, 0, 2, 0, 1]).unwrap();
        assert_eq!(t.u8(2).unwrap(), Some(1));
    }

    #[test]
    fn encoding_errors_are_reported() {
        let mut b = Builder::new();
        b.put_str(1, "a\0b");
        assert!(b.finish().is_err());
        let mut b = Builder::new();
        b.put(1, &vec![0u8; 70_000]);
        assert!(matches!(b.finish(), Err(AttrError::TooLong { .. })));
    }

    #[test]
    fn string_without_terminator_and_bad_utf8() {
        let t = AttrTable::parse(&[7, 0, 1, 0, b'a', 0xff, b'c', 0]).unwrap();
        assert_eq!(t.string(1).unwrap(), "a\u{fffd}c");
    }
}
