//! The ethtool generic-netlink family: one file per message kind, each with
//! its GET (decode) and SET (encode), plus the shared request header and
//! bitsets. [`Ethtool`] owns the socket and the resolved family id.
//!
//! Requests are encoded exactly as `/usr/sbin/ethtool` encodes them; the unit
//! tests in each file compare our bytes with requests captured from ethtool
//! (tests/fixtures/ethtool/).

pub(crate) mod bitset;
pub(crate) mod channels;
pub(crate) mod coalesce;
pub(crate) mod features;
pub(crate) mod header;
pub(crate) mod linkmodes;
pub(crate) mod pause;
pub(crate) mod rings;
pub(crate) mod rss;
pub(crate) mod strset;

use super::NetlinkError;
use super::attr::AttrError;
use super::genl::{self, Family};
use super::socket::{NETLINK_GENERIC, Nack, Socket};

/// The family's name and version (`ETHTOOL_GENL_NAME`, `ETHTOOL_GENL_VERSION`).
pub(crate) const FAMILY_NAME: &str = "ethtool";
pub(crate) const VERSION: u8 = 1;

/// Message ids, userspace → kernel (`ETHTOOL_MSG_*`).
pub(crate) mod msg {
    pub(crate) const STRSET_GET: u8 = 1;
    pub(crate) const LINKINFO_GET: u8 = 2;
    pub(crate) const LINKMODES_GET: u8 = 4;
    pub(crate) const LINKMODES_SET: u8 = 5;
    pub(crate) const LINKSTATE_GET: u8 = 6;
    pub(crate) const FEATURES_GET: u8 = 11;
    pub(crate) const FEATURES_SET: u8 = 12;
    pub(crate) const RINGS_GET: u8 = 15;
    pub(crate) const RINGS_SET: u8 = 16;
    pub(crate) const CHANNELS_GET: u8 = 17;
    pub(crate) const CHANNELS_SET: u8 = 18;
    pub(crate) const COALESCE_GET: u8 = 19;
    pub(crate) const COALESCE_SET: u8 = 20;
    pub(crate) const PAUSE_GET: u8 = 21;
    pub(crate) const PAUSE_SET: u8 = 22;
    pub(crate) const RSS_GET: u8 = 38;
}

/// The ethtool netlink connection: a generic-netlink socket and the family.
#[derive(Debug)]
pub struct Ethtool {
    sock: Socket,
    /// `None` when the kernel has no ethtool netlink family (before 5.6).
    family: Option<Family>,
    /// Global ETH_SS_FEATURES names, fetched once.
    feature_names: Option<Vec<String>>,
}

/// A test and diagnostic knob, read here only: `HLCTL_ETHTOOL_IOCTL=1` makes
/// hlctl act as on a kernel without ethtool netlink (before 5.6), sending
/// every ethtool request through the SIOCETHTOOL ioctl. The tests use it to
/// hold the ioctl path against the netlink one on kernels that have both;
/// it is not a user setting.
pub(crate) const IOCTL_KNOB: &str = "HLCTL_ETHTOOL_IOCTL";

fn ioctl_forced() -> bool {
    std::env::var_os(IOCTL_KNOB).is_some_and(|v| v == "1")
}

fn no_family() -> Nack {
    Nack {
        errno: libc::EOPNOTSUPP,
        extack: Some("this kernel has no ethtool netlink interface".into()),
    }
}

fn encode_err(e: AttrError) -> Nack {
    Nack {
        errno: libc::EINVAL,
        extack: Some(format!("cannot encode request: {e}")),
    }
}

