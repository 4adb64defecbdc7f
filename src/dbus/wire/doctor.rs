//! `Manager.Doctor`'s options (`a{sv}`), as both sides spell them, in one
//! table ([`FIELDS`]): `interfaces` as, `peer` s (HOST, HOST:PORT or
//! [IPv6]:PORT), `dirs` as (absolute), `runs` u (1 to 20, default 1),
//! `stress_s` u (0 to 600, default 3), `disk_size_mib` u (0 to 1048576,
//! default 256), `time_s` u (1 to 60, default 2), `detached` b, `workloads`
//! as (`plex-4k:3`, `need:net=400M,cpu=3000`; judged in the report's
//! `workloads`). The defaults are those of `hlctl doctor`
//! ([`DoctorRequest`]).

use zbus::Variant;

use super::error::{Error, Result};
use super::fields::{self, Field, strings};
use super::key::Key;
use super::records::{Dict, OwnedDict};
use super::settings;
use crate::ops::doctor::DoctorRequest;
use crate::path::Peer;
use crate::problem::{Problem, join};

/// What `hlctl doctor` asks for, and whether the job outlives the caller's
/// connection.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct DoctorParams {
    pub(crate) request: DoctorRequest,
    pub(crate) detached: bool,
}

/// Every option: its key, D-Bus type and `hlctl doctor` flags, read and written.
pub(crate) const FIELDS: &[Field<DoctorParams>] = &[
    Field {
        key: Key::new("interfaces", "as", &["interfaces"]),
        get: |p| strings(&p.request.interfaces),
        set: |p, k, v| settings::as_string_list(k, v).map(|x| p.request.interfaces = x),
    },
    Field {
        key: Key::new("peer", "s", &["peer"]),
        get: |p| p.request.peer.clone().map(Variant::from),
        set: |p, k, v| settings::as_str(k, v).map(|x| p.request.peer = Some(x)),
    },
    Field {
        key: Key::new("dirs", "as", &["dirs"]),
        get: |p| strings(&p.request.dirs),
        set: |p, k, v| settings::as_string_list(k, v).map(|x| p.request.dirs = x),
    },
    Field {
        key: Key::new("runs", "u", &["runs"]),
        get: |p| Some(Variant::U32(p.request.runs)),
        set: |p, k, v| settings::as_u32_in(k, v, 1, 20).map(|x| p.request.runs = x),
    },
    Field {
        key: Key::new("stress_s", "u", &["stress"]),
        get: |p| Some(Variant::U32(p.request.stress_s)),
        set: |p, k, v| settings::as_u32_in(k, v, 0, 600).map(|x| p.request.stress_s = x),
    },
    Field {
        key: Key::new("disk_size_mib", "u", &["disk_size"]),
        get: |p| Some(Variant::U32(p.request.disk_size_mib)),
        set: |p, k, v| settings::as_u32_in(k, v, 0, 1_048_576).map(|x| p.request.disk_size_mib = x),
    },
    Field {
        key: Key::new("time_s", "u", &["time"]),
        get: |p| Some(Variant::U32(p.request.time_s)),
        set: |p, k, v| settings::as_u32_in(k, v, 1, 60).map(|x| p.request.time_s = x),
    },
    Field {
        key: Key::new("detached", "b", &[]),
        get: |p| Some(Variant::Bool(p.detached)),
        set: |p, k, v| settings::as_bool(k, v).map(|x| p.detached = x),
    },
    Field {
        key: Key::new("workloads", "as", &["workloads", "needs"]),
        get: |p| {
            (!p.request.workloads.is_empty()).then(|| Variant::from(p.request.workloads.clone()))
        },
        set: |p, k, v| settings::as_string_list(k, v).map(|x| p.request.workloads = x),
    },
    Field {
        key: Key::new("prometheus", "s", &["prometheus"]),
        get: |p| p.request.prometheus.clone().map(Variant::from),
        set: |p, k, v| settings::as_str(k, v).map(|x| p.request.prometheus = Some(x)),
    },
    Field {
        key: Key::new("host_label", "s", &["host_label"]),
        get: |p| p.request.host_label.clone().map(Variant::from),
        set: |p, k, v| settings::as_str(k, v).map(|x| p.request.host_label = Some(x)),
    },
];

impl DoctorParams {
    pub(crate) fn encode(&self) -> Dict {
        fields::encode(FIELDS, self)
    }

    /// Decode strictly; every problem is reported at once, naming the option
    /// and what is allowed.
    pub(crate) fn decode(m: &OwnedDict) -> Result<DoctorParams> {
        let mut p = DoctorParams::default();
        let mut problems = fields::decode_into(FIELDS, m, &mut p);
        let r = &p.request;
        if let Some(peer) = &r.peer
            && let Err(e) = Peer::parse(peer)
        {
            problems.push(Problem::new("option peer", Some(peer), e));
        }
        for w in &r.workloads {
            if let Err(e) = crate::workload::Workload::parse_spec(w) {
                problems.push(Problem::new("option workloads", Some(w), e));
            }
        }
        for d in &r.dirs {
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

    /// A request with every option set (away from its default), for the
    /// declaration's round trip.
    pub(crate) fn full() -> DoctorParams {
        DoctorParams {
            request: DoctorRequest {
                interfaces: vec!["eth0".into()],
                peer: Some("nas.lan:5202".into()),
                dirs: vec!["/srv".into()],
                runs: 3,
                stress_s: 5,
                disk_size_mib: 64,
                time_s: 4,
                workloads: vec!["plex-4k:2".into(), "need:net=400M".into()],
                workload_runs: true,
                prometheus: Some("http://prometheus.lab:9090".into()),
                host_label: Some("node".into()),
            },
            detached: true,
        }
    }
}
