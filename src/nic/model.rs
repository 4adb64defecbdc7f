//! What a NIC's settings are: the one definition shared by `show`, `--json`,
//! the change engine, persisted state and (later) D-Bus properties.
//!
//! A section the driver does not support is `None` (JSON `null`), never an error.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Everything `hlctl show` knows about one interface.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Interface {
    pub(crate) name: String,
    pub(crate) ifindex: u32,
    /// Hardware address, `aa:bb:cc:dd:ee:ff`.
    pub(crate) mac: Option<String>,
    /// rtnetlink link kind (`veth`, `tun`, `bridge`, ...); `None` for plain physical NICs.
    pub(crate) kind: Option<String>,
    /// True when the device has a parent bus device (PCI, USB, virtio...): a real NIC.
    pub(crate) physical: bool,
    /// `ethtool -i` data (SIOCETHTOOL ETHTOOL_GDRVINFO).
    pub(crate) driver: Option<String>,
    pub(crate) driver_version: Option<String>,
    pub(crate) firmware_version: Option<String>,
    pub(crate) bus_info: Option<String>,
    /// RFC 2863 operational state as the kernel names it (`up`, `down`, `lowerlayerdown`...).
    pub(crate) oper_state: String,
    /// Administratively up (IFF_UP).
    pub(crate) admin_up: bool,
    pub(crate) carrier_changes: Option<u32>,
    pub(crate) mtu: u32,
    pub(crate) mtu_min: Option<u32>,
    pub(crate) mtu_max: Option<u32>,
    pub(crate) txqueuelen: u32,
    /// Largest GSO packet the stack builds for this device (IFLA_GSO_MAX_SIZE).
    #[serde(default)]
    pub(crate) gso_max_size: Option<u32>,
    /// The most the device takes for `gso_max_size` (IFLA_TSO_MAX_SIZE, read-only).
    #[serde(default)]
    pub(crate) tso_max_size: Option<u32>,
    pub(crate) link: Option<LinkModes>,
    pub(crate) rings: Option<Rings>,
    pub(crate) pause: Option<Pause>,
    /// Every feature by kernel name (`rx-gro`, `tx-tcp-segmentation`, ...).
    pub(crate) features: Option<BTreeMap<String, Feature>>,
    pub(crate) channels: Option<Channels>,
    pub(crate) coalesce: Option<Coalesce>,
    /// Receive Packet Steering of the receive queues ([`crate::nic::rps`]);
    /// `None` where the kernel has none (no `queues/rx-N/rps_cpus`).
    #[serde(default)]
    pub(crate) rps: Option<Rps>,
    /// Transmit Packet Steering of the transmit queues ([`crate::nic::xps`]);
    /// `None` on a device with one transmit queue (XPS has no effect there).
    #[serde(default)]
    pub(crate) xps: Option<Xps>,
    /// The CPUs each queue vector may interrupt ([`crate::nic::irq_affinity`]);
    /// `None` for a device with fewer than two queue vectors.
    #[serde(default)]
    pub(crate) irq_affinity: Option<IrqAffinity>,
    pub(crate) counters: Counters,
    /// The driver's private statistics (`ethtool -S`).
    pub(crate) driver_stats: Option<BTreeMap<String, u64>>,
    /// The bridge/bond stack this interface belongs to (as upper or port).
    #[serde(default)]
    pub(crate) stack: Option<crate::nic::stack::Stack>,
    /// The network managers that set this link's settings from their own
    /// configuration ([`crate::nic::owner`]); filled in by `show`.
    #[serde(default)]
    pub(crate) owners: Vec<crate::nic::managers::Owner>,
    /// Persisted settings hlctld stopped re-applying because a network
    /// manager sets them back, each with who sets it (hlctld only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) conflicts: Vec<String>,
    /// RPS/XPS per queue, the queue vectors' IRQs and their affinity, NUMA
    /// node, physical cores and irqbalance ([`crate::cpu::layout`]); filled
    /// in by `show` (the channels and their maxima are `channels`).
    #[serde(default)]
    pub(crate) queues: Option<crate::cpu::layout::QueueLayout>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Duplex {
    Half,
    Full,
}

