//! The `a{sv}` wire form of a [`ChangeSet`] (`Link.ApplyChanges`) and of
//! method options, used by both the daemon (decode, strictly) and the client
//! (encode).
//!
//! Keys, one per setting, as `hlctl set` words joined by a dot:
//! `mtu` u, `txqueuelen` u, `ring.{rx,tx,rx-mini,rx-jumbo}` u,
//! `pause.{autoneg,rx,tx}` b, `feature.<name>` b (kernel or ethtool short name),
//! `link.speed` u, `link.duplex` s (`half`|`full`), `link.autoneg` b,
//! `link.advertise` as, `channels.{rx,tx,other,combined}` u,
//! `coalesce.{rx-usecs,tx-usecs,rx-frames,tx-frames}` u,
//! `coalesce.{adaptive-rx,adaptive-tx}` b.
//! Any unsigned or signed integer type is accepted for `u` when its value fits
//! 0..=4294967295. Every problem is reported at once, naming the setting and
//! what is allowed.

use std::collections::HashMap;

use zbus::{OwnedVariant, Variant};

use crate::nic::model::{ChangeSet, Duplex};
use crate::problem::Problem;

/// Longest key or string value accepted (feature names are under 40 bytes).
pub const MAX_STR: usize = 256;
/// Most entries accepted in one dictionary.
pub const MAX_ENTRIES: usize = 512;

const U32_ALLOWED: &str = "expected a whole number 0..=4294967295 (D-Bus type u)";

