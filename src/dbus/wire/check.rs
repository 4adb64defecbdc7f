//! `Manager.Check`'s options (`a{sv}`), as both sides spell them, in one
//! table ([`FIELDS`]): `peers`
//! as (HOST, HOST:PORT or [IPv6]:PORT), `dirs` as (absolute), `no_cpu` b,
//! `baseline` s, `time_s` u (1 to 60), `bench_time_s` u (1 to 600),
//! `disk_size_mib` u (1 to 1048576), `busy_window_s` u (0 to 86400),
//! `if_kernel_changed` b, `detached` b. Each absent one leaves hlctld's
//! `[check]` configuration as it is, as `hlctl check` without the option.

use zbus::Variant;

use super::error::{Error, Result};
use super::fields::{self, Field, u32_of};
use super::key::Key;
use super::records::{Dict, OwnedDict};
use super::settings;
use crate::ops::check::Overrides;
use crate::path::Peer;
use crate::problem::{Problem, join};

/// What `hlctl check` asks for: the overrides, and whether the job outlives
/// the caller's connection.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct CheckParams {
    pub(crate) overrides: Overrides,
    pub(crate) detached: bool,
}

/// Every option: its key, D-Bus type and `hlctl check` flags, read and
/// written; an absent key keeps hlctld's configuration.
pub(crate) const FIELDS: &[Field<CheckParams>] = &[
    Field {
        key: Key::new("peers", "as", &["peers"]),
        get: |p| (!p.overrides.peers.is_empty()).then(|| Variant::from(p.overrides.peers.clone())),
        set: |p, k, v| settings::as_string_list(k, v).map(|x| p.overrides.peers = x),
    },
    Field {
        key: Key::new("dirs", "as", &["dirs"]),
        get: |p| (!p.overrides.dirs.is_empty()).then(|| Variant::from(p.overrides.dirs.clone())),
        set: |p, k, v| settings::as_string_list(k, v).map(|x| p.overrides.dirs = x),
    },
    Field {
        key: Key::new("no_cpu", "b", &["no_cpu"]),
        get: |p| Some(Variant::Bool(p.overrides.no_cpu)),
        set: |p, k, v| settings::as_bool(k, v).map(|x| p.overrides.no_cpu = x),
    },
    Field {
        key: Key::new("baseline", "s", &["baseline"]),
        get: |p| p.overrides.baseline.clone().map(Variant::from),
        set: |p, k, v| settings::as_str(k, v).map(|x| p.overrides.baseline = Some(x)),
    },
    Field {
        key: Key::new("time_s", "u", &["time"]),
        get: |p| p.overrides.time_s.map(Variant::U32),
        set: |p, k, v| settings::as_u32_in(k, v, 1, 60).map(|x| p.overrides.time_s = Some(x)),
    },
    Field {
        key: Key::new("bench_time_s", "u", &["bench_time"]),
        get: |p| p.overrides.bench_time_s.map(u32_of),
        set: |p, k, v| {
            settings::as_u32_in(k, v, 1, 600).map(|x| p.overrides.bench_time_s = Some(x.into()))
        },
    },
    Field {
        key: Key::new("disk_size_mib", "u", &["disk_size"]),
        get: |p| p.overrides.disk_size_mib.map(u32_of),
        set: |p, k, v| {
            settings::as_u32_in(k, v, 1, 1_048_576)
                .map(|x| p.overrides.disk_size_mib = Some(x.into()))
        },
    },
    Field {
        key: Key::new("busy_window_s", "u", &["busy_window"]),
        get: |p| p.overrides.busy_window_s.map(u32_of),
        set: |p, k, v| {
            settings::as_u32_in(k, v, 0, 86_400).map(|x| p.overrides.busy_window_s = Some(x.into()))
        },
    },
    Field {
        key: Key::new("if_kernel_changed", "b", &["if_kernel_changed"]),
        get: |p| Some(Variant::Bool(p.overrides.if_kernel_changed)),
        set: |p, k, v| settings::as_bool(k, v).map(|x| p.overrides.if_kernel_changed = x),
    },
    Field {
        key: Key::new("detached", "b", &[]),
        get: |p| Some(Variant::Bool(p.detached)),
        set: |p, k, v| settings::as_bool(k, v).map(|x| p.detached = x),
    },
];

impl CheckParams {
    /// Only what is set: an absent key keeps hlctld's configuration.
    pub(crate) fn encode(&self) -> Dict {
        fields::encode(FIELDS, self)
    }

    /// Decode strictly; every problem is reported at once, naming the option
    /// and what is allowed.
    pub(crate) fn decode(m: &OwnedDict) -> Result<CheckParams> {
        let mut p = CheckParams::default();
        let mut problems = fields::decode_into(FIELDS, m, &mut p);
        for peer in &p.overrides.peers {
            if let Err(e) = Peer::parse(peer) {
                problems.push(Problem::new("option peers", Some(peer), e));
            }
        }
        for d in &p.overrides.dirs {
            if !d.starts_with('/') {
                problems.push(Problem::new("option dirs", Some(d), "an absolute path"));
            }
        }
        if problems.is_empty() {
            Ok(p)
        } else {
            Err(Error::InvalidArgument(join(&problems)))
        }
    }

    /// Overrides with every option set, for the declaration's round trip.
    pub(crate) fn full() -> CheckParams {
        CheckParams {
            overrides: Overrides {
                peers: vec!["nas:5202".into()],
                dirs: vec!["/srv".into()],
                no_cpu: true,
                baseline: Some("before".into()),
                time_s: Some(3),
                bench_time_s: Some(4),
                disk_size_mib: Some(16),
                busy_window_s: Some(0),
                if_kernel_changed: true,
            },
            detached: true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn owned(d: Dict) -> OwnedDict {
        d.into_iter()
            .map(|(k, v)| (k, v.try_to_owned().unwrap()))
            .collect()
    }

    #[test]
    fn what_is_encoded_decodes_to_the_same() {
        let p = CheckParams::full();
        assert_eq!(CheckParams::decode(&owned(p.encode())).unwrap(), p);
        let empty = CheckParams::default();
        assert_eq!(CheckParams::decode(&owned(empty.encode())).unwrap(), empty);
    }

    #[test]
    fn bad_options_are_named_all_at_once() {
        let mut d = Dict::new();
        d.insert("time_s".into(), Variant::U32(0));
        d.insert("dirs".into(), Variant::from(vec!["relative".to_string()]));
        d.insert("colour".into(), Variant::Bool(true));
        let Err(Error::InvalidArgument(m)) = CheckParams::decode(&owned(d)) else {
            panic!("accepted");
        };
        for want in ["time_s", "relative", "colour", "busy_window_s (u)"] {
            assert!(m.contains(want), "{want} not in {m}");
        }
    }
}
