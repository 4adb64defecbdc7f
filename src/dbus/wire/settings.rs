//! The `a{sv}` wire form of a [`ChangeSet`] (`Link.ApplyChanges`) and of
//! method options, used by both the daemon (decode, strictly) and the client
//! (encode).
//!
//! Keys, one per setting of [`crate::nic::registry`], as `hlctl set` words
//! joined by a dot (`mtu`, `ring.rx`, `link.advertise`), typed by the setting's
//! kind (u, b, s `half`|`full`, as); features as `feature.<name>` b (kernel or
//! ethtool short name). [`keys`] lists them all.
//! Any unsigned or signed integer type is accepted for `u` when its value fits
//! 0..=4294967295. Every problem is reported at once, naming the setting and
//! what is allowed.

use std::collections::HashMap;

use serde_json::{Value, json};
use zbus::{OwnedVariant, Variant};

use super::key::Key;
use crate::nic::model::ChangeSet;
use crate::nic::registry::{self, Kind, Setting, SettingValue};
use crate::problem::Problem;

/// Longest key or string value accepted (feature names are under 40 bytes).
pub(crate) const MAX_STR: usize = 256;
/// Most entries accepted in one dictionary.
pub(crate) const MAX_ENTRIES: usize = 512;

const U32_ALLOWED: &str = "expected a whole number 0 to 4294967295 (D-Bus type u)";

/// The key family of features (`feature.<name>`), with its D-Bus type.
const FEATURE_KEY: (&str, &str) = ("feature.<name>", "b");

/// Every key with its D-Bus type (from the settings table), for error messages and docs.
pub(crate) fn keys() -> Vec<(String, &'static str)> {
    registry::SETTINGS
        .iter()
        .map(|s| (s.dbus_key(), s.kind.dbus_type()))
        .chain([(FEATURE_KEY.0.to_string(), FEATURE_KEY.1)])
        .collect()
}

/// A key shortened for an error message (keys may be huge when malformed).
fn shown(key: &str) -> String {
    if key.len() <= 64 {
        return key.to_string();
    }
    let mut end = 64;
    while !key.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}... ({} bytes)", &key[..end], key.len())
}

/// The setting as `hlctl set` names it: `ring.rx` → `ring rx`.
fn setting(key: &str) -> String {
    shown(key).replacen('.', " ", 1)
}

fn variant_type(v: &Variant<'_>) -> String {
    v.value_signature().to_string()
}

/// Any integer variant as u32, or a problem.
pub(crate) fn as_u32(key: &str, v: &Variant<'_>) -> Result<u32, Problem> {
    let n: i128 = match v {
        Variant::U8(n) => (*n).into(),
        Variant::U16(n) => (*n).into(),
        Variant::U32(n) => (*n).into(),
        Variant::U64(n) => (*n).into(),
        Variant::I16(n) => (*n).into(),
        Variant::I32(n) => (*n).into(),
        Variant::I64(n) => (*n).into(),
        other => {
            return Err(Problem::new(
                setting(key),
                None,
                format!("wrong type {}: {U32_ALLOWED}", variant_type(other)),
            ));
        }
    };
    u32::try_from(n).map_err(|_| {
        let why = if n < 0 { "negative" } else { "too large" };
        Problem::new(
            setting(key),
            Some(&n.to_string()),
            format!("{why}: {U32_ALLOWED}"),
        )
    })
}

/// A boolean variant, or a problem.
pub(crate) fn as_bool(key: &str, v: &Variant<'_>) -> Result<bool, Problem> {
    match v {
        Variant::Bool(b) => Ok(*b),
        other => Err(Problem::new(
            setting(key),
            None,
            format!(
                "wrong type {}: expected a boolean (D-Bus type b)",
                variant_type(other)
            ),
        )),
    }
}

