//! Our own small, synchronous netlink layer: rtnetlink for MTU, txqueuelen,
//! state and stats64; ethtool generic netlink for link modes, rings, pause,
//! features, channels and coalescing (GET and SET).
//!
//! One [`Netlink`] per process holds one rtnetlink and one generic-netlink
//! socket and is reused for every request. Sockets belong to the network
//! namespace of the thread that called [`Netlink::new`].
//!
//! - [`message`]: nlmsghdr/nlmsgerr wire format, errors with extended ACK;
//! - [`socket`]: the AF_NETLINK socket: requests up to the ACK, dumps;
//! - [`attr`]: attribute encoding/decoding;
//! - [`genl`]: generic netlink header and family resolution;
//! - [`rtnl`]: RTM_GETLINK / RTM_NEWLINK;
//! - [`ethtool`]: one file per ethtool message kind.
//!
//! On kernels without the ethtool family (before 5.6) the ethtool methods of
//! [`Netlink`] answer through the SIOCETHTOOL ioctl ([`crate::nic::ioctl`])
//! with the same model types, so nothing above this layer tells them apart.

pub(crate) mod attr;
pub(crate) mod ethtool;
pub(crate) mod genl;
pub(crate) mod message;
pub(crate) mod rtnl;
pub(crate) mod socket;

#[cfg(test)]
mod fixtures;

pub(crate) mod monitor;

use std::collections::BTreeMap;

use crate::nic::ioctl;
use crate::nic::model::{
    Channels, ChannelsSet, Coalesce, CoalesceSet, Counters, Feature, LinkModes, LinkSet, Pause,
    PauseSet, Rings, RingsSet,
};
use ethtool::Ethtool;
use socket::{NETLINK_ROUTE, Nack, Socket};

/// A failed netlink request: which operation, on which interface, the kernel
/// errno, and the kernel's extended-ack message when it sent one.
///
/// A reply we could not decode has errno `EPROTO` and our description of
/// what was wrong in `extack`.
#[derive(Debug, thiserror::Error)]
#[error("{op}{}: {}",
    ifname.as_deref().map(|n| format!(" on {n}")).unwrap_or_default(),
    describe(*errno, extack.as_deref()))]
pub struct NetlinkError {
    pub op: &'static str,
    pub ifname: Option<String>,
    pub errno: i32,
    pub extack: Option<String>,
}

impl NetlinkError {
    /// The driver does not implement this operation (EOPNOTSUPP).
    pub fn is_not_supported(&self) -> bool {
        self.errno == libc::EOPNOTSUPP
    }
    /// The interface does not exist (ENODEV).
    pub fn is_no_device(&self) -> bool {
        self.errno == libc::ENODEV
    }
    /// The same error naming the interface `ifname` (rtnetlink requests
    /// address a link by index).
    pub(crate) fn on(self, ifname: &str) -> Self {
        NetlinkError {
            ifname: Some(ifname.to_string()),
            ..self
        }
    }
    pub(crate) fn from_nack(op: &'static str, ifname: Option<&str>, n: Nack) -> Self {
        NetlinkError {
            op,
            ifname: ifname.map(str::to_string),
            errno: n.errno,
            extack: n.extack,
        }
    }
}

/// The ioctl path stands in for ethtool netlink on kernels without it, so its
/// errors are reported the same way: the command, the interface, the errno.
impl From<ioctl::IoctlError> for NetlinkError {
    fn from(e: ioctl::IoctlError) -> Self {
        let ours = e.source.raw_os_error().is_none();
        NetlinkError {
            op: e.op,
            errno: e.errno(),
            extack: ours.then(|| e.source.to_string()),
            ifname: Some(e.iface),
        }
    }
}

pub(crate) type Result<T> = std::result::Result<T, NetlinkError>;