impl std::fmt::Display for Duplex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Duplex::Half => "half",
            Duplex::Full => "full",
        })
    }
}

/// Link settings (ethtool LINKMODES + LINKINFO + LINKSTATE).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LinkModes {
    /// Current speed in Mb/s; `None` when unknown (no link).
    pub speed_mbps: Option<u32>,
    pub duplex: Option<Duplex>,
    pub autoneg: bool,
    /// Connector (`TP`, `FIBRE`, `DA`, `Other`...).
    pub port: Option<String>,
    pub(crate) lanes: Option<u32>,
    /// Link modes by ethtool's names (`1000baseT/Full`).
    pub supported_modes: Vec<String>,
    pub advertised_modes: Vec<String>,
    pub(crate) partner_modes: Vec<String>,
    /// The other bits of the supported set: `Autoneg`, ports (`TP`, `FIBRE`),
    /// `Pause`, `Asym_Pause` (what `ethtool` prints as "Supported ports",
    /// "Supports auto-negotiation" and "Supported pause frame use").
    #[serde(default)]
    pub(crate) capabilities: Vec<String>,
    /// Link detected (carrier), from LINKSTATE.
    pub detected: Option<bool>,
}

/// Ring buffer sizes and their pre-set maxima (`ethtool -g`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rings {
    pub(crate) rx: Option<u32>,
    pub(crate) tx: Option<u32>,
    pub(crate) rx_mini: Option<u32>,
    pub(crate) rx_jumbo: Option<u32>,
    pub(crate) rx_max: Option<u32>,
    pub(crate) tx_max: Option<u32>,
    pub(crate) rx_mini_max: Option<u32>,
    pub(crate) rx_jumbo_max: Option<u32>,
}

/// Flow control (`ethtool -a`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pause {
    pub(crate) autoneg: bool,
    pub(crate) rx: bool,
    pub(crate) tx: bool,
}

/// One offload feature (`ethtool -k`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Feature {
    pub active: bool,
    pub requested: bool,
    /// The driver does not let this feature change (`[fixed]`).
    pub fixed: bool,
}

/// Queue counts (`ethtool -l`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Channels {
    pub rx: Option<u32>,
    pub tx: Option<u32>,
    pub other: Option<u32>,
    pub combined: Option<u32>,
    pub rx_max: Option<u32>,
    pub tx_max: Option<u32>,
    pub other_max: Option<u32>,
    pub combined_max: Option<u32>,
}

/// Interrupt coalescing (`ethtool -c`); a field the driver does not report is `None`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Coalesce {
    pub(crate) rx_usecs: Option<u32>,
    pub(crate) tx_usecs: Option<u32>,
    pub(crate) rx_frames: Option<u32>,
    pub(crate) tx_frames: Option<u32>,
    pub(crate) adaptive_rx: Option<bool>,
    pub(crate) adaptive_tx: Option<bool>,
}

/// Interface counters (rtnetlink IFLA_STATS64).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counters {
    pub rx_packets: u64,
    pub tx_packets: u64,
    pub rx_bytes: u64,
    pub tx_bytes: u64,
    pub rx_errors: u64,
    pub tx_errors: u64,
    pub rx_dropped: u64,
    pub tx_dropped: u64,
    pub(crate) rx_crc_errors: u64,
    pub(crate) rx_frame_errors: u64,
    pub(crate) rx_missed_errors: u64,
    pub(crate) rx_fifo_errors: u64,
    pub rx_over_errors: u64,
    pub(crate) tx_fifo_errors: u64,
    pub tx_carrier_errors: u64,
    pub collisions: u64,
}

/// Requested ring sizes; `None` leaves a value as it is.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RingsSet {
    pub rx: Option<u32>,
    pub tx: Option<u32>,
    pub rx_mini: Option<u32>,
    pub rx_jumbo: Option<u32>,
}

/// Requested flow-control settings; `None` leaves a value as it is.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PauseSet {
    pub autoneg: Option<bool>,
    pub rx: Option<bool>,
    pub tx: Option<bool>,
}

