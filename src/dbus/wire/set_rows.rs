//! The typed reply of `Link.ApplyChanges`: one row per setting
//! `a(ssssss)` (setting, before, requested, after, status, message) and an
//! `a{sv}` summary. A row names its setting by the key `ApplyChanges` takes
//! (`ring.rx`, `feature.rx-gro`: [`registry::dbus_key_of`]). The daemon encodes a [`SetReply`]; hlctl decodes it back
//! into the same [`SetReply`], so `hlctl set` prints the same on both paths.
//!
//! A value as text: a number in decimal, `on`/`off`, `full`/`half`, link modes
//! separated by one space, "" when the driver reports none (and `after` is ""
//! in a dry run). The setting's name says which type its text is.

use std::collections::HashMap;

use serde_json::Value;
use zbus::OwnedVariant;

use super::typed::{get, non_empty, owned};
use crate::nic::apply::{Failure, Outcome};
use crate::nic::diff::{SettingResult, Status, Summary};
use crate::nic::registry::{self, Kind};
use crate::nic::set::SetReply;

/// One row: setting, before, requested, after, status, message.
pub type Row = (String, String, String, String, String, String);

/// The summary's keys with their D-Bus types (all always present).
#[cfg_attr(not(test), expect(dead_code, reason = "only the unit tests use it"))]
pub(crate) const SUMMARY_KEYS: &[(&str, &str)] = &[
    ("interface", "s"),
    ("dry_run", "b"),
    ("changed", "u"),
    ("statuses", "a{su}"),
    ("failed_step", "s"),
    ("error", "s"),
    ("errno", "i"),
    ("extack", "s"),
    ("restore_errors", "as"),
    ("persisted", "s"),
    ("persisted_through", "as"),
    ("persist_error", "s"),
];

/// A setting value as row text (the registry's one spelling).
pub(crate) fn text(v: &Value) -> String {
    registry::value_text(v)
}

/// Row text back into the value of `setting`, by the setting's kind in the
/// registry (a feature or an unknown name stays text).
pub(crate) fn value(setting: &str, t: &str) -> Value {
    if t.is_empty() {
        return Value::Null;
    }
    match registry::by_name(setting).map(|s| s.kind) {
        Some(Kind::Modes) => Value::Array(t.split(' ').map(|m| Value::String(m.into())).collect()),
        Some(Kind::U32) => t
            .parse::<u64>()
            .map_or_else(|_| Value::String(t.to_string()), Value::from),
        _ => Value::String(t.to_string()),
    }
}

