//! Our own small, synchronous netlink layer: rtnetlink for MTU, txqueuelen,
//! state and stats64; ethtool generic netlink for link modes, rings, pause,
//! features, channels and coalescing (GET and SET).
//!
//! One [`Netlink`] per process holds one rtnetlink and one generic-netlink
//! socket and is reused for every request.

pub mod monitor;

use std::collections::BTreeMap;

use crate::nic::model::{
    Channels, ChannelsSet, Coalesce, CoalesceSet, Counters, Feature, LinkModes, LinkSet, Pause,
    PauseSet, Rings, RingsSet,
};

/// A failed netlink request: which operation, the kernel errno, and the
/// kernel's extended-ack message when it sent one.
#[derive(Debug, thiserror::Error)]
#[error("{op}: {} (errno {errno}){}", std::io::Error::from_raw_os_error(*errno), extack.as_deref().map(|m| format!(": {m}")).unwrap_or_default())]
pub struct NetlinkError {
    pub op: &'static str,
    pub errno: i32,
    pub extack: Option<String>,
}

impl NetlinkError {
    /// The driver does not implement this operation (EOPNOTSUPP).
    pub fn is_not_supported(&self) -> bool {
        self.errno == libc::EOPNOTSUPP
    }
}

pub type Result<T> = std::result::Result<T, NetlinkError>;

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
    pub counters: Counters,
}

/// The process's netlink connection (one rtnetlink and one genetlink socket).
pub struct Netlink {
    _private: (),
}

impl Netlink {
    pub fn new() -> Result<Self> {
        todo!()
    }
    /// All links (RTM_GETLINK dump), in ifindex order.
    pub fn links(&mut self) -> Result<Vec<RtLink>> {
        todo!()
    }
    /// One link by name; errno ENODEV when it does not exist.
    pub fn link(&mut self, _name: &str) -> Result<RtLink> {
        todo!()
    }
    /// `ip link set dev X mtu N`.
    pub fn set_mtu(&mut self, _ifindex: u32, _mtu: u32) -> Result<()> {
        todo!()
    }
    /// `ip link set dev X txqueuelen N`.
    pub fn set_txqueuelen(&mut self, _ifindex: u32, _len: u32) -> Result<()> {
        todo!()
    }
    /// `ethtool X`: LINKMODES_GET + LINKINFO_GET + LINKSTATE_GET. `Ok(None)` when not supported.
    pub fn link_modes(&mut self, _ifname: &str) -> Result<Option<LinkModes>> {
        todo!()
    }
    /// `ethtool -s X ...` (LINKMODES_SET).
    pub fn set_link_modes(&mut self, _ifname: &str, _set: &LinkSet) -> Result<()> {
        todo!()
    }
    /// `ethtool -g X` (RINGS_GET). `Ok(None)` when not supported.
    pub fn rings(&mut self, _ifname: &str) -> Result<Option<Rings>> {
        todo!()
    }
    /// `ethtool -G X ...` (RINGS_SET).
    pub fn set_rings(&mut self, _ifname: &str, _set: &RingsSet) -> Result<()> {
        todo!()
    }
    /// `ethtool -a X` (PAUSE_GET). `Ok(None)` when not supported.
    pub fn pause(&mut self, _ifname: &str) -> Result<Option<Pause>> {
        todo!()
    }
    /// `ethtool -A X ...` (PAUSE_SET).
    pub fn set_pause(&mut self, _ifname: &str, _set: &PauseSet) -> Result<()> {
        todo!()
    }
    /// `ethtool -k X` (FEATURES_GET). `Ok(None)` when not supported.
    pub fn features(&mut self, _ifname: &str) -> Result<Option<BTreeMap<String, Feature>>> {
        todo!()
    }
    /// `ethtool -K X name on|off ...` (FEATURES_SET), kernel feature names.
    pub fn set_features(&mut self, _ifname: &str, _wanted: &BTreeMap<String, bool>) -> Result<()> {
        todo!()
    }
    /// `ethtool -l X` (CHANNELS_GET). `Ok(None)` when not supported.
    pub fn channels(&mut self, _ifname: &str) -> Result<Option<Channels>> {
        todo!()
    }
    /// `ethtool -L X ...` (CHANNELS_SET).
    pub fn set_channels(&mut self, _ifname: &str, _set: &ChannelsSet) -> Result<()> {
        todo!()
    }
    /// `ethtool -c X` (COALESCE_GET). `Ok(None)` when not supported.
    pub fn coalesce(&mut self, _ifname: &str) -> Result<Option<Coalesce>> {
        todo!()
    }
    /// `ethtool -C X ...` (COALESCE_SET).
    pub fn set_coalesce(&mut self, _ifname: &str, _set: &CoalesceSet) -> Result<()> {
        todo!()
    }
}
