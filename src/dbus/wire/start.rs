//! The options of the methods that start a job, as both sides spell them:
//! `StartBenchmark`'s (`detached` b, `link` s) and `Tune`'s (the tune's
//! parameters as typed keys, `detached` b). Decoded strictly: every problem
//! at once, naming the option and what is allowed.

use zbus::Variant;

use super::error::{Error, Result};
use super::records::{Dict, OwnedDict};
use super::settings;
use crate::problem::{Problem, join};
use crate::tune::params::TuneParams;

fn unknown(key: &str, allowed: &str) -> Problem {
    Problem::new(
        format!("option {}", key.chars().take(64).collect::<String>()),
        None,
        format!("unknown option: allowed {allowed}"),
    )
}

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

impl BenchOptions {
    pub(crate) fn decode(m: &OwnedDict) -> Result<BenchOptions> {
        let mut o = BenchOptions::default();
        let mut problems = Vec::new();
        for (k, v) in m {
            let r = match k.as_str() {
                "detached" => settings::as_bool(k, v).map(|b| o.detached = b),
                "link" => settings::as_str(k, v).map(|s| o.link = Some(s)),
                other => Err(unknown(other, "detached (b), link (s)")),
            };
            problems.extend(r.err());
        }
        done(o, problems)
    }
}

/// `Tune`'s options: the tune's parameters, each a typed key (as `hlctl
/// tune`'s flags), and `detached`.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct TuneOptions {
    pub(crate) params: TuneParams,
    pub(crate) detached: bool,
}

/// Every key of `Tune`'s options, for the error naming an unknown one.
const TUNE_KEYS: &str = "interface (s), peer (s), runs (u), time_s (u), min_gain_percent (d), confirm_timeout_s (u), dry_run (b), no_persist (b), no_mtu (b), tries (as), detached (b)";

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

impl TuneOptions {
    pub(crate) fn decode(m: &OwnedDict) -> Result<TuneOptions> {
        let mut o = TuneOptions::default();
        let mut problems = Vec::new();
        for (k, v) in m {
            let p = &mut o.params;
            let r = match k.as_str() {
                "interface" => settings::as_str(k, v).map(|x| p.interface = x),
                "peer" => settings::as_str(k, v).map(|x| p.peer = x),
                "runs" => settings::as_u32(k, v).map(|x| p.runs = Some(x)),
                "time_s" => settings::as_u32(k, v).map(|x| p.time_s = Some(x)),
                "min_gain_percent" => as_f64(k, v).map(|x| p.min_gain_percent = Some(x)),
                "confirm_timeout_s" => {
                    settings::as_u32(k, v).map(|x| p.confirm_timeout_s = Some(x.into()))
                }
                "dry_run" => settings::as_bool(k, v).map(|x| p.dry_run = x),
                "no_persist" => settings::as_bool(k, v).map(|x| p.no_persist = x),
                "no_mtu" => settings::as_bool(k, v).map(|x| p.no_mtu = x),
                "tries" => settings::as_string_list(k, v).map(|x| p.tries = x),
                "detached" => settings::as_bool(k, v).map(|b| o.detached = b),
                other => Err(unknown(other, TUNE_KEYS)),
            };
            problems.extend(r.err());
        }
        done(o, problems)
    }

    /// The options as the client sends them (unset ones left out).
    pub(crate) fn encode(&self) -> Dict {
        let p = &self.params;
        let mut m = Dict::new();
        m.insert("interface".into(), Variant::from(p.interface.clone()));
        m.insert("peer".into(), Variant::from(p.peer.clone()));
        let mut opt = |k: &str, v: Option<Variant<'static>>| {
            if let Some(v) = v {
                m.insert(k.into(), v);
            }
        };
        opt("runs", p.runs.map(Variant::U32));
        opt("time_s", p.time_s.map(Variant::U32));
        opt("min_gain_percent", p.min_gain_percent.map(Variant::F64));
        opt(
            "confirm_timeout_s",
            p.confirm_timeout_s
                .map(|s| Variant::U32(u32::try_from(s).unwrap_or(u32::MAX))),
        );
        m.insert("dry_run".into(), Variant::Bool(p.dry_run));
        m.insert("no_persist".into(), Variant::Bool(p.no_persist));
        m.insert("no_mtu".into(), Variant::Bool(p.no_mtu));
        m.insert("tries".into(), Variant::from(p.tries.clone()));
        m.insert("detached".into(), Variant::Bool(self.detached));
        m
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
