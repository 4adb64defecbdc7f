//! The `a{sv}` wire form of what hlctld keeps for everyone to read: history
//! rows (`ListHistory`), baselines (`ListBaselines`), a comparison with a
//! baseline (`Compare`), the tune status (`TuneStatus`) and a rollback's
//! report (`Rollback`). The daemon encodes, the client decodes; every key is
//! named here once and documented in `dbus/org.hlctl.Daemon1.xml`.
//!
//! Headline values travel typed; where a whole report is richer than a
//! dictionary can say well, it also travels whole as JSON in the key `json`.

use std::collections::{BTreeMap, HashMap};

use serde::de::DeserializeOwned;
use zbus::{OwnedVariant, Variant};

use super::error::{Error, Result};
use super::key::Key;
use crate::history::compare::{BaselineInfo, Comparison};
use crate::history::store::{Metric, StoredResult};
use crate::history::{Kind, compare};
use crate::tune::rollback::RollbackReport;
use crate::tune::status::Status;
use crate::usage::answer::{MAX_DAYS, UsageAnswer};

/// A dictionary as the daemon sends it.
pub(crate) type Dict = HashMap<String, Variant<'static>>;
/// A dictionary as the client receives it.
pub(crate) type OwnedDict = HashMap<String, OwnedVariant>;

/// Rows `ListHistory` returns when the filter sets no `limit`.
pub(crate) const DEFAULT_LIMIT: u32 = 50;
/// Most rows one `ListHistory` returns.
pub(crate) const MAX_LIMIT: u32 = 10_000;

/// `ListHistory`'s filter keys and the `hlctl history` flags they come from.
pub(crate) const HISTORY_KEYS: &[Key] = &[
    Key::new("kind", "s", &["kind"]),
    Key::new("since", "x", &["since"]),
    Key::new("limit", "u", &["limit"]),
];
/// `Compare`'s options and `hlctl compare`'s flag.
pub(crate) const COMPARE_KEYS: &[Key] = &[Key::new("threshold", "d", &["threshold"])];
/// `Usage`'s options and `hlctl usage`'s flag.
pub(crate) const USAGE_KEYS: &[Key] = &[Key::new("days", "u", &["days"])];

/// `ListHistory`'s filter: `kind` (s), `since` (x, Unix seconds), `limit` (u).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct HistoryFilter {
    pub(crate) kind: Option<Kind>,
    pub(crate) since: Option<i64>,
    pub(crate) limit: u32,
}

impl HistoryFilter {
    pub(crate) fn encode(&self) -> Dict {
        let mut m = Dict::new();
        if let Some(k) = self.kind {
            m.insert("kind".into(), Variant::from(k.as_str().to_string()));
        }
        if let Some(s) = self.since {
            m.insert("since".into(), Variant::I64(s));
        }
        m.insert("limit".into(), Variant::U32(self.limit));
        m
    }

    /// Decode strictly: unknown keys, wrong types and bad values are errors
    /// naming the key and what is allowed.
    pub(crate) fn decode(m: &OwnedDict) -> Result<HistoryFilter> {
        let mut f = HistoryFilter {
            kind: None,
            since: None,
            limit: DEFAULT_LIMIT,
        };
        for (k, v) in m {
            match k.as_str() {
                "kind" => {
                    let s = <&str>::try_from(&**v).map_err(|_| wrong("kind", "s"))?;
                    f.kind =
                        Some(Kind::parse(s).map_err(|e| Error::InvalidArgument(e.to_string()))?);
                }
                "since" => f.since = Some(i64::try_from(&**v).map_err(|_| wrong("since", "x"))?),
                "limit" => {
                    let n = u32::try_from(&**v).map_err(|_| wrong("limit", "u"))?;
                    if n == 0 || n > MAX_LIMIT {
                        return Err(Error::InvalidArgument(format!(
                            "filter limit {n}: allowed 1 to {MAX_LIMIT}"
                        )));
                    }
                    f.limit = n;
                }
                other => {
                    return Err(Error::InvalidArgument(format!(
                        "filter {}: unknown key; allowed kind (s), since (x), limit (u)",
                        other.chars().take(64).collect::<String>()
                    )));
                }
            }
        }
        Ok(f)
    }
}