impl Ethtool {
    /// Open the socket and resolve the family id and its multicast groups.
    /// Without the family (kernels before 5.6, or [`IOCTL_KNOB`] set) the
    /// ethtool settings go through the SIOCETHTOOL ioctl instead
    /// ([`Ethtool::via_ioctl`]).
    pub(crate) fn open() -> Result<Self, Nack> {
        let mut sock = Socket::open(NETLINK_GENERIC)?;
        let family = match genl::resolve_family(&mut sock, FAMILY_NAME) {
            _ if ioctl_forced() => None,
            Ok(f) => Some(f),
            Err(n) if n.errno == libc::ENOENT => None,
            Err(n) => return Err(n),
        };
        Ok(Ethtool {
            sock,
            family,
            feature_names: None,
        })
    }

    /// True when the kernel has no ethtool netlink family (or [`IOCTL_KNOB`]
    /// is set): link modes, rings, pause, features, channels and coalescing
    /// then go through the SIOCETHTOOL ioctl ([`crate::nic::ioctl`]).
    pub(crate) fn via_ioctl(&self) -> bool {
        self.family.is_none()
    }

    /// The resolved family (id, multicast groups such as [`MONITOR_GROUP`]).
    pub fn family(&self) -> Option<&Family> {
        self.family.as_ref()
    }

    /// Send an encoded request (genetlink header onward) and return the
    /// attribute bytes of each reply message.
    pub(crate) fn send(&mut self, request: &[u8]) -> Result<Vec<Vec<u8>>, Nack> {
        let id = self.family.as_ref().ok_or_else(no_family)?.id;
        let msgs = self.sock.request(id, 0, request)?;
        msgs.iter()
            .map(|m| genl::split(&m.payload).map(|(_, a)| a.to_vec()))
            .collect()
    }

    /// A GET for one device, decoded by `parse`. `Ok(None)` when the driver
    /// does not support it (EOPNOTSUPP).
    pub(crate) fn get<T>(
        &mut self,
        cmd: u8,
        op: &'static str,
        ifname: &str,
        flags: u32,
        parse: impl FnOnce(&[u8]) -> Result<T, AttrError>,
    ) -> Result<Option<T>, NetlinkError> {
        let ctx = |n: Nack| NetlinkError::from_nack(op, Some(ifname), n);
        let req = header::request(cmd, ifname, flags)
            .finish()
            .map_err(|e| ctx(encode_err(e)))?;
        let replies = match self.send(&req) {
            Ok(r) => r,
            Err(n) if n.errno == libc::EOPNOTSUPP => return Ok(None),
            Err(n) => return Err(ctx(n)),
        };
        let attrs = replies
            .first()
            .ok_or_else(|| ctx(Nack::malformed("no reply message")))?;
        parse(attrs).map(Some).map_err(|e| ctx(Nack::malformed(e)))
    }

    /// Send an encoded SET request; returns the attribute bytes of any reply
    /// messages (only FEATURES_SET sends one).
    pub(crate) fn set(
        &mut self,
        op: &'static str,
        ifname: &str,
        request: Result<Vec<u8>, AttrError>,
    ) -> Result<Vec<Vec<u8>>, NetlinkError> {
        let ctx = |n: Nack| NetlinkError::from_nack(op, Some(ifname), n);
        let req = request.map_err(|e| ctx(encode_err(e)))?;
        self.send(&req).map_err(ctx)
    }

    /// The kernel's feature names by bit index (ETH_SS_FEATURES), cached.
    pub(crate) fn feature_names(&mut self) -> Result<Vec<String>, NetlinkError> {
        if let Some(n) = &self.feature_names {
            return Ok(n.clone());
        }
        let ctx = |n: Nack| NetlinkError::from_nack("STRSET_GET", None, n);
        let req =
            strset::encode_get_global(strset::ETH_SS_FEATURES).map_err(|e| ctx(encode_err(e)))?;
        let replies = self.send(&req).map_err(ctx)?;
        let attrs = replies
            .first()
            .ok_or_else(|| ctx(Nack::malformed("no reply message")))?;
        let names =
            strset::parse(attrs, strset::ETH_SS_FEATURES).map_err(|e| ctx(Nack::malformed(e)))?;
        self.feature_names = Some(names.clone());
        Ok(names)
    }
}