/// "Operation not supported (errno 95): the ack", or the ack alone when the
/// kernel answered success and the refusal was read back (errno 0).
fn describe(errno: i32, extack: Option<&str>) -> String {
    if errno == 0 {
        return extack.unwrap_or("refused").to_string();
    }
    let ack = extack.map(|m| format!(": {m}")).unwrap_or_default();
    format!("{} (errno {errno}){ack}", errno_text(errno))
}

/// The C library's text for `errno` ("Operation not supported").
pub(crate) fn errno_text(errno: i32) -> String {
    let mut buf = [0 as libc::c_char; 128];
    // SAFETY: the buffer is writable for its length; strerror_r (XSI) NUL-terminates.
    let r = unsafe { libc::strerror_r(errno, buf.as_mut_ptr(), buf.len()) };
    if r != 0 {
        return format!("error {errno}");
    }
    // SAFETY: strerror_r succeeded, so `buf` holds a NUL-terminated string.
    unsafe { std::ffi::CStr::from_ptr(buf.as_ptr()) }
        .to_string_lossy()
        .into_owned()
}

/// What rtnetlink says about one link (RTM_GETLINK).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RtLink {
    pub ifindex: u32,
    pub name: String,
    pub mac: Option<String>,
    pub kind: Option<String>,
    /// Has a parent bus device (IFLA_PARENT_DEV_NAME present).
    pub physical: bool,
    pub oper_state: String,
    pub admin_up: bool,
    pub carrier_changes: Option<u32>,
    pub mtu: u32,
    pub mtu_min: Option<u32>,
    pub mtu_max: Option<u32>,
    pub txqueuelen: u32,
    /// IFLA_GSO_MAX_SIZE and IFLA_TSO_MAX_SIZE (absent on old kernels).
    pub(crate) gso_max_size: Option<u32>,
    pub(crate) tso_max_size: Option<u32>,
    pub counters: Counters,
    /// Where this link sits in a bridge/bond stack (IFLA_MASTER, IFLA_LINKINFO).
    pub(crate) relations: rtnl::Relations,
}

/// The process's netlink connection (one rtnetlink and one genetlink socket).
#[derive(Debug)]
pub struct Netlink {
    rt: Socket,
    ethtool: Ethtool,
}

impl Netlink {
    /// Open both sockets (in the calling thread's network namespace) and
    /// resolve the ethtool family.
    pub fn new() -> Result<Self> {
        let ctx = |n| NetlinkError::from_nack("open netlink", None, n);
        let rt = Socket::open(NETLINK_ROUTE).map_err(|e| ctx(e.into()))?;
        let ethtool = Ethtool::open().map_err(ctx)?;
        Ok(Netlink { rt, ethtool })
    }

    /// The ethtool connection (family id and multicast groups, raw requests).
    pub fn ethtool(&mut self) -> &mut Ethtool {
        &mut self.ethtool
    }

    /// All links (RTM_GETLINK dump), in ifindex order.
    pub fn links(&mut self) -> Result<Vec<RtLink>> {
        let ctx = |n| NetlinkError::from_nack("RTM_GETLINK", None, n);
        let msgs = self
            .rt
            .dump(rtnl::RTM_GETLINK, &rtnl::encode_dump())
            .map_err(ctx)?;
        let mut links = msgs
            .iter()
            .filter(|m| m.kind == rtnl::RTM_NEWLINK)
            .map(|m| rtnl::parse_link(&m.payload))
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(ctx)?;
        links.sort_by_key(|l| l.ifindex);
        Ok(links)
    }

    /// One link by name; errno ENODEV when it does not exist.
    pub fn link(&mut self, name: &str) -> Result<RtLink> {
        let ctx = |n| NetlinkError::from_nack("RTM_GETLINK", Some(name), n);
        if name.is_empty() || name.len() > rtnl::IFNAME_MAX || name.contains(['/', '\0']) {
            return Err(ctx(Nack {
                errno: libc::ENODEV,
                extack: Some(format!(
                    "not a valid interface name (1 to {} bytes, no '/')",
                    rtnl::IFNAME_MAX
                )),
            }));
        }
        let req = rtnl::encode_get_by_name(name).map_err(ctx)?;
        let msgs = self.rt.request(rtnl::RTM_GETLINK, 0, &req).map_err(ctx)?;
        let m = msgs
            .iter()
            .find(|m| m.kind == rtnl::RTM_NEWLINK)
            .ok_or_else(|| ctx(Nack::malformed("no RTM_NEWLINK in the reply")))?;
        rtnl::parse_link(&m.payload).map_err(ctx)
    }