/// Requested link settings (`ethtool -s`); `None` leaves a value as it is.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinkSet {
    pub speed_mbps: Option<u32>,
    pub duplex: Option<Duplex>,
    pub autoneg: Option<bool>,
    /// Link modes to advertise, by ethtool name (`1000baseT/Full`).
    pub advertise: Option<Vec<String>>,
}

/// Requested queue counts; `None` leaves a value as it is.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChannelsSet {
    pub rx: Option<u32>,
    pub tx: Option<u32>,
    pub other: Option<u32>,
    pub combined: Option<u32>,
}

/// Receive Packet Steering as the device's receive queues hold it (rx-0's
/// files; hlctl writes the same values to every receive queue).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rps {
    /// The CPUs its packets' protocol work may be handed to, as a CPU list
    /// (`0-3`; `none`: RPS off, the receiving CPU does it).
    pub cpus: String,
    /// RFS flow table entries of the queue (`rps_flow_cnt`).
    pub flow_cnt: Option<u32>,
}

/// Transmit Packet Steering as the device's transmit queues hold it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Xps {
    /// Per transmit queue, the CPUs whose sends use it, as a per-queue map
    /// (`0/1`; `none`: XPS off, the flow's hash picks the queue;
    /// [`crate::cpu::cpulist::parse_map`]).
    pub cpus: String,
    /// The transmit queues.
    pub queues: u32,
}

/// Requested XPS; `None` leaves it as it is.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct XpsSet {
    /// A canonical per-queue map, one CPU list per transmit queue, or `none`.
    pub cpus: Option<String>,
}

/// The interrupt affinity of the device's queue vectors.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IrqAffinity {
    /// Per queue vector (in IRQ order), the CPUs it may interrupt, as a
    /// per-queue map (`0/1/0/1`).
    pub cpus: String,
    /// The queue vectors.
    pub vectors: u32,
}

/// Requested interrupt affinity; `None` leaves it as it is.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IrqAffinitySet {
    /// A canonical per-queue map, one CPU list per queue vector.
    pub cpus: Option<String>,
}

/// Requested RPS; `None` leaves a value as it is.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RpsSet {
    /// A canonical CPU list ([`crate::cpu::cpulist`]).
    pub cpus: Option<String>,
    pub flow_cnt: Option<u32>,
}

/// Requested coalescing; `None` leaves a value as it is.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CoalesceSet {
    pub rx_usecs: Option<u32>,
    pub tx_usecs: Option<u32>,
    pub rx_frames: Option<u32>,
    pub tx_frames: Option<u32>,
    pub adaptive_rx: Option<bool>,
    pub adaptive_tx: Option<bool>,
}

/// A set of requested changes to one interface: what `hlctl set` parses, what
/// is persisted and re-applied, and what the daemon's `ApplyChanges` takes.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ChangeSet {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) mtu: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) txqueuelen: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) gso_max_size: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) rings: Option<RingsSet>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) pause: Option<PauseSet>,
    /// Feature name (kernel name, or ethtool short name before validation) → on/off.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) features: BTreeMap<String, bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) link: Option<LinkSet>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) channels: Option<ChannelsSet>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) coalesce: Option<CoalesceSet>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) rps: Option<RpsSet>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) xps: Option<XpsSet>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) irq_affinity: Option<IrqAffinitySet>,
}

/// Speed (Mb/s) and duplex of a link mode name such as `1000baseT/Full`.
pub(crate) fn mode_speed_duplex(mode: &str) -> Option<(u32, &str)> {
    let (speed, rest) = mode.split_once("base")?;
    let duplex = rest.rsplit_once('/').map(|(_, d)| d).unwrap_or("Full");
    Some((speed.parse().ok()?, duplex))
}

/// The connector as ethtool abbreviates it (`PORT_*`).
pub(crate) fn port_name(port: u8) -> String {
    match port {
        0x00 => "TP",
        0x01 => "AUI",
        0x02 => "BNC",
        0x03 => "MII",
        0x04 => "FIBRE",
        0x05 => "DA",
        0xef => "None",
        0xff => "Other",
        _ => return format!("port{port}"),
    }
    .to_string()
}
