//! The options of the methods that start a job, as both sides spell them:
//! `StartBenchmark`'s (`detached` b, `link` s) and `Tune`'s (the tune's
//! parameters as typed keys, `detached` b). Decoded strictly: every problem
//! at once, naming the option and what is allowed. Each is one table
//! ([`BENCH_FIELDS`], [`TUNE_FIELDS`]) that both directions read.

use zbus::Variant;

use super::error::{Error, Result};
use super::fields::{self, Field, strings, u32_of};
use super::key::Key;
use super::records::{Dict, OwnedDict};
use super::settings;
use crate::problem::{Problem, join};
use crate::tune::params::TuneParams;

fn done<T>(value: T, problems: Vec<Problem>) -> Result<T> {
    if problems.is_empty() {
        Ok(value)
    } else {
        Err(Error::InvalidArgument(join(&problems)))
    }
}

/// `StartBenchmark`'s options.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct BenchOptions {
    /// Keep running when the caller leaves the bus.
    pub(crate) detached: bool,
    /// The interface the benchmark loads (held against changes meanwhile).
    pub(crate) link: Option<String>,
}

/// `StartBenchmark`'s options, read and written (no `hlctl bench` flag
/// sets them: the client always waits, and holds no link).
pub(crate) const BENCH_FIELDS: &[Field<BenchOptions>] = &[
    Field {
        key: Key::new("detached", "b", &[]),
        get: |o| Some(Variant::Bool(o.detached)),
        set: |o, k, v| settings::as_bool(k, v).map(|b| o.detached = b),
    },
    Field {
        key: Key::new("link", "s", &[]),
        get: |o| o.link.clone().map(Variant::from),
        set: |o, k, v| settings::as_str(k, v).map(|s| o.link = Some(s)),
    },
];

impl BenchOptions {
    pub(crate) fn decode(m: &OwnedDict) -> Result<BenchOptions> {
        let mut o = BenchOptions::default();
        let problems = fields::decode_into(BENCH_FIELDS, m, &mut o);
        done(o, problems)
    }

    /// Both options set, for the declaration's round trip.
    pub(crate) fn full() -> BenchOptions {
        BenchOptions {
            detached: true,
            link: Some("eth0".into()),
        }
    }
}

/// `Tune`'s options: the tune's parameters, each a typed key (as `hlctl
/// tune`'s flags), and `detached`.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct TuneOptions {
    pub(crate) params: TuneParams,
    pub(crate) detached: bool,
}

fn as_f64(key: &str, v: &Variant<'_>) -> std::result::Result<f64, Problem> {
    match v {
        Variant::F64(x) if x.is_finite() => Ok(*x),
        _ => Err(Problem::new(
            format!("option {key}"),
            None,
            "wrong type: expected a finite number (D-Bus type d)",
        )),
    }
}

/// `Tune`'s options: each key, its D-Bus type and `hlctl tune`'s flag,
/// read and written (unset ones left out).
pub(crate) const TUNE_FIELDS: &[Field<TuneOptions>] = &[
    Field {
        key: Key::new("interface", "s", &["interface"]),
        get: |o| Some(Variant::from(o.params.interface.clone())),
        set: |o, k, v| settings::as_str(k, v).map(|x| o.params.interface = x),
    },
    Field {
        key: Key::new("peer", "s", &["peer"]),
        get: |o| Some(Variant::from(o.params.peer.clone())),
        set: |o, k, v| settings::as_str(k, v).map(|x| o.params.peer = x),
    },
    Field {
        key: Key::new("runs", "u", &["runs"]),
        get: |o| o.params.runs.map(Variant::U32),
        set: |o, k, v| settings::as_u32(k, v).map(|x| o.params.runs = Some(x)),
    },
    Field {
        key: Key::new("time_s", "u", &["time"]),
        get: |o| o.params.time_s.map(Variant::U32),
        set: |o, k, v| settings::as_u32(k, v).map(|x| o.params.time_s = Some(x)),
    },
    Field {
        key: Key::new("min_gain_percent", "d", &["min_gain"]),
        get: |o| o.params.min_gain_percent.map(Variant::F64),
        set: |o, k, v| as_f64(k, v).map(|x| o.params.min_gain_percent = Some(x)),
    },
    Field {
        key: Key::new("confirm_timeout_s", "u", &["confirm_timeout"]),
        get: |o| o.params.confirm_timeout_s.map(u32_of),
        set: |o, k, v| settings::as_u32(k, v).map(|x| o.params.confirm_timeout_s = Some(x.into())),
    },
    Field {
        key: Key::new("dry_run", "b", &["dry_run"]),
        get: |o| Some(Variant::Bool(o.params.dry_run)),
        set: |o, k, v| settings::as_bool(k, v).map(|x| o.params.dry_run = x),
    },
    Field {
        key: Key::new("no_persist", "b", &["no_persist"]),
        get: |o| Some(Variant::Bool(o.params.no_persist)),
        set: |o, k, v| settings::as_bool(k, v).map(|x| o.params.no_persist = x),
    },
    Field {
        key: Key::new("no_mtu", "b", &["no_mtu"]),
        get: |o| Some(Variant::Bool(o.params.no_mtu)),
        set: |o, k, v| settings::as_bool(k, v).map(|x| o.params.no_mtu = x),
    },
    Field {
        key: Key::new("tries", "as", &["tries"]),
        get: |o| strings(&o.params.tries),
        set: |o, k, v| settings::as_string_list(k, v).map(|x| o.params.tries = x),
    },
    Field {
        key: Key::new("direction", "s", &["direction"]),
        get: |o| o.params.direction.clone().map(Variant::from),
        set: |o, k, v| settings::as_str(k, v).map(|x| o.params.direction = Some(x)),
    },
    Field {
        key: Key::new("detached", "b", &[]),
        get: |o| Some(Variant::Bool(o.detached)),
        set: |o, k, v| settings::as_bool(k, v).map(|b| o.detached = b),
    },
];