    fn set_link(&mut self, op: &'static str, ifindex: u32, attr: u16, value: u32) -> Result<()> {
        let req = rtnl::encode_set(ifindex, attr, value);
        self.rt
            .request(rtnl::RTM_NEWLINK, 0, &req)
            .map(drop)
            .map_err(|n| NetlinkError::from_nack(op, Some(&format!("ifindex {ifindex}")), n))
    }

    /// `ip link set dev X mtu N`.
    pub fn set_mtu(&mut self, ifindex: u32, mtu: u32) -> Result<()> {
        self.set_link("RTM_NEWLINK mtu", ifindex, rtnl::IFLA_MTU, mtu)
    }
    /// `ip link set dev X txqueuelen N`.
    pub fn set_txqueuelen(&mut self, ifindex: u32, len: u32) -> Result<()> {
        self.set_link("RTM_NEWLINK txqueuelen", ifindex, rtnl::IFLA_TXQLEN, len)
    }
    /// `ip link set dev X gso_max_size N`.
    pub(crate) fn set_gso_max_size(&mut self, ifindex: u32, size: u32) -> Result<()> {
        self.set_link(
            "RTM_NEWLINK gso_max_size",
            ifindex,
            rtnl::IFLA_GSO_MAX_SIZE,
            size,
        )
    }
    /// `ethtool X`: LINKMODES_GET + LINKINFO_GET + LINKSTATE_GET. `Ok(None)` when not supported.
    pub fn link_modes(&mut self, ifname: &str) -> Result<Option<LinkModes>> {
        if self.ethtool.via_ioctl() {
            return Ok(ioctl::link::read(ifname)?);
        }
        ethtool::linkmodes::get(&mut self.ethtool, ifname)
    }
    /// `ethtool -s X ...` (LINKMODES_SET). `advertise` makes the advertised
    /// set exactly the given modes (others supported are switched off).
    pub fn set_link_modes(&mut self, ifname: &str, set: &LinkSet) -> Result<()> {
        if self.ethtool.via_ioctl() {
            return Ok(ioctl::link::write(ifname, set)?);
        }
        ethtool::linkmodes::set(&mut self.ethtool, ifname, set)
    }
    /// `ethtool -g X` (RINGS_GET). `Ok(None)` when not supported.
    pub fn rings(&mut self, ifname: &str) -> Result<Option<Rings>> {
        if self.ethtool.via_ioctl() {
            return Ok(ioctl::rings::read(ifname)?);
        }
        ethtool::rings::get(&mut self.ethtool, ifname)
    }
    /// `ethtool -G X ...` (RINGS_SET).
    pub fn set_rings(&mut self, ifname: &str, set: &RingsSet) -> Result<()> {
        if self.ethtool.via_ioctl() {
            return Ok(ioctl::rings::write(ifname, set)?);
        }
        ethtool::rings::set(&mut self.ethtool, ifname, set)
    }
    /// `ethtool -a X` (PAUSE_GET). `Ok(None)` when not supported.
    pub fn pause(&mut self, ifname: &str) -> Result<Option<Pause>> {
        if self.ethtool.via_ioctl() {
            return Ok(ioctl::pause::read(ifname)?);
        }
        ethtool::pause::get(&mut self.ethtool, ifname)
    }
    /// `ethtool -A X ...` (PAUSE_SET).
    pub fn set_pause(&mut self, ifname: &str, set: &PauseSet) -> Result<()> {
        if self.ethtool.via_ioctl() {
            return Ok(ioctl::pause::write(ifname, set)?);
        }
        ethtool::pause::set(&mut self.ethtool, ifname, set)
    }
    /// `ethtool -k X` (FEATURES_GET). `Ok(None)` when not supported.
    pub fn features(&mut self, ifname: &str) -> Result<Option<BTreeMap<String, Feature>>> {
        if self.ethtool.via_ioctl() {
            return Ok(ioctl::features::read(ifname)?);
        }
        ethtool::features::get(&mut self.ethtool, ifname)
    }
    /// `ethtool -K X name on|off ...` (FEATURES_SET), kernel feature names.
    /// Features the driver cannot change are silently kept by the kernel: read back.
    pub fn set_features(&mut self, ifname: &str, wanted: &BTreeMap<String, bool>) -> Result<()> {
        if self.ethtool.via_ioctl() {
            return Ok(ioctl::features::write(ifname, wanted)?);
        }
        ethtool::features::set(&mut self.ethtool, ifname, wanted)
    }
    /// `ethtool -l X` (CHANNELS_GET). `Ok(None)` when not supported.
    pub fn channels(&mut self, ifname: &str) -> Result<Option<Channels>> {
        if self.ethtool.via_ioctl() {
            return Ok(ioctl::channels::read(ifname)?);
        }
        ethtool::channels::get(&mut self.ethtool, ifname)
    }
    /// `ethtool -L X ...` (CHANNELS_SET).
    pub fn set_channels(&mut self, ifname: &str, set: &ChannelsSet) -> Result<()> {
        if self.ethtool.via_ioctl() {
            return Ok(ioctl::channels::write(ifname, set)?);
        }
        ethtool::channels::set(&mut self.ethtool, ifname, set)
    }
    /// `ethtool -x X` (RSS_GET, Linux 6.2+; ETHTOOL_GRSSH before, and
    /// where netlink answers EOPNOTSUPP: a kernel without the command
    /// answers as a driver without RSS). `Ok(None)` when the driver has no RSS.
    pub fn rss(&mut self, ifname: &str) -> Result<Option<crate::cpu::layout::Rss>> {
        if !self.ethtool.via_ioctl()
            && let Some(r) = ethtool::rss::get(&mut self.ethtool, ifname)?
        {
            return Ok(Some(r));
        }
        Ok(ioctl::rss::read(ifname)?)
    }
    /// `ethtool -c X` (COALESCE_GET). `Ok(None)` when not supported.
    pub fn coalesce(&mut self, ifname: &str) -> Result<Option<Coalesce>> {
        if self.ethtool.via_ioctl() {
            return Ok(ioctl::coalesce::read(ifname)?);
        }
        ethtool::coalesce::get(&mut self.ethtool, ifname)
    }
    /// `ethtool -C X ...` (COALESCE_SET).
    pub fn set_coalesce(&mut self, ifname: &str, set: &CoalesceSet) -> Result<()> {
        if self.ethtool.via_ioctl() {
            return Ok(ioctl::coalesce::write(ifname, set)?);
        }
        ethtool::coalesce::set(&mut self.ethtool, ifname, set)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn netlink_can_move_between_threads() {
        fn send<T: Send>() {}
        send::<Netlink>();
        send::<NetlinkError>();
    }

    #[test]
    fn error_message_names_operation_interface_and_errno() {
        let e = NetlinkError::from_nack(
            "RINGS_SET",
            Some("eth0"),
            Nack {
                errno: libc::EINVAL,
                extack: Some("requested ring size exceeds maximum".into()),
            },
        );
        assert_eq!(
            e.to_string(),
            "RINGS_SET on eth0: Invalid argument (errno 22): requested ring size exceeds maximum"
        );
        assert!(!e.is_not_supported());
        let e = NetlinkError::from_nack("PAUSE_GET", None, Nack::errno(libc::EOPNOTSUPP));
        assert_eq!(
            e.to_string(),
            "PAUSE_GET: Operation not supported (errno 95)"
        );
        assert!(e.is_not_supported());
    }
}
