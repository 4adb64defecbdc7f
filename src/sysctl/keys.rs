//! The network-tuning set of sysctls: which keys, what values are allowed,
//! and how values are normalised so `4096\t131072\t6291456` equals
//! `4096 131072 6291456`.

use crate::spelling::edit_distance;

/// What kind of value a key holds, and its limits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// One integer within `min..=max`.
    Int { min: i64, max: i64 },
    /// Three integers `min default max` with min ≤ default ≤ max (tcp_rmem, tcp_wmem).
    Triplet,
    /// A TCP congestion control that must be in `tcp_available_congestion_control`.
    Congestion,
    /// A queueing discipline name.
    Qdisc,
    /// Shown only, never set (e.g. the list of available congestion controls).
    ReadOnly,
}

/// One key of the tuning set.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Key {
    pub(crate) name: &'static str,
    pub(crate) kind: Kind,
    /// One line on what the key does, for `hlctl sysctl` and `doctor`.
    pub(crate) about: &'static str,
}

const BYTES: Kind = Kind::Int {
    min: 4096,
    max: i32::MAX as i64,
};
const BOOL: Kind = Kind::Int { min: 0, max: 1 };

/// Keys of the tuning set that are global, not per network namespace: a
/// network namespace other than the host's has no such file under
/// /proc/sys (checked in a fresh `ip netns add` namespace on Linux 6.18).
/// A container on `--network host` sees the host's value of every key, but
/// writing a global one would change the whole machine.
pub(crate) const GLOBAL: &[&str] = &[
    "net.core.default_qdisc",
    "net.core.netdev_budget",
    "net.core.netdev_max_backlog",
];

/// Keys a namespace has a value of its own of (copied from the host's when
/// it is created) but may not change: mode 0444 outside the host's
/// namespace (Linux 6.18). Every other key of the set is per namespace and
/// writable there.
pub(crate) const HOST_SET: &[&str] = &[
    "net.core.rmem_max",
    "net.core.wmem_max",
    "net.core.rmem_default",
    "net.core.wmem_default",
];

/// Is `key` one value for the whole machine (see [`GLOBAL`])?
pub(crate) fn is_global(key: &str) -> bool {
    GLOBAL.contains(&key)
}

/// Is `key` set only from the host's namespace (see [`HOST_SET`])?
pub(crate) fn is_host_set(key: &str) -> bool {
    HOST_SET.contains(&key)
}

/// The network-tuning set shown by `hlctl sysctl` with no key, in display order.
pub(crate) const TUNING_SET: &[Key] = &[
    Key {
        name: "net.core.rmem_max",
        kind: BYTES,
        about: "largest receive buffer an application may request (SO_RCVBUF)",
    },
    Key {
        name: "net.core.wmem_max",
        kind: BYTES,
        about: "largest send buffer an application may request (SO_SNDBUF)",
    },
    Key {
        name: "net.core.rmem_default",
        kind: BYTES,
        about: "default receive buffer of non-TCP sockets",
    },
    Key {
        name: "net.core.wmem_default",
        kind: BYTES,
        about: "default send buffer of non-TCP sockets",
    },
    Key {
        name: "net.core.netdev_max_backlog",
        kind: Kind::Int {
            min: 1,
            max: i32::MAX as i64,
        },
        about: "packets queued per CPU when the stack falls behind the NIC",
    },
    Key {
        name: "net.core.netdev_budget",
        kind: Kind::Int {
            min: 1,
            max: i32::MAX as i64,
        },
        about: "packets processed per softirq poll cycle",
    },
    Key {
        name: "net.core.optmem_max",
        kind: Kind::Int {
            min: 0,
            max: i32::MAX as i64,
        },
        about: "ancillary buffer size per socket",
    },
    Key {
        name: "net.core.default_qdisc",
        kind: Kind::Qdisc,
        about: "queueing discipline given to new interfaces",
    },
    Key {
        name: "net.ipv4.tcp_rmem",
        kind: Kind::Triplet,
        about: "TCP receive buffer: min, default, max (bytes); max bounds the window",
    },
    Key {
        name: "net.ipv4.tcp_wmem",
        kind: Kind::Triplet,
        about: "TCP send buffer: min, default, max (bytes)",
    },
    Key {
        name: "net.ipv4.tcp_congestion_control",
        kind: Kind::Congestion,
        about: "congestion control for new connections",
    },
    Key {
        name: "net.ipv4.tcp_available_congestion_control",
        kind: Kind::ReadOnly,
        about: "congestion controls this kernel offers",
    },
    Key {
        name: "net.ipv4.tcp_mtu_probing",
        kind: Kind::Int { min: 0, max: 2 },
        about: "packetization-layer path MTU discovery (0 off, 1 on black hole, 2 always)",
    },
    Key {
        name: "net.ipv4.tcp_slow_start_after_idle",
        kind: BOOL,
        about: "shrink the congestion window after an idle period",
    },
    Key {
        name: "net.ipv4.tcp_window_scaling",
        kind: BOOL,
        about: "RFC 1323 window scaling (needed for windows above 64 KiB)",
    },
    Key {
        name: "net.ipv4.tcp_timestamps",
        kind: Kind::Int { min: 0, max: 2 },
        about: "RFC 1323 timestamps",
    },
    Key {
        name: "net.ipv4.tcp_sack",
        kind: BOOL,
        about: "selective acknowledgements",
    },
    Key {
        name: "net.ipv4.tcp_no_metrics_save",
        kind: BOOL,
        about: "do not cache metrics of closed connections",
    },
    Key {
        name: "net.ipv4.tcp_max_syn_backlog",
        kind: Kind::Int {
            min: 128,
            max: i32::MAX as i64,
        },
        about: "queued connection requests not yet acknowledged",
    },
    Key {
        name: "net.ipv4.tcp_tw_reuse",
        kind: Kind::Int { min: 0, max: 2 },
        about: "reuse TIME-WAIT sockets for new outgoing connections (2 = loopback only)",
    },
    Key {
        name: "net.ipv4.tcp_fastopen",
        kind: Kind::Int { min: 0, max: 0x7ff },
        about: "TCP Fast Open (bit 1 client, bit 2 server)",
    },
];