fn status_name(s: Status) -> String {
    serde_json::to_value(s)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

fn u32_of(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// Encode a reply: the rows and the summary.
pub(crate) fn encode(r: &SetReply) -> (Vec<Row>, HashMap<String, OwnedVariant>) {
    let o = &r.outcome;
    let rows = o
        .settings
        .iter()
        .map(|s| {
            (
                registry::dbus_key_of(&s.setting),
                text(&s.before),
                text(&s.requested),
                s.after.as_ref().map(text).unwrap_or_default(),
                status_name(s.status),
                s.reason.clone().unwrap_or_default(),
            )
        })
        .collect();
    let statuses: HashMap<String, u32> = o
        .summary
        .statuses
        .iter()
        .map(|(s, n)| (status_name(*s), u32_of(*n)))
        .collect();
    let f = o.failure.as_ref();
    let mut m = HashMap::new();
    let mut put = |k: &str, v: OwnedVariant| {
        m.insert(k.to_string(), v);
    };
    put("interface", owned(o.interface.clone()));
    put("dry_run", owned(o.dry_run));
    put("changed", owned(u32_of(o.summary.changed)));
    put("statuses", owned(statuses));
    put(
        "failed_step",
        owned(f.map(|f| f.step.clone()).unwrap_or_default()),
    );
    put(
        "error",
        owned(f.map(|f| f.error.clone()).unwrap_or_default()),
    );
    put("errno", owned(f.map_or(0, |f| f.errno)));
    put(
        "extack",
        owned(f.and_then(|f| f.extack.clone()).unwrap_or_default()),
    );
    put("restore_errors", owned(o.restore_errors.clone()));
    put("persisted", owned(r.persisted.clone().unwrap_or_default()));
    put("persisted_through", owned(r.persisted_through.clone()));
    put(
        "persist_error",
        owned(r.persist_error.clone().unwrap_or_default()),
    );
    (rows, m)
}

/// Decode the rows and summary back into the reply they encode.
pub(crate) fn decode(
    rows: Vec<Row>,
    m: &HashMap<String, OwnedVariant>,
) -> Result<SetReply, String> {
    let dry_run: bool = get(m, "dry_run")?;
    let status = |s: &str| -> Result<Status, String> {
        serde_json::from_value(Value::String(s.into())).map_err(|_| format!("unknown status `{s}`"))
    };
    let settings = rows
        .into_iter()
        .map(|(key, before, requested, after, st, message)| {
            let setting = registry::name_of_dbus_key(&key);
            Ok(SettingResult {
                before: value(&setting, &before),
                requested: value(&setting, &requested),
                after: (!dry_run).then(|| value(&setting, &after)),
                status: status(&st)?,
                reason: non_empty(message),
                setting,
            })
        })
        .collect::<Result<Vec<_>, String>>()?;
    let counts: HashMap<String, u32> = get(m, "statuses")?;
    let mut statuses = std::collections::BTreeMap::new();
    for (s, n) in counts {
        statuses.insert(status(&s)?, n as usize);
    }
    let failed_step: String = get(m, "failed_step")?;
    let failure = match non_empty(failed_step) {
        Some(step) => Some(Failure {
            step,
            error: get(m, "error")?,
            errno: get(m, "errno")?,
            // A daemon from before the key existed does not send it.
            extack: get::<String>(m, "extack").ok().and_then(non_empty),
        }),
        None => None,
    };
    let changed: u32 = get(m, "changed")?;
    Ok(SetReply {
        outcome: Outcome {
            interface: get(m, "interface")?,
            dry_run,
            settings,
            summary: Summary {
                changed: changed as usize,
                statuses,
            },
            failure,
            restore_errors: get(m, "restore_errors")?,
        },
        persisted: non_empty(get(m, "persisted")?),
        persisted_through: get(m, "persisted_through")?,
        persist_error: non_empty(get(m, "persist_error")?),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn row(setting: &str, before: Value, requested: Value, after: Option<Value>) -> SettingResult {
        SettingResult {
            setting: setting.into(),
            before,
            requested,
            after,
            status: Status::Adjusted,
            reason: Some("why".into()),
        }
    }

    #[test]
    fn a_reply_round_trips_through_rows_and_summary() {
        let reply = SetReply {
            outcome: Outcome {
                interface: "eth0".into(),
                dry_run: false,
                settings: vec![
                    row("ring rx", json!(256), json!(4000), Some(json!(4096))),
                    row("pause rx", json!("on"), json!("off"), Some(json!("on"))),
                    row("link duplex", Value::Null, json!("full"), Some(Value::Null)),
                    row(
                        "link advertise",
                        json!(["1000baseT/Full", "100baseT/Full"]),
                        json!(["1000baseT/Full"]),
                        Some(json!(["1000baseT/Full"])),
                    ),
                    row(
                        "coalesce adaptive-rx",
                        json!("off"),
                        json!("on"),
                        Some(json!("on")),
                    ),
                    row(
                        "feature rx-gro",
                        json!("on"),
                        json!("off"),
                        Some(json!("off")),
                    ),
                ],
                summary: Summary {
                    changed: 2,
                    statuses: [(Status::Adjusted, 6)].into(),
                },
                failure: Some(Failure {
                    step: "rings".into(),
                    error: "Invalid argument".into(),
                    errno: 22,
                    extack: Some("requested ring size exceeds maximum".into()),
                }),
                restore_errors: vec!["mtu: busy".into()],
            },
            persisted: Some("/var/lib/hlctl/nic-settings.json".into()),
            persisted_through: Vec::new(),
            persist_error: None,
        };
        let (rows, summary) = encode(&reply);
        // Each row names the key ApplyChanges takes.
        let keys: Vec<&str> = rows.iter().map(|r| r.0.as_str()).collect();
        assert_eq!(
            keys,
            [
                "ring.rx",
                "pause.rx",
                "link.duplex",
                "link.advertise",
                "coalesce.adaptive-rx",
                "feature.rx-gro"
            ]
        );
        assert_eq!(rows[0].3, "4096");
        assert_eq!(rows[3].1, "1000baseT/Full 100baseT/Full");
        assert_eq!(rows[0].4, "adjusted");
        let mut keys: Vec<&str> = summary.keys().map(String::as_str).collect();
        keys.sort();
        let mut want: Vec<&str> = SUMMARY_KEYS.iter().map(|(k, _)| *k).collect();
        want.sort();
        assert_eq!(keys, want);
        let back = decode(rows, &summary).unwrap();
        assert_eq!(
            serde_json::to_value(&back).unwrap(),
            serde_json::to_value(&reply).unwrap()
        );
    }

    #[test]
    fn a_dry_run_has_no_after_values() {
        let reply = SetReply {
            outcome: Outcome {
                interface: "eth0".into(),
                dry_run: true,
                settings: vec![SettingResult {
                    status: Status::Planned,
                    reason: None,
                    ..row("mtu", json!(1500), json!(9000), None)
                }],
                summary: Summary::default(),
                failure: None,
                restore_errors: vec![],
            },
            persisted: None,
            persisted_through: Vec::new(),
            persist_error: None,
        };
        let (rows, summary) = encode(&reply);
        let back = decode(rows, &summary).unwrap();
        assert_eq!(
            serde_json::to_value(&back).unwrap(),
            serde_json::to_value(&reply).unwrap()
        );
    }
}