/// A string variant of at most [`MAX_STR`] bytes, or a problem.
pub(crate) fn as_str(key: &str, v: &Variant<'_>) -> Result<String, Problem> {
    match v {
        Variant::Str(s) if s.len() <= MAX_STR => Ok(s.as_str().to_string()),
        Variant::Str(s) => Err(Problem::new(
            setting(key),
            None,
            format!("string of {} bytes: at most {MAX_STR} allowed", s.len()),
        )),
        other => Err(Problem::new(
            setting(key),
            None,
            format!(
                "wrong type {}: expected a string (D-Bus type s)",
                variant_type(other)
            ),
        )),
    }
}

fn as_strings(key: &str, v: &Variant<'_>) -> Result<Vec<String>, Problem> {
    let wrong = |sig: String| {
        Problem::new(
            setting(key),
            None,
            format!("wrong type {sig}: expected an array of strings (D-Bus type as)"),
        )
    };
    let Variant::Array(a) = v else {
        return Err(wrong(variant_type(v)));
    };
    if a.len() > MAX_ENTRIES {
        return Err(Problem::new(
            setting(key),
            None,
            format!("{} entries: at most {MAX_ENTRIES} allowed", a.len()),
        ));
    }
    a.inner()
        .iter()
        .map(|e| match e {
            Variant::Str(_) => as_str(key, e),
            _ => Err(wrong(variant_type(v))),
        })
        .collect()
}

