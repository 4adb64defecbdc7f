//! `Manager.Report`'s options (`a{sv}`), as both sides spell them, in one
//! table ([`FIELDS`]): `peers` as (HOST, HOST:PORT or [IPv6]:PORT), `dirs`
//! as (absolute), `time_s` u (1 to 60, default 10), `disk_size_mib` u (1 to
//! 1048576, default 256), `bench_time_s` u (1 to 600, default 10),
//! `detached` b. The defaults are those of `hlctl report`
//! ([`ReportRequest`]).

use zbus::Variant;

use super::error::{Error, Result};
use super::fields::{self, Field, strings};
use super::key::Key;
use super::records::{Dict, OwnedDict};
use super::settings;
use crate::ops::report::ReportRequest;
use crate::path::Peer;
use crate::problem::{Problem, join};

/// What `hlctl report` asks for, and whether the job outlives the caller's
/// connection.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct ReportParams {
    pub(crate) request: ReportRequest,
    pub(crate) detached: bool,
}

/// Every option: its key, D-Bus type and `hlctl report` flags, read and written.
pub(crate) const FIELDS: &[Field<ReportParams>] = &[
    Field {
        key: Key::new("peers", "as", &["peers"]),
        get: |p| strings(&p.request.peers),
        set: |p, k, v| settings::as_string_list(k, v).map(|x| p.request.peers = x),
    },
    Field {
        key: Key::new("dirs", "as", &["dirs"]),
        get: |p| strings(&p.request.dirs),
        set: |p, k, v| settings::as_string_list(k, v).map(|x| p.request.dirs = x),
    },
    Field {
        key: Key::new("time_s", "u", &["time"]),
        get: |p| Some(Variant::U32(p.request.time_s)),
        set: |p, k, v| settings::as_u32_in(k, v, 1, 60).map(|x| p.request.time_s = x),
    },
    Field {
        key: Key::new("disk_size_mib", "u", &["disk_size"]),
        get: |p| Some(Variant::U32(p.request.disk_size_mib)),
        set: |p, k, v| settings::as_u32_in(k, v, 1, 1_048_576).map(|x| p.request.disk_size_mib = x),
    },
    Field {
        key: Key::new("bench_time_s", "u", &["bench_time", "time"]),
        get: |p| Some(Variant::U32(p.request.bench_time_s)),
        set: |p, k, v| settings::as_u32_in(k, v, 1, 600).map(|x| p.request.bench_time_s = x),
    },
    Field {
        key: Key::new("detached", "b", &[]),
        get: |p| Some(Variant::Bool(p.detached)),
        set: |p, k, v| settings::as_bool(k, v).map(|x| p.detached = x),
    },
];

impl ReportParams {
    pub(crate) fn encode(&self) -> Dict {
        fields::encode(FIELDS, self)
    }

    /// Decode strictly; every problem is reported at once, naming the option
    /// and what is allowed.
    pub(crate) fn decode(m: &OwnedDict) -> Result<ReportParams> {
        let mut p = ReportParams::default();
        let mut problems = fields::decode_into(FIELDS, m, &mut p);
        for peer in &p.request.peers {
            if let Err(e) = Peer::parse(peer) {
                problems.push(Problem::new("option peers", Some(peer), e));
            }
        }
        for d in &p.request.dirs {
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
    pub(crate) fn full() -> ReportParams {
        ReportParams {
            request: ReportRequest {
                peers: vec!["[fd00::1]:5202".into()],
                dirs: vec!["/mnt/nas".into()],
                time_s: 3,
                disk_size_mib: 64,
                bench_time_s: 5,
            },
            detached: true,
        }
    }
}