fn wrong(key: &str, ty: &str) -> Error {
    Error::InvalidArgument(format!("filter {key}: expected D-Bus type {ty}"))
}

fn s(v: &str) -> Variant<'static> {
    Variant::from(v.to_string())
}

fn json<T: serde::Serialize>(v: &T) -> Variant<'static> {
    s(&serde_json::to_string(v).unwrap_or_default())
}

/// One history row: `id` x, `ts` x (Unix seconds), `kind` s, `host` s,
/// `kernel` s, `interface` s and `peer` s (when there is one), `metrics`
/// a(sssdb) (name, subject, value, unit, higher is better), `settings` a{ss}
/// (the snapshot of the time), `result_json` s (the whole report).
pub(crate) fn encode_row(r: &StoredResult) -> Dict {
    let mut m = Dict::new();
    m.insert("id".into(), Variant::I64(r.id));
    m.insert("ts".into(), Variant::I64(r.ts));
    m.insert("kind".into(), s(&r.kind));
    m.insert("host".into(), s(&r.host));
    m.insert("kernel".into(), s(&r.kernel));
    if let Some(i) = &r.interface {
        m.insert("interface".into(), s(i));
    }
    if let Some(p) = &r.peer {
        m.insert("peer".into(), s(p));
    }
    if let Some(u) = r.uid {
        m.insert("uid".into(), Variant::U32(u));
    }
    let metrics: Vec<(String, String, f64, String, bool)> = r
        .metrics
        .iter()
        .map(|x| {
            (
                x.name.clone(),
                x.subject.clone(),
                x.value,
                x.unit.clone(),
                x.higher_is_better,
            )
        })
        .collect();
    m.insert("metrics".into(), Variant::from(metrics));
    let settings: HashMap<String, String> = r.settings.clone().into_iter().collect();
    m.insert("settings".into(), Variant::from(settings));
    m.insert("result_json".into(), json(&r.result));
    m
}

fn take<'a, T: TryFrom<&'a Variant<'a>>>(m: &'a OwnedDict, key: &str) -> Result<T> {
    let v = m
        .get(key)
        .ok_or_else(|| Error::Failed(format!("hlctld sent a row without {key}")))?;
    T::try_from(&**v).map_err(|_| Error::Failed(format!("hlctld sent {key} of an unexpected type")))
}

fn take_opt<'a, T: TryFrom<&'a Variant<'a>>>(m: &'a OwnedDict, key: &str) -> Result<Option<T>> {
    if m.contains_key(key) {
        take(m, key).map(Some)
    } else {
        Ok(None)
    }
}

fn take_str(m: &OwnedDict, key: &str) -> Result<String> {
    take::<&str>(m, key).map(str::to_string)
}

fn take_json<T: DeserializeOwned>(m: &OwnedDict, key: &str) -> Result<T> {
    serde_json::from_str(&take_str(m, key)?)
        .map_err(|e| Error::Failed(format!("hlctld sent a {key} this hlctl cannot read: {e}")))
}

/// The row [`encode_row`] made.
pub(crate) fn decode_row(m: &OwnedDict) -> Result<StoredResult> {
    let metrics: Vec<(String, String, f64, String, bool)> = {
        let v = m
            .get("metrics")
            .ok_or_else(|| Error::Failed("hlctld sent a row without metrics".into()))?;
        Vec::try_from(
            (**v)
                .try_clone()
                .map_err(|e| Error::Failed(e.to_string()))?,
        )
        .map_err(|_| Error::Failed("hlctld sent metrics of an unexpected type".into()))?
    };
    let settings: HashMap<String, String> = {
        let v = m
            .get("settings")
            .ok_or_else(|| Error::Failed("hlctld sent a row without settings".into()))?;
        HashMap::try_from(
            (**v)
                .try_clone()
                .map_err(|e| Error::Failed(e.to_string()))?,
        )
        .map_err(|_| Error::Failed("hlctld sent settings of an unexpected type".into()))?
    };
    Ok(StoredResult {
        id: take(m, "id")?,
        ts: take(m, "ts")?,
        kind: take_str(m, "kind")?,
        host: take_str(m, "host")?,
        kernel: take_str(m, "kernel")?,
        interface: take_opt::<&str>(m, "interface")?.map(str::to_string),
        peer: take_opt::<&str>(m, "peer")?.map(str::to_string),
        uid: take_opt::<u32>(m, "uid")?,
        metrics: metrics
            .into_iter()
            .map(|(name, subject, value, unit, higher_is_better)| Metric {
                name,
                subject,
                value,
                unit,
                higher_is_better,
            })
            .collect(),
        settings: settings.into_iter().collect::<BTreeMap<_, _>>(),
        result: take_json(m, "result_json")?,
    })
}

