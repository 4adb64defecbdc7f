//! Everything the checks read, gathered first so that every check is a pure
//! function of data (and testable with data written by hand).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::nic::model::Interface;
use crate::path::Peer;
use crate::path::pmtu::PathMtu;
use crate::path::throughput::Series;
use crate::protocol::Beside;
use crate::protocol::fleet::HostFigures;

/// Two snapshots of one interface, `interval_s` apart (counters are compared).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct IfaceSample {
    pub(crate) first: Interface,
    pub(crate) second: Option<Interface>,
    pub(crate) interval_s: f64,
}

impl IfaceSample {
    /// The latest snapshot.
    pub(crate) fn now(&self) -> &Interface {
        self.second.as_ref().unwrap_or(&self.first)
    }
    pub(crate) fn name(&self) -> &str {
        &self.first.name
    }
}

/// How the round-trip time to the peer was measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Rtt {
    pub(crate) ms: f64,
    /// `tcp handshake to HOST:PORT` or `icmp echo`.
    pub(crate) source: String,
}

/// Throughput to the peer, both directions.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Throughput {
    pub(crate) upload: Series,
    pub(crate) download: Series,
    /// What measured it.
    pub(crate) method: String,
}

/// What was measured towards the peer. `Err` holds why a part could not be.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct PeerData {
    pub(crate) peer: Peer,
    /// The interface traffic to the peer leaves by.
    pub(crate) interface: Option<String>,
    pub(crate) rtt: Result<Rtt, String>,
    pub(crate) pmtu: Result<PathMtu, String>,
    pub(crate) throughput: Result<Throughput, String>,
}

/// CPU frequency scaling and throttling.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct CpuData {
    /// cpu number → governor; empty when /sys has no cpufreq.
    pub(crate) governors: BTreeMap<u32, String>,
    pub(crate) scaling_driver: Option<String>,
    /// Thermal throttle events (core_throttle_count summed) before and after the stress.
    pub(crate) throttle_before: Option<u64>,
    pub(crate) throttle_after: Option<u64>,
    /// Lowest current frequency seen during the stress vs the maximum, kHz.
    pub(crate) freq_during_stress_khz: Option<u64>,
    pub(crate) freq_max_khz: Option<u64>,
    /// Why the stress part was not run, when it was not.
    pub(crate) stress_skipped: Option<String>,
}

/// The mount holding one `--dir`.
pub(crate) use crate::mounted::MountData;

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Inputs {
    pub(crate) interfaces: Vec<IfaceSample>,
    /// The network-tuning sysctls (key → value, whitespace-normalised).
    pub(crate) sysctls: BTreeMap<String, String>,
    pub(crate) peer: Option<PeerData>,
    pub(crate) cpu: Option<CpuData>,
    /// Per `--dir`: the mount, or why it could not be found.
    pub(crate) mounts: Vec<Result<MountData, (String, String)>>,
    /// Per `--dir`: sequential write and read measured there.
    #[serde(default)]
    pub(crate) storage: Vec<DirResult>,
    /// This CPU's AEADs per core, measured when a `--dir` is on a sealed
    /// SMB mount (the encryption layer's evidence).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) crypto: Vec<crate::bench::crypto::CryptoFigure>,
    /// Each network mount's server's own figures from the fleet's
    /// Prometheus (`--prometheus`), by the server as the mount names it.
    pub(crate) fleet: BTreeMap<String, Beside<HostFigures>>,
    /// The persisted (set --persist or tuned) settings of each interface.
    #[serde(default)]
    pub(crate) persisted: BTreeMap<String, crate::nic::model::ChangeSet>,
    /// On a Proxmox node: every link of a VM, with its config's line.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) guests: Vec<GuestLink>,
    /// TCP's memory pressure level, which bounds the buffer maxima.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) tcp_memory: Option<crate::sysctl::tcp_mem::TcpMemory>,
    /// The pid of a running irqbalance: the owner of IRQ affinity, named,
    /// never fought.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) irqbalance_pid: Option<u32>,
    /// This host's physical cores (hyperthreads of one core once).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) physical_cores: Option<u32>,
}

/// A VM's link on this host and the MTUs the checks compare.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct GuestLink {
    #[serde(flatten)]
    pub(crate) guest: crate::pve::Guest,
    pub(crate) mtu: Option<u32>,
    /// The bridge its config names, and that bridge's MTU.
    pub(crate) bridge: Option<(String, u32)>,
    /// The queues the tap carries now, from the host's side (what the
    /// running VM opened); `None` when not read.
    #[serde(default)]
    pub(crate) tap_queues: Option<u32>,
}

impl Inputs {
    pub(crate) fn sysctl(&self, key: &str) -> Option<&str> {
        self.sysctls.get(key).map(String::as_str)
    }

    /// The maximum (third field) of a triplet such as tcp_rmem.
    pub(crate) fn triplet_max(&self, key: &str) -> Option<u64> {
        crate::sysctl::keys::triplet_max(self.sysctl(key)?)
    }

    pub(crate) fn iface(&self, name: &str) -> Option<&IfaceSample> {
        self.interfaces.iter().find(|s| s.name() == name)
    }
}

/// The dd figures of one directory (SI MB/s, as dd prints them).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct DdFigures {
    pub(crate) bytes: u64,
    /// Sequential write including the closing fdatasync.
    pub(crate) write_mb_s: f64,
    pub(crate) fdatasync_s: Option<f64>,
    /// Sequential read with the file's page cache dropped first.
    pub(crate) read_mb_s: f64,
    pub(crate) filesystem: String,
    pub(crate) memory_backed: bool,
}

/// One `--dir`: its measurement, or why there is none.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct DirResult {
    pub(crate) dir: String,
    pub(crate) measured: Result<DdFigures, String>,
}