/// Queueing disciplines `default_qdisc` accepts by name.
pub(crate) const QDISCS: &[&str] = &[
    "pfifo_fast",
    "fq",
    "fq_codel",
    "cake",
    "sfq",
    "pfifo",
    "bfifo",
    "noqueue",
];

/// Look a key up in the tuning set.
pub(crate) fn lookup(name: &str) -> Option<&'static Key> {
    TUNING_SET.iter().find(|k| k.name == name)
}

/// The keys of the tuning set closest to `name` (at most three), for "did you
/// mean": those with the same last part (`tcp_rmem` → `net.ipv4.tcp_rmem`),
/// else those a few typing mistakes away.
pub(crate) fn closest(name: &str) -> Vec<&'static str> {
    let last = |k: &str| k.rsplit('.').next().unwrap_or(k).to_string();
    let wanted = last(name);
    let same: Vec<&'static str> = TUNING_SET
        .iter()
        .map(|k| k.name)
        .filter(|k| last(k) == wanted)
        .collect();
    if !same.is_empty() {
        return same.into_iter().take(3).collect();
    }
    let mut near: Vec<(usize, &'static str)> = TUNING_SET
        .iter()
        .map(|k| {
            let d = edit_distance(name, k.name).min(edit_distance(&wanted, &last(k.name)));
            (d, k.name)
        })
        .filter(|(d, _)| *d <= 2)
        .collect();
    near.sort();
    near.into_iter().take(3).map(|(_, k)| k).collect()
}

/// The third number of a triplet's value (`tcp_rmem`'s max: "4096 131072
/// 6291456" → 6291456); None when it has no third number.
pub(crate) fn triplet_max(value: &str) -> Option<u64> {
    value.split_whitespace().nth(2)?.parse().ok()
}