/// All fixed keys with their D-Bus type, for error messages and docs.
pub const KEYS: &[(&str, &str)] = &[
    ("mtu", "u"),
    ("txqueuelen", "u"),
    ("ring.rx", "u"),
    ("ring.tx", "u"),
    ("ring.rx-mini", "u"),
    ("ring.rx-jumbo", "u"),
    ("pause.autoneg", "b"),
    ("pause.rx", "b"),
    ("pause.tx", "b"),
    ("feature.<name>", "b"),
    ("link.speed", "u"),
    ("link.duplex", "s"),
    ("link.autoneg", "b"),
    ("link.advertise", "as"),
    ("channels.rx", "u"),
    ("channels.tx", "u"),
    ("channels.other", "u"),
    ("channels.combined", "u"),
    ("coalesce.rx-usecs", "u"),
    ("coalesce.tx-usecs", "u"),
    ("coalesce.rx-frames", "u"),
    ("coalesce.tx-frames", "u"),
    ("coalesce.adaptive-rx", "b"),
    ("coalesce.adaptive-tx", "b"),
];

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
pub fn as_u32(key: &str, v: &Variant<'_>) -> Result<u32, Problem> {
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
pub fn as_bool(key: &str, v: &Variant<'_>) -> Result<bool, Problem> {
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
pub fn as_str(key: &str, v: &Variant<'_>) -> Result<String, Problem> {
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
pub fn decode_changes(map: &HashMap<String, OwnedVariant>) -> Result<ChangeSet, Vec<Problem>> {
    let mut cs = ChangeSet::default();
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
        return Err(p);
    }
    // Sorted, so the problems come out in a stable order.
    let mut keys: Vec<&String> = map.keys().collect();
    keys.sort();
    for key in keys {
        let v: &Variant<'_> = &map[key];
        let mut u = |slot: &mut Option<u32>| match as_u32(key, v) {
            Ok(n) => *slot = Some(n),
            Err(e) => p.push(e),
        };
        match key.as_str() {
            "mtu" => u(&mut cs.mtu),
            "txqueuelen" => u(&mut cs.txqueuelen),
            "ring.rx" => u(&mut cs.rings.get_or_insert_with(Default::default).rx),
            "ring.tx" => u(&mut cs.rings.get_or_insert_with(Default::default).tx),
            "ring.rx-mini" => u(&mut cs.rings.get_or_insert_with(Default::default).rx_mini),
            "ring.rx-jumbo" => u(&mut cs.rings.get_or_insert_with(Default::default).rx_jumbo),
            "link.speed" => u(&mut cs.link.get_or_insert_with(Default::default).speed_mbps),
            "channels.rx" => u(&mut cs.channels.get_or_insert_with(Default::default).rx),
            "channels.tx" => u(&mut cs.channels.get_or_insert_with(Default::default).tx),
            "channels.other" => u(&mut cs.channels.get_or_insert_with(Default::default).other),
            "channels.combined" => {
                u(&mut cs.channels.get_or_insert_with(Default::default).combined)
            }
            "coalesce.rx-usecs" => {
                u(&mut cs.coalesce.get_or_insert_with(Default::default).rx_usecs)
            }
            "coalesce.tx-usecs" => {
                u(&mut cs.coalesce.get_or_insert_with(Default::default).tx_usecs)
            }
            "coalesce.rx-frames" => {
                u(&mut cs.coalesce.get_or_insert_with(Default::default).rx_frames)
            }
            "coalesce.tx-frames" => {
                u(&mut cs.coalesce.get_or_insert_with(Default::default).tx_frames)
            }
            "pause.autoneg"
            | "pause.rx"
            | "pause.tx"
            | "link.autoneg"
            | "coalesce.adaptive-rx"
            | "coalesce.adaptive-tx" => match as_bool(key, v) {
                Ok(b) => {
                    let slot = match key.as_str() {
                        "pause.autoneg" => {
                            &mut cs.pause.get_or_insert_with(Default::default).autoneg
                        }
                        "pause.rx" => &mut cs.pause.get_or_insert_with(Default::default).rx,
                        "pause.tx" => &mut cs.pause.get_or_insert_with(Default::default).tx,
                        "link.autoneg" => &mut cs.link.get_or_insert_with(Default::default).autoneg,
                        "coalesce.adaptive-rx" => {
                            &mut cs.coalesce.get_or_insert_with(Default::default).adaptive_rx
                        }
                        _ => &mut cs.coalesce.get_or_insert_with(Default::default).adaptive_tx,
                    };
                    *slot = Some(b);
                }
                Err(e) => p.push(e),
            },
            "link.duplex" => match as_str(key, v) {
                Ok(s) if s == "half" => {
                    cs.link.get_or_insert_with(Default::default).duplex = Some(Duplex::Half)
                }
                Ok(s) if s == "full" => {
                    cs.link.get_or_insert_with(Default::default).duplex = Some(Duplex::Full)
                }
                Ok(s) => p.push(Problem::new(
                    "link duplex",
                    Some(&s),
                    "expected half or full",
                )),
                Err(e) => p.push(e),
            },
            "link.advertise" => match as_strings(key, v) {
                Ok(modes) if modes.is_empty() => p.push(Problem::new(
                    "link advertise",
                    None,
                    "missing link modes, e.g. [\"1000baseT/Full\", \"100baseT/Full\"]",
                )),
                Ok(modes) => cs.link.get_or_insert_with(Default::default).advertise = Some(modes),
                Err(e) => p.push(e),
            },
            k => match k.strip_prefix("feature.") {
                Some(name) if feature_name_ok(name) => match as_bool(key, v) {
                    Ok(b) => {
                        cs.features.insert(name.to_string(), b);
                    }
                    Err(e) => p.push(e),
                },
                Some(_) => p.push(Problem::new(
                    setting(key),
                    None,
                    "not a feature name: letters, digits, '-' and '_', at most 64 bytes",
                )),
                None => p.push(Problem::new(
                    shown(key),
                    None,
                    format!(
                        "unknown setting: allowed {}",
                        KEYS.iter()
                            .map(|(k, t)| format!("{k} ({t})"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                )),
            },
        }
    }
    if p.is_empty() { Ok(cs) } else { Err(p) }
}

/// Encode a change set for `ApplyChanges`.
pub fn encode_changes(cs: &ChangeSet) -> HashMap<String, Variant<'static>> {
    let mut m: HashMap<String, Variant<'static>> = HashMap::new();
    let mut u = |k: &str, v: Option<u32>| {
        if let Some(v) = v {
            m.insert(k.to_string(), Variant::U32(v));
        }
    };
    u("mtu", cs.mtu);
    u("txqueuelen", cs.txqueuelen);
    if let Some(r) = &cs.rings {
        u("ring.rx", r.rx);
        u("ring.tx", r.tx);
        u("ring.rx-mini", r.rx_mini);
        u("ring.rx-jumbo", r.rx_jumbo);
    }
    if let Some(l) = &cs.link {
        u("link.speed", l.speed_mbps);
    }
    if let Some(c) = &cs.channels {
        u("channels.rx", c.rx);
        u("channels.tx", c.tx);
        u("channels.other", c.other);
        u("channels.combined", c.combined);
    }
    if let Some(c) = &cs.coalesce {
        u("coalesce.rx-usecs", c.rx_usecs);
        u("coalesce.tx-usecs", c.tx_usecs);
        u("coalesce.rx-frames", c.rx_frames);
        u("coalesce.tx-frames", c.tx_frames);
    }
    let mut b = |k: &str, v: Option<bool>| {
        if let Some(v) = v {
            m.insert(k.to_string(), Variant::Bool(v));
        }
    };
    if let Some(p) = &cs.pause {
        b("pause.autoneg", p.autoneg);
        b("pause.rx", p.rx);
        b("pause.tx", p.tx);
    }
    if let Some(l) = &cs.link {
        b("link.autoneg", l.autoneg);
    }
    if let Some(c) = &cs.coalesce {
        b("coalesce.adaptive-rx", c.adaptive_rx);
        b("coalesce.adaptive-tx", c.adaptive_tx);
    }
    for (name, on) in &cs.features {
        b(&format!("feature.{name}"), Some(*on));
    }
    if let Some(l) = &cs.link {
        if let Some(d) = l.duplex {
            m.insert("link.duplex".into(), Variant::from(d.to_string()));
        }
        if let Some(a) = &l.advertise {
            m.insert("link.advertise".into(), Variant::from(a.clone()));
        }
    }
    m
}

/// Boolean options of a method (`dry_run`, `persist`, `detached`): unknown
/// keys and wrong types are problems.
pub fn decode_flags(
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

/// A `u` option that must lie in `lo..=hi`.
pub fn as_u32_in(key: &str, v: &Variant<'_>, lo: u32, hi: u32) -> Result<u32, Problem> {
    let n = as_u32(key, v)?;
    if (lo..=hi).contains(&n) {
        Ok(n)
    } else {
        Err(Problem::new(
            format!("option {key}"),
            Some(&n.to_string()),
            format!("allowed {lo}..={hi}"),
        ))
    }
}

/// An `as` option of bounded size.
pub fn as_string_list(key: &str, v: &Variant<'_>) -> Result<Vec<String>, Problem> {
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

    fn owned(m: HashMap<String, Variant<'static>>) -> HashMap<String, OwnedVariant> {
        m.into_iter()
            .map(|(k, v)| (k, OwnedVariant::try_from(v).unwrap()))
            .collect()
    }

    #[test]
    fn every_cli_setting_round_trips() {
        let words: Vec<String> =
            "mtu 9000 txqueuelen 5000 ring rx 4096 tx 512 rx-mini 1 rx-jumbo 2 \
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