/// One baseline: `name` s, `ts` x, `host` s, `metrics` u (how many).
pub(crate) fn encode_baseline(b: &BaselineInfo) -> Dict {
    let mut m = Dict::new();
    m.insert("name".into(), s(&b.name));
    m.insert("ts".into(), Variant::I64(b.ts));
    m.insert("host".into(), s(&b.host));
    m.insert("metrics".into(), Variant::U32(b.metrics as u32));
    m
}

pub(crate) fn decode_baseline(m: &OwnedDict) -> Result<BaselineInfo> {
    Ok(BaselineInfo {
        name: take_str(m, "name")?,
        ts: take(m, "ts")?,
        host: take_str(m, "host")?,
        metrics: take::<u32>(m, "metrics")? as usize,
    })
}

/// A comparison: `baseline` s, `baseline_ts` x, `threshold_percent` d,
/// `regressions` u, `verdicts` a(ssss) (metric, subject, verdict, line of
/// text), `json` s (the whole comparison).
pub(crate) fn encode_comparison(c: &Comparison) -> Dict {
    let mut m = Dict::new();
    m.insert("baseline".into(), s(&c.baseline));
    m.insert("baseline_ts".into(), Variant::I64(c.baseline_ts));
    m.insert(
        "threshold_percent".into(),
        Variant::F64(c.threshold_percent),
    );
    m.insert("regressions".into(), Variant::U32(c.regressions() as u32));
    let verdicts: Vec<(String, String, String, String)> = c
        .metrics
        .iter()
        .map(|x| {
            (
                x.name.clone(),
                x.subject.clone(),
                x.verdict.to_string(),
                x.text.clone(),
            )
        })
        .collect();
    m.insert("verdicts".into(), Variant::from(verdicts));
    m.insert("json".into(), json(c));
    m
}

pub(crate) fn decode_comparison(m: &OwnedDict) -> Result<Comparison> {
    take_json(m, "json")
}

/// Link usage (`Usage`): `links` as (the links answered), `verdicts` as
/// (one per link, in the owner's words), `faster_helps` ab (one per link),
/// `json` s (the whole answer: per link and direction the peak, the 95th
/// percentile, the time above 50/80/95 % of the speed, the bytes, the
/// busiest hours, the verdict's evidence).
pub(crate) fn encode_usage(u: &UsageAnswer) -> Dict {
    let mut m = Dict::new();
    let links: Vec<String> = u.links.iter().map(|l| l.iface.clone()).collect();
    let verdicts: Vec<String> = u.links.iter().map(|l| l.verdict.text.clone()).collect();
    let faster: Vec<bool> = u.links.iter().map(|l| l.verdict.faster_helps).collect();
    m.insert("links".into(), Variant::from(links));
    m.insert("verdicts".into(), Variant::from(verdicts));
    m.insert("faster_helps".into(), Variant::from(faster));
    m.insert("json".into(), json(u));
    m
}

pub(crate) fn decode_usage(m: &OwnedDict) -> Result<UsageAnswer> {
    take_json(m, "json")
}