/// The same value written with any whitespace: `4096\t131072` → `4096 131072`.
pub(crate) fn normalise(value: &str) -> String {
    value.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Check `value` for `key`; `available_cc` is the kernel's list of congestion
/// controls. Returns the normalised value or a message naming what is allowed.
pub(crate) fn validate(key: &Key, value: &str, available_cc: &[String]) -> Result<String, String> {
    let v = normalise(value);
    match key.kind {
        Kind::ReadOnly => Err("read-only: the kernel reports it, it cannot be set".into()),
        Kind::Int { min, max } => match v.parse::<i64>() {
            Ok(n) if (min..=max).contains(&n) => Ok(n.to_string()),
            Ok(n) => Err(format!("{n} is out of range: allowed {min} to {max}")),
            Err(_) => Err(format!("'{v}' is not an integer: allowed {min} to {max}")),
        },
        Kind::Triplet => {
            let parts: Vec<&str> = v.split(' ').collect();
            let nums: Option<Vec<i64>> = parts.iter().map(|p| p.parse::<i64>().ok()).collect();
            match nums.as_deref() {
                Some([a, b, c]) if *a >= 1 && a <= b && b <= c && *c <= i32::MAX as i64 => {
                    Ok(format!("{a} {b} {c}"))
                }
                Some([_, _, _]) => Err(format!(
                    "'{v}' must be three byte counts with 1 ≤ min ≤ default ≤ max ≤ {}",
                    i32::MAX
                )),
                _ => Err(format!("'{v}' must be three integers: \"min default max\"")),
            }
        }
        Kind::Congestion => {
            if available_cc.iter().any(|c| c == &v) {
                Ok(v)
            } else {
                Err(format!(
                    "'{v}' is not available: allowed {}",
                    available_cc.join(", ")
                ))
            }
        }
        Kind::Qdisc => {
            if QDISCS.contains(&v.as_str()) {
                Ok(v)
            } else {
                Err(format!(
                    "'{v}' is not a known qdisc: allowed {}",
                    QDISCS.join(", ")
                ))
            }
        }
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn closest_keys_for_did_you_mean() {
        assert_eq!(closest("tcp_rmem"), vec!["net.ipv4.tcp_rmem"]);
        assert_eq!(closest("net.ipv4.tcp_rmme"), vec!["net.ipv4.tcp_rmem"]);
        assert_eq!(
            closest("tcp_congestion_contrl"),
            vec!["net.ipv4.tcp_congestion_control"]
        );
        assert!(closest("vm.swappiness").is_empty());
    }

    use super::*;

    fn key(name: &str) -> &'static Key {
        lookup(name).unwrap()
    }

    #[test]
    fn a_triplets_max_is_its_third_number() {
        assert_eq!(triplet_max("4096\t131072  6291456\n"), Some(6291456));
        assert_eq!(triplet_max("4096 131072"), None);
        assert_eq!(triplet_max("4096 131072 lots"), None);
    }

    #[test]
    fn whitespace_does_not_change_a_value() {
        assert_eq!(normalise("4096\t131072  6291456\n"), "4096 131072 6291456");
        assert_eq!(normalise(" bbr "), "bbr");
    }

    #[test]
    fn triplets_need_ordered_numbers() {
        let k = key("net.ipv4.tcp_rmem");
        assert_eq!(
            validate(k, "4096\t87380 6291456", &[]).unwrap(),
            "4096 87380 6291456"
        );
        let e = validate(k, "4096 87380 1024", &[]).unwrap_err();
        assert!(e.contains("min ≤ default ≤ max"), "{e}");
        let e = validate(k, "4096 87380", &[]).unwrap_err();
        assert!(e.contains("three integers"), "{e}");
        assert!(validate(k, "a b c", &[]).is_err());
    }

    #[test]
    fn integers_are_range_checked() {
        let k = key("net.ipv4.tcp_slow_start_after_idle");
        assert_eq!(validate(k, "0", &[]).unwrap(), "0");
        let e = validate(k, "2", &[]).unwrap_err();
        assert!(e.contains("allowed 0 to 1"), "{e}");
        let e = validate(key("net.core.rmem_max"), "12", &[]).unwrap_err();
        assert!(e.contains("4096"), "{e}");
        assert!(
            validate(k, "yes", &[])
                .unwrap_err()
                .contains("not an integer")
        );
    }

    #[test]
    fn congestion_control_must_be_available() {
        let avail = vec!["reno".to_string(), "cubic".to_string()];
        let k = key("net.ipv4.tcp_congestion_control");
        assert_eq!(validate(k, "cubic", &avail).unwrap(), "cubic");
        let e = validate(k, "bbr", &avail).unwrap_err();
        assert!(e.contains("reno, cubic"), "{e}");
    }

    #[test]
    fn read_only_keys_refuse_writes() {
        let k = key("net.ipv4.tcp_available_congestion_control");
        assert!(validate(k, "reno", &[]).unwrap_err().contains("read-only"));
    }
}
