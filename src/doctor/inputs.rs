//! Everything the checks read, gathered first so that every check is a pure
//! function of data (and testable with data written by hand).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::nic::model::Interface;
use crate::path::Peer;
use crate::path::measure::Series;
use crate::path::pmtu::PathMtu;

/// Two snapshots of one interface, `interval_s` apart (counters are compared).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IfaceSample {
    pub first: Interface,
    pub second: Option<Interface>,
    pub interval_s: f64,
}

impl IfaceSample {
    /// The latest snapshot.
    pub fn now(&self) -> &Interface {
        self.second.as_ref().unwrap_or(&self.first)
    }
    pub fn name(&self) -> &str {
        &self.first.name
    }
}

/// How the round-trip time to the peer was measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Rtt {
    pub ms: f64,
    /// `tcp handshake to HOST:PORT` or `icmp echo`.
    pub source: String,
}

/// Throughput to the peer, both directions.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Throughput {
    pub upload: Series,
    pub download: Series,
    /// What measured it.
    pub method: String,
}

/// What was measured towards the peer. `Err` holds why a part could not be.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PeerData {
    pub peer: Peer,
    /// The interface traffic to the peer leaves by.
    pub interface: Option<String>,
    pub rtt: Result<Rtt, String>,
    pub pmtu: Result<PathMtu, String>,
    pub throughput: Result<Throughput, String>,
}

/// CPU frequency scaling and throttling.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuData {
    /// cpu number → governor; empty when /sys has no cpufreq.
    pub governors: BTreeMap<u32, String>,
    pub scaling_driver: Option<String>,
    /// Thermal throttle events (core_throttle_count summed) before and after the stress.
    pub throttle_before: Option<u64>,
    pub throttle_after: Option<u64>,
    /// Lowest current frequency seen during the stress vs the maximum, kHz.
    pub freq_during_stress_khz: Option<u64>,
    pub freq_max_khz: Option<u64>,
    /// Why the stress part was not run, when it was not.
    pub stress_skipped: Option<String>,
}

/// The mount holding one `--dir`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MountData {
    pub dir: String,
    pub mount_point: String,
    pub fs_type: String,
    pub source: String,
    /// Per-mount and superblock options together.
    pub options: BTreeMap<String, Option<String>>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Inputs {
    pub interfaces: Vec<IfaceSample>,
    /// The network-tuning sysctls (key → value, whitespace-normalised).
    pub sysctls: BTreeMap<String, String>,
    pub peer: Option<PeerData>,
    pub cpu: Option<CpuData>,
    /// Per `--dir`: the mount, or why it could not be found.
    pub mounts: Vec<Result<MountData, (String, String)>>,
    /// Per `--dir`: sequential write and read measured there.
    #[serde(default)]
    pub storage: Vec<DirResult>,
}

impl Inputs {
    pub fn sysctl(&self, key: &str) -> Option<&str> {
        self.sysctls.get(key).map(String::as_str)
    }

    /// The maximum (third field) of a triplet such as tcp_rmem.
    pub fn triplet_max(&self, key: &str) -> Option<u64> {
        self.sysctl(key)?.split_whitespace().nth(2)?.parse().ok()
    }

    pub fn iface(&self, name: &str) -> Option<&IfaceSample> {
        self.interfaces.iter().find(|s| s.name() == name)
    }
}

/// The dd figures of one directory (SI MB/s, as dd prints them).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DdFigures {
    pub bytes: u64,
    /// Sequential write including the closing fdatasync.
    pub write_mb_s: f64,
    pub fdatasync_s: Option<f64>,
    /// Sequential read with the file's page cache dropped first.
    pub read_mb_s: f64,
    pub filesystem: String,
    pub memory_backed: bool,
}

/// One `--dir`: its measurement, or why there is none.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DirResult {
    pub dir: String,
    pub measured: Result<DdFigures, String>,
}
