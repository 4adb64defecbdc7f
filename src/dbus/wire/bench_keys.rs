//! The declared keys of each benchmark's `params` (`Params[KIND]` in the
//! XML): each field of [`NetParams`], ... with its D-Bus type and the
//! `hlctl bench KIND` flags it comes from. [`super::params::encode_typed`]
//! sends each value as its declared type; `tests/verbs.rs` checks that a
//! full parameter set produces exactly these keys and decodes back.

use super::bench::{CpuParams, DiskParams, FileParams, NetParams, StressParams};
use super::key::Key;

pub(crate) const NET_KEYS: &[Key] = &[
    Key::new("host", "s", &["peer", "stray"]),
    Key::new("port", "q", &["port"]),
    Key::new("udp", "b", &["udp"]),
    Key::new("time_s", "u", &["time"]),
    Key::new("parallel", "u", &["parallel"]),
    Key::new("direction", "s", &["reverse", "bidir"]),
    Key::new("bitrate_bps", "t", &["bitrate"]),
    Key::new("length", "u", &["length"]),
    Key::new("window", "u", &["window"]),
    Key::new("omit_s", "u", &["omit"]),
    Key::new("interval_s", "d", &["interval"]),
    Key::new("busy_window_s", "t", &["busy_window"]),
    Key::new("skip_rx_copy", "b", &["skip_rx_copy"]),
    Key::new("fq_rate_bps", "t", &["fq_rate"]),
    Key::new("zerocopy", "b", &["zerocopy"]),
    Key::new("gsro", "b", &["gsro"]),
    Key::new("cntl_ka", "s", &["cntl_ka"]),
];

pub(crate) const CPU_KEYS: &[Key] = &[
    Key::new("threads", "u", &["threads"]),
    Key::new("time_s", "d", &["time"]),
    Key::new("max_prime", "u", &["max_prime"]),
    Key::new("no_single", "b", &["no_single"]),
];

pub(crate) const DISK_KEYS: &[Key] = &[
    Key::new("dir", "s", &["dir"]),
    Key::new("rw", "s", &["rw"]),
    Key::new("bs", "t", &["bs"]),
    Key::new("size", "t", &["size"]),
    Key::new("iodepth", "u", &["iodepth"]),
    Key::new("jobs", "u", &["jobs"]),
    Key::new("runtime_s", "d", &["runtime"]),
    Key::new("time_based", "b", &["time_based"]),
    Key::new("direct", "b", &["buffered"]),
    Key::new("engine", "s", &["engine"]),
    Key::new("rwmix_read", "y", &["rwmix_read"]),
];

pub(crate) const STRESS_KEYS: &[Key] = &[
    Key::new("time_s", "d", &["time"]),
    Key::new("cpu", "u", &["cpu"]),
    Key::new("vm", "u", &["vm"]),
    Key::new("vm_bytes", "t", &["vm_bytes"]),
    Key::new("vm_percent", "d", &["vm_bytes"]),
    Key::new("interval_s", "d", &["interval"]),
];

pub(crate) const FILE_KEYS: &[Key] = &[
    Key::new("dir", "s", &["dir"]),
    Key::new("size", "t", &["size"]),
    Key::new("net_peer", "s", &["net_peer"]),
    Key::new("no_net", "b", &["no_net"]),
    Key::new("net_time_s", "u", &["net_time"]),
    Key::new("local_dir", "s", &["local_dir"]),
    Key::new("no_disk", "b", &["no_disk"]),
    Key::new("no_crypto", "b", &["no_crypto"]),
    Key::new("prometheus", "s", &["prometheus"]),
    Key::new("host_label", "s", &["host_label"]),
];

impl NetParams {
    /// Every parameter set, for the declaration's round trip.
    pub(crate) fn full() -> NetParams {
        NetParams {
            host: "10.0.0.2".into(),
            port: Some(5301),
            udp: true,
            time_s: Some(3),
            parallel: Some(2),
            direction: Some("reverse".into()),
            bitrate_bps: Some(100_000_000),
            length: Some(1400),
            window: Some(262_144),
            omit_s: Some(1),
            interval_s: Some(0.5),
            busy_window_s: Some(30),
            skip_rx_copy: true,
            fq_rate_bps: Some(1_000_000_000),
            zerocopy: true,
            gsro: true,
            cntl_ka: Some("20/5/3".into()),
        }
    }
}

impl CpuParams {
    /// Every parameter set, for the declaration's round trip.
    pub(crate) fn full() -> CpuParams {
        CpuParams {
            threads: Some(2),
            time_s: Some(1.5),
            max_prime: Some(20_000),
            no_single: true,
        }
    }
}

impl DiskParams {
    /// Every parameter set, for the declaration's round trip.
    pub(crate) fn full() -> DiskParams {
        DiskParams {
            dir: "/srv".into(),
            rw: Some("randrw".into()),
            bs: Some(4096),
            size: Some(1 << 26),
            iodepth: Some(16),
            jobs: Some(2),
            runtime_s: Some(2.5),
            time_based: Some(true),
            direct: Some(false),
            engine: Some("psync".into()),
            rwmix_read: Some(70),
        }
    }
}

impl StressParams {
    /// Every parameter but one of the two memory amounts set (they exclude
    /// each other; [`StressParams::full_percent`] has the other).
    pub(crate) fn full() -> StressParams {
        StressParams {
            time_s: Some(2.0),
            cpu: Some(1),
            vm: Some(1),
            vm_bytes: Some(1 << 24),
            vm_percent: None,
            interval_s: Some(0.5),
        }
    }

    /// [`StressParams::full`] with the memory in percent.
    pub(crate) fn full_percent() -> StressParams {
        StressParams {
            vm_bytes: None,
            vm_percent: Some(10.0),
            ..StressParams::full()
        }
    }
}

impl FileParams {
    /// Every parameter set, for the declaration's round trip.
    pub(crate) fn full() -> FileParams {
        FileParams {
            dir: "/mnt/media".into(),
            size: Some(64 << 20),
            net_peer: Some("nas:5201".into()),
            no_net: true,
            net_time_s: Some(2),
            local_dir: Some("/srv".into()),
            no_disk: true,
            no_crypto: true,
            prometheus: Some("http://prometheus.lab:9090".into()),
            host_label: Some("node".into()),
        }
    }
}
