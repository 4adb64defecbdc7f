//! The options of the methods that start a job, as both sides spell them:
//! `StartBenchmark`'s (`detached` b, `link` s) and `Tune`'s (`params` s,
//! `detached` b). Decoded strictly: every problem at once, naming the option
//! and what is allowed.

use super::error::{Error, Result};
use super::records::OwnedDict;
use super::settings;
use crate::problem::{Problem, join};

/// The longest tune `params` JSON accepted.
pub(crate) const MAX_TUNE_PARAMS: usize = 64 * 1024;

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

/// `Tune`'s options.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct TuneOptions {
    /// The tune's parameters as a JSON object.
    pub(crate) params: Option<String>,
    pub(crate) detached: bool,
}

impl TuneOptions {
    pub(crate) fn decode(m: &OwnedDict) -> Result<TuneOptions> {
        let mut o = TuneOptions::default();
        let mut problems = Vec::new();
        for (k, v) in m {
            let r = match k.as_str() {
                "params" => match &**v {
                    zbus::Variant::Str(s) if s.len() <= MAX_TUNE_PARAMS => {
                        o.params = Some(s.to_string());
                        Ok(())
                    }
                    zbus::Variant::Str(s) => Err(Problem::new(
                        "option params",
                        None,
                        format!(
                            "{} bytes of JSON: at most {MAX_TUNE_PARAMS} allowed",
                            s.len()
                        ),
                    )),
                    _ => Err(Problem::new(
                        "option params",
                        None,
                        "wrong type: expected a JSON object in a string (D-Bus type s)",
                    )),
                },
                "detached" => settings::as_bool(k, v).map(|b| o.detached = b),
                other => Err(unknown(other, "params (s), detached (b)")),
            };
            problems.extend(r.err());
        }
        done(o, problems)
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
    fn tune_options_bound_the_params() {
        let big = "x".repeat(MAX_TUNE_PARAMS + 1);
        let e = TuneOptions::decode(&dict(vec![("params", Variant::from(big))])).unwrap_err();
        assert!(format!("{e:?}").contains("65537 bytes"), "{e:?}");
        let o = TuneOptions::decode(&dict(vec![("params", Variant::from("{}"))])).unwrap();
        assert_eq!(o.params.as_deref(), Some("{}"));
    }
}
