//! Who and what this machine is: recorded with every result.

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostInfo {
    pub(crate) host: String,
    /// `uname -r`.
    pub(crate) kernel: String,
}

impl HostInfo {
    pub fn current() -> Self {
        let read = |p: &str| {
            std::fs::read_to_string(p)
                .map(|s| s.trim().to_string())
                .unwrap_or_default()
        };
        let host = read("/proc/sys/kernel/hostname");
        let kernel = read("/proc/sys/kernel/osrelease");
        HostInfo { host, kernel }
    }
}

/// `uname -srvm` with the host name: "Linux nas 6.1.0-18-amd64 #1 SMP … x86_64",
/// as iperf3's `system_info`.
pub(crate) fn system_info() -> String {
    let read = |k: &str| {
        std::fs::read_to_string(format!("/proc/sys/kernel/{k}"))
            .map(|s| s.trim().to_string())
            .unwrap_or_default()
    };
    let parts = [
        read("ostype"),
        read("hostname"),
        read("osrelease"),
        read("version"),
        std::env::consts::ARCH.to_string(),
    ];
    parts.join(" ")
}

/// Milliseconds since the Unix epoch.
pub(crate) fn now_unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// Seconds since the Unix epoch.
pub(crate) fn now_unix() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}