impl TuneOptions {
    pub(crate) fn decode(m: &OwnedDict) -> Result<TuneOptions> {
        let mut o = TuneOptions::default();
        let problems = fields::decode_into(TUNE_FIELDS, m, &mut o);
        done(o, problems)
    }

    /// The options as the client sends them (unset ones left out).
    pub(crate) fn encode(&self) -> Dict {
        fields::encode(TUNE_FIELDS, self)
    }

    /// Options with every key set, for the declaration's round trip.
    pub(crate) fn full() -> TuneOptions {
        TuneOptions {
            params: TuneParams {
                interface: "eth0".into(),
                peer: "nas:5201".into(),
                runs: Some(3),
                time_s: Some(4),
                min_gain_percent: Some(2.5),
                confirm_timeout_s: Some(30),
                dry_run: true,
                no_persist: true,
                no_mtu: true,
                tries: vec!["ring rx 4096".into()],
                direction: Some("download".into()),
            },
            detached: true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use zbus::{OwnedVariant, Variant};

    fn dict(pairs: Vec<(&str, Variant<'static>)>) -> OwnedDict {
        pairs
            .into_iter()
            .map(|(k, v)| (k.to_string(), OwnedVariant::try_from(v).unwrap()))
            .collect()
    }

    #[test]
    fn bench_options_decode_and_refuse_by_name() {
        let o = BenchOptions::decode(&dict(vec![
            ("detached", Variant::Bool(true)),
            ("link", Variant::from("eth0")),
        ]))
        .unwrap();
        assert_eq!(
            o,
            BenchOptions {
                detached: true,
                link: Some("eth0".into())
            }
        );
        let e = BenchOptions::decode(&dict(vec![
            ("detached", Variant::from("yes")),
            ("colour", Variant::U8(1)),
        ]))
        .unwrap_err();
        let text = format!("{e:?}");
        assert!(
            text.contains("detached") && text.contains("option colour"),
            "{text}"
        );
    }

    #[test]
    fn tune_options_are_typed_keys_and_encode_back_to_themselves() {
        let o = TuneOptions {
            params: TuneParams {
                interface: "eth0".into(),
                peer: "nas:5201".into(),
                runs: Some(3),
                min_gain_percent: Some(2.5),
                confirm_timeout_s: Some(30),
                no_mtu: true,
                tries: vec!["ring rx 4096".into()],
                ..Default::default()
            },
            detached: true,
        };
        let owned: OwnedDict = o
            .encode()
            .into_iter()
            .map(|(k, v)| (k, OwnedVariant::try_from(v).unwrap()))
            .collect();
        assert_eq!(TuneOptions::decode(&owned).unwrap(), o);
        let e = TuneOptions::decode(&dict(vec![
            ("params", Variant::from("{}")),
            ("runs", Variant::from("three")),
            ("min_gain_percent", Variant::F64(f64::NAN)),
        ]))
        .unwrap_err();
        let text = format!("{e:?}");
        for want in [
            "option params",
            "runs: wrong type",
            "option min_gain_percent",
            "tries (as)",
        ] {
            assert!(text.contains(want), "{want} not in {text}");
        }
    }
}