fn feature_name_ok(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// Decode `ApplyChanges` settings. Every problem is collected.
pub(crate) fn decode_changes(
    map: &HashMap<String, OwnedVariant>,
) -> Result<ChangeSet, Vec<Problem>> {
    let mut cs = ChangeSet::default();
    let mut p = size_problems(map);
    if map.len() > MAX_ENTRIES {
        return Err(p);
    }
    // Sorted, so the problems come out in a stable order.
    let mut keys: Vec<&String> = map.keys().collect();
    keys.sort();
    for key in keys {
        let v: &Variant<'_> = &map[key];
        let decoded = match registry::by_dbus_key(key) {
            Some(s) => decode_setting(s, key, v).map(|val| (s.put)(&mut cs, &val)),
            None => decode_feature(key, v).map(|(name, on)| {
                cs.features.insert(name, on);
            }),
        };
        if let Err(e) = decoded {
            p.push(e);
        }
    }
    if p.is_empty() { Ok(cs) } else { Err(p) }
}

/// An empty or oversized dictionary.
fn size_problems(map: &HashMap<String, OwnedVariant>) -> Vec<Problem> {
    let mut p = Vec::new();
    if map.is_empty() {
        p.push(Problem::new(
            "settings",
            None,
            "nothing to set: give at least one setting key",
        ));
    }
    if map.len() > MAX_ENTRIES {
        p.push(Problem::new(
            "settings",
            None,
            format!("{} settings: at most {MAX_ENTRIES} allowed", map.len()),
        ));
    }
    p
}

/// One table setting's variant as the table's value of its kind.
fn decode_setting(s: &Setting, key: &str, v: &Variant<'_>) -> Result<Value, Problem> {
    match s.kind {
        Kind::U32 => as_u32(key, v).map(|n| json!(n)),
        Kind::Bool => as_bool(key, v).map(|b| b.to_value()),
        Kind::Duplex => match as_str(key, v)?.as_str() {
            d @ ("half" | "full") => Ok(json!(d)),
            other => Err(Problem::new(s.name(), Some(other), "expected half or full")),
        },
        Kind::Modes => match as_strings(key, v)? {
            modes if modes.is_empty() => Err(Problem::new(
                s.name(),
                None,
                "missing link modes, e.g. [\"1000baseT/Full\", \"100baseT/Full\"]",
            )),
            modes => Ok(json!(modes)),
        },
        Kind::Cpus => {
            let t = as_str(key, v)?;
            crate::cpu::cpulist::canonical(&t)
                .map(|l| json!(l))
                .ok_or_else(|| {
                    Problem::new(
                        s.name(),
                        Some(&t),
                        "expected a CPU list such as 0-3,6, or none",
                    )
                })
        }
        Kind::CpuMap => {
            let t = as_str(key, v)?;
            crate::cpu::cpulist::canonical_map(&t)
                .map(|m| json!(m))
                .ok_or_else(|| {
                    Problem::new(
                        s.name(),
                        Some(&t),
                        "expected one CPU list per queue separated by /, such as 0/1, or none",
                    )
                })
        }
    }
}

/// `feature.<name>` → (name, on), or the problem with the key.
fn decode_feature(key: &str, v: &Variant<'_>) -> Result<(String, bool), Problem> {
    match key.strip_prefix("feature.") {
        Some(name) if feature_name_ok(name) => Ok((name.to_string(), as_bool(key, v)?)),
        Some(_) => Err(Problem::new(
            setting(key),
            None,
            "not a feature name: letters, digits, '-' and '_', at most 64 bytes",
        )),
        None => Err(Problem::new(
            shown(key),
            None,
            format!(
                "unknown setting: allowed {}",
                keys()
                    .iter()
                    .map(|(k, t)| format!("{k} ({t})"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )),
    }
}

/// A registry value (as [`registry::Setting::read`] and `get` give it) in
/// its D-Bus type; `None` for a null or a value not of that kind.
pub(crate) fn to_variant(kind: Kind, v: &Value) -> Option<Variant<'static>> {
    match kind {
        Kind::U32 => u32::from_value(v).map(Variant::U32),
        Kind::Bool => bool::from_value(v).map(Variant::Bool),
        Kind::Duplex => v.as_str().map(|d| Variant::from(d.to_string())),
        Kind::Modes => Vec::<String>::from_value(v).map(Variant::from),
        Kind::Cpus | Kind::CpuMap => String::from_value(v).map(Variant::from),
    }
}

/// Encode a change set for `ApplyChanges`.
pub(crate) fn encode_changes(cs: &ChangeSet) -> HashMap<String, Variant<'static>> {
    let mut m: HashMap<String, Variant<'static>> = HashMap::new();
    for s in registry::SETTINGS {
        let Some(v) = (s.get)(cs) else { continue };
        if let Some(variant) = to_variant(s.kind, &v) {
            m.insert(s.dbus_key(), variant);
        }
    }
    for (name, on) in &cs.features {
        m.insert(format!("feature.{name}"), Variant::Bool(*on));
    }
    m
}

/// Boolean options of a method (`dry_run`, `persist`, `detached`): unknown
/// keys and wrong types are problems.
pub(crate) fn decode_flags(
    map: &HashMap<String, OwnedVariant>,
    allowed: &[&str],
) -> Result<HashMap<String, bool>, Vec<Problem>> {
    let mut out = HashMap::new();
    let mut p = Vec::new();
    for (k, v) in map {
        if !allowed.contains(&k.as_str()) {
            p.push(Problem::new(
                format!("option {}", shown(k)),
                None,
                format!("unknown option: allowed {} (all b)", allowed.join(", ")),
            ));
            continue;
        }
        match as_bool(k, v) {
            Ok(b) => {
                out.insert(k.clone(), b);
            }
            Err(e) => p.push(Problem {
                setting: format!("option {k}"),
                ..e
            }),
        }
    }
    if p.is_empty() { Ok(out) } else { Err(p) }
}

/// The options of a change (`Link.ApplyChanges`, `Manager.SetSysctl`) and
/// the flags of `hlctl set` and `hlctl sysctl` they come from.
pub(crate) const CHANGE_KEYS: &[Key] = &[
    Key::new("dry_run", "b", &["dry_run"]),
    Key::new("persist", "b", &["persist"]),
    Key::new("rollback_timeout_s", "u", &["try_s"]),
];

/// The options of `ApplyChanges` and `SetSysctl`, as
/// [`decode_change_options`] reads them back (one encoder for both calls).
pub(crate) fn encode_change_options(
    dry_run: bool,
    persist: bool,
    try_s: u32,
) -> HashMap<&'static str, Variant<'static>> {
    let mut opts = HashMap::new();
    opts.insert(CHANGE_KEYS[0].name, Variant::Bool(dry_run));
    opts.insert(CHANGE_KEYS[1].name, Variant::Bool(persist));
    if try_s > 0 {
        opts.insert(CHANGE_KEYS[2].name, Variant::U32(try_s));
    }
    opts
}

/// The options of a change (`Link.ApplyChanges`, `Manager.SetSysctl`):
/// the flags `dry_run` and `persist`, and `rollback_timeout_s` (u, seconds
/// up to `max_try_s`; 0 or absent: no try).
pub(crate) fn decode_change_options(
    map: &HashMap<String, OwnedVariant>,
    max_try_s: u32,
) -> Result<(HashMap<String, bool>, u32), Vec<Problem>> {
    const TRY: &str = "rollback_timeout_s";
    let flags: HashMap<String, OwnedVariant> = map
        .iter()
        .filter(|(k, _)| k.as_str() != TRY)
        .filter_map(|(k, v)| v.try_clone().ok().map(|v| (k.clone(), v)))
        .collect();
    let mut problems = Vec::new();
    let timeout = match map.get(TRY) {
        None => 0,
        Some(v) => as_u32_in(TRY, v, 0, max_try_s).unwrap_or_else(|p| {
            problems.push(p);
            0
        }),
    };
    match decode_flags(&flags, &["dry_run", "persist"]) {
        Ok(f) if problems.is_empty() => Ok((f, timeout)),
        Ok(_) => Err(problems),
        Err(mut p) => {
            p.extend(problems);
            Err(p)
        }
    }
}

/// A change's options read as the one [`ChangeMode`] precedence says.
///
/// [`ChangeMode`]: crate::ops::try_change::ChangeMode
pub(crate) fn decode_change_mode(
    map: &HashMap<String, OwnedVariant>,
    max_try_s: u32,
) -> Result<crate::ops::try_change::ChangeMode, Vec<Problem>> {
    let (flags, try_s) = decode_change_options(map, max_try_s)?;
    let flag = |k: &str| flags.get(k).copied().unwrap_or(false);
    Ok(crate::ops::try_change::ChangeMode::new(
        flag("dry_run"),
        flag("persist"),
        Some(try_s),
    ))
}

/// A `u` option that must lie in `lo..=hi`.
pub(crate) fn as_u32_in(key: &str, v: &Variant<'_>, lo: u32, hi: u32) -> Result<u32, Problem> {
    let n = as_u32(key, v)?;
    if (lo..=hi).contains(&n) {
        Ok(n)
    } else {
        Err(Problem::new(
            format!("option {key}"),
            Some(&n.to_string()),
            format!("allowed {lo} to {hi}"),
        ))
    }
}

/// An `as` option of bounded size.
pub(crate) fn as_string_list(key: &str, v: &Variant<'_>) -> Result<Vec<String>, Problem> {
    let list = <Vec<String>>::try_from(
        v.try_clone()
            .map_err(|e| Problem::new(format!("option {key}"), None, e.to_string()))?,
    )
    .map_err(|_| Problem::new(format!("option {key}"), None, "expected D-Bus type as"))?;
    if list.len() > MAX_ENTRIES || list.iter().any(|s| s.len() > MAX_STR) {
        return Err(Problem::new(
            format!("option {key}"),
            None,
            format!("at most {MAX_ENTRIES} strings of at most {MAX_STR} bytes"),
        ));
    }
    Ok(list)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nic::change;

    #[test]
    fn change_options_take_a_bounded_rollback_timeout() {
        let opt = |k: &str, v: Variant<'_>| -> HashMap<String, OwnedVariant> {
            [(k.to_string(), v.try_to_owned().unwrap())].into()
        };
        let (f, t) =
            decode_change_options(&opt("rollback_timeout_s", Variant::U32(30)), 60).unwrap();
        assert_eq!((f.len(), t), (0, 30));
        let (f, t) = decode_change_options(&opt("persist", Variant::Bool(true)), 60).unwrap();
        assert_eq!((f.get("persist").copied(), t), (Some(true), 0));
        let too_long = decode_change_options(&opt("rollback_timeout_s", Variant::U32(61)), 60);
        assert!(
            too_long.unwrap_err()[0]
                .to_string()
                .contains("allowed 0 to 60")
        );
        let wrong = decode_change_options(&opt("rollback_timeout_s", Variant::Bool(true)), 60);
        assert!(wrong.is_err());
        assert!(decode_change_options(&opt("keep", Variant::Bool(true)), 60).is_err());
    }

    fn owned(m: HashMap<String, Variant<'static>>) -> HashMap<String, OwnedVariant> {
        m.into_iter()
            .map(|(k, v)| (k, OwnedVariant::try_from(v).unwrap()))
            .collect()
    }

    #[test]
    fn every_cli_setting_round_trips() {
        let words: Vec<String> =
            "mtu 9000 txqueuelen 5000 gso-max-size 131072 ring rx 4096 tx 512 rx-mini 1 rx-jumbo 2 \
            pause autoneg off rx on tx off feature gro off rx-gro-hw on \
            link speed 1000 duplex full autoneg on advertise 1000baseT/Full 100baseT/Full \
            channels rx 1 tx 2 other 1 combined 4 \
            coalesce rx-usecs 50 tx-usecs 60 rx-frames 7 tx-frames 8 adaptive-rx on adaptive-tx off"
                .split_whitespace()
                .map(str::to_string)
                .collect();
        let cs = change::parse(&words).unwrap();
        let back = decode_changes(&owned(encode_changes(&cs))).unwrap();
        assert_eq!(back, cs);
    }

    #[test]
    fn the_published_interface_lists_every_key_of_the_table() {
        let xml = include_str!("../../../dbus/org.hlctl.Daemon1.xml");
        for (key, ty) in keys() {
            let key = key.replace("<name>", "NAME");
            assert!(xml.contains(&format!("{key} {ty}")), "{key} {ty} missing");
        }
    }

    #[test]
    fn malformed_values_are_all_reported() {
        let mut m: HashMap<String, Variant<'static>> = HashMap::new();
        m.insert("mtu".into(), Variant::I32(-5));
        m.insert("txqueuelen".into(), Variant::U64(1 << 40));
        m.insert("ring.rx".into(), Variant::from("big".to_string()));
        m.insert("pause.rx".into(), Variant::U32(1));
        m.insert("colour".into(), Variant::Bool(true));
        m.insert("link.duplex".into(), Variant::from("x".repeat(10_000)));
        m.insert("feature.bad name".into(), Variant::Bool(true));
        let e = decode_changes(&owned(m)).unwrap_err();
        let text: Vec<String> = e.iter().map(|p| p.to_string()).collect();
        assert_eq!(e.len(), 7, "{text:#?}");
        assert!(
            text.iter().any(|t| t.starts_with("mtu -5: negative")),
            "{text:#?}"
        );
        assert!(
            text.iter()
                .any(|t| t.contains("txqueuelen") && t.contains("too large"))
        );
        assert!(text.iter().any(|t| t.starts_with("ring rx: wrong type s")));
        assert!(text.iter().any(|t| t.starts_with("pause rx: wrong type u")));
        assert!(
            text.iter()
                .any(|t| t.starts_with("colour: unknown setting: allowed mtu (u)"))
        );
        assert!(text.iter().any(|t| t.contains("10000 bytes")));
        assert!(text.iter().any(|t| t.contains("not a feature name")));
    }

    #[test]
    fn empty_settings_and_unknown_options() {
        assert!(decode_changes(&HashMap::new()).is_err());
        let mut o: HashMap<String, Variant<'static>> = HashMap::new();
        o.insert("dry_run".into(), Variant::Bool(true));
        let ok = decode_flags(&owned(o.clone()), &["dry_run", "persist"]).unwrap();
        assert_eq!(ok.get("dry_run"), Some(&true));
        o.insert("force".into(), Variant::Bool(true));
        o.insert("persist".into(), Variant::U32(1));
        let e = decode_flags(&owned(o), &["dry_run", "persist"]).unwrap_err();
        assert_eq!(e.len(), 2);
    }
}