/// `Usage`'s options: `days` (u, 1 to 3660, default 30).
pub(crate) fn usage_days(m: &OwnedDict) -> Result<u32> {
    let mut days = DEFAULT_USAGE_DAYS;
    for (k, v) in m {
        match k.as_str() {
            "days" => {
                days = u32::try_from(&**v).map_err(|_| {
                    Error::InvalidArgument("option days: expected D-Bus type u".into())
                })?;
                if !(1..=MAX_DAYS).contains(&days) {
                    return Err(Error::InvalidArgument(format!(
                        "option days {days}: allowed 1 to {MAX_DAYS}"
                    )));
                }
            }
            other => {
                return Err(Error::InvalidArgument(format!(
                    "option {}: unknown; allowed days (u)",
                    other.chars().take(64).collect::<String>()
                )));
            }
        }
    }
    Ok(days)
}

/// The days `Usage` looks back when not told.
pub(crate) const DEFAULT_USAGE_DAYS: u32 = 30;

/// The tune status: `pending` u and `last_tunes` u (how many of each),
/// `deadlines` a(ssx) (interface, tune id, deadline in Unix milliseconds of
/// every pending checkpoint), `json` s (the whole status).
pub(crate) fn encode_status(st: &Status) -> Dict {
    let mut m = Dict::new();
    m.insert("pending".into(), Variant::U32(st.pending.len() as u32));
    m.insert(
        "last_tunes".into(),
        Variant::U32(st.last_tunes.len() as u32),
    );
    let deadlines: Vec<(String, String, i64)> = st
        .pending
        .iter()
        .map(|p| {
            (
                p.journal.interface.clone(),
                p.journal.tune_id.clone(),
                p.journal.deadline_ms,
            )
        })
        .collect();
    m.insert("deadlines".into(), Variant::from(deadlines));
    m.insert("json".into(), json(st));
    m
}

pub(crate) fn decode_status(m: &OwnedDict) -> Result<Status> {
    take_json(m, "json")
}

/// A rollback: `pending_restored` u (unfinished tunes restored), `undone` u
/// (finished tunes undone), `failed` b (a restore failed), `json` s (the
/// whole report).
pub(crate) fn encode_rollback(r: &RollbackReport) -> Dict {
    let mut m = Dict::new();
    m.insert(
        "pending_restored".into(),
        Variant::U32(r.pending_restored.len() as u32),
    );
    m.insert("undone".into(), Variant::U32(r.undone.len() as u32));
    let failed = r.pending_restored.iter().any(|p| !p.errors.is_empty());
    m.insert("failed".into(), Variant::Bool(failed));
    m.insert("json".into(), json(r));
    m
}

pub(crate) fn decode_rollback(m: &OwnedDict) -> Result<RollbackReport> {
    take_json(m, "json")
}

/// The compare options: `threshold` d (percent, 0..=1000).
pub(crate) fn compare_threshold(m: &OwnedDict) -> Result<f64> {
    let mut t = compare::DEFAULT_THRESHOLD;
    for (k, v) in m {
        match k.as_str() {
            "threshold" => {
                t = f64::try_from(&**v).map_err(|_| {
                    Error::InvalidArgument("option threshold: expected D-Bus type d".into())
                })?
            }
            other => {
                return Err(Error::InvalidArgument(format!(
                    "option {}: unknown; allowed threshold (d)",
                    other.chars().take(64).collect::<String>()
                )));
            }
        }
    }
    if !(0.0..=1000.0).contains(&t) {
        return Err(Error::InvalidArgument(format!(
            "option threshold {t}: allowed 0 to 1000 (percent)"
        )));
    }
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by the history_json fuzz target: a stored result holding a
    /// number serde_json's default (best-effort) float parser rounds off by
    /// one ULP came back from the bus row as another number.
    #[test]
    fn a_row_keeps_every_bit_of_its_numbers() {
        let text = "666666666666666666666666666666666666666662";
        let row = StoredResult {
            id: 1,
            ts: 0,
            kind: "doctor".into(),
            host: String::new(),
            kernel: String::new(),
            interface: None,
            peer: None,
            uid: None,
            metrics: Vec::new(),
            settings: Default::default(),
            result: serde_json::from_str(text).unwrap(),
        };
        let owned: OwnedDict = encode_row(&row)
            .into_iter()
            .map(|(k, v)| (k, crate::dbus::wire::typed::owned(v)))
            .collect();
        assert_eq!(decode_row(&owned).unwrap(), row);
    }
}
