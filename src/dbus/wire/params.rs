//! `Manager.StartBenchmark`'s `params a{sv}`: a flat dictionary of booleans,
//! numbers and strings, one key per field of the benchmark's parameters
//! ([`super::bench::NetParams`], ...). The daemon turns it into those
//! structs (unknown keys and wrong types are refused, naming the key); hlctl
//! encodes the same structs.

use std::collections::HashMap;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Number, Value};
use zbus::{OwnedVariant, Variant};

use super::key::Key;
use super::settings::{MAX_ENTRIES, MAX_STR};
use super::typed::owned;

fn one(key: &str, v: &Variant<'_>) -> Result<Value, String> {
    let n = |x: Option<Number>| {
        x.map(Value::Number)
            .ok_or_else(|| format!("{key}: not a finite number"))
    };
    Ok(match v {
        Variant::Bool(b) => Value::Bool(*b),
        Variant::U8(x) => Value::from(*x),
        Variant::U16(x) => Value::from(*x),
        Variant::U32(x) => Value::from(*x),
        Variant::U64(x) => Value::from(*x),
        Variant::I16(x) => Value::from(*x),
        Variant::I32(x) => Value::from(*x),
        Variant::I64(x) => Value::from(*x),
        Variant::F64(x) => n(Number::from_f64(*x))?,
        Variant::Str(s) if s.len() <= MAX_STR => Value::String(s.as_str().to_string()),
        Variant::Str(s) => {
            return Err(format!(
                "{key}: string of {} bytes: at most {MAX_STR} allowed",
                s.len()
            ));
        }
        Variant::Variant(inner) => one(key, inner)?,
        other => {
            return Err(format!(
                "{key}: wrong type {}: expected a boolean, a number or a string",
                other.value_signature()
            ));
        }
    })
}

/// Decode `params` into the parameters of benchmark `kind`.
pub(crate) fn decode<T: DeserializeOwned>(
    kind: &str,
    params: &HashMap<String, OwnedVariant>,
) -> Result<T, String> {
    let bad = |why: String| format!("benchmark {kind}: parameters: {why}");
    if params.len() > MAX_ENTRIES {
        return Err(bad(format!(
            "{} keys: at most {MAX_ENTRIES} allowed",
            params.len()
        )));
    }
    let mut obj = Map::new();
    for (k, v) in params {
        let key: String = k.chars().take(64).collect();
        obj.insert(k.clone(), one(&key, v).map_err(&bad)?);
    }
    serde_json::from_value(Value::Object(obj)).map_err(|e| bad(e.to_string()))
}

/// Encode benchmark parameters (fields left out stay out: the daemon's
/// defaults apply).
pub fn encode<T: Serialize>(p: &T) -> Result<HashMap<String, OwnedVariant>, String> {
    let Value::Object(obj) = serde_json::to_value(p).map_err(|e| e.to_string())? else {
        return Err("benchmark parameters must be an object".into());
    };
    let mut m = HashMap::new();
    for (k, v) in obj {
        let v = match v {
            Value::Null => continue,
            Value::Bool(b) => owned(b),
            Value::String(s) => owned(s),
            Value::Number(n) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
                (Some(u), _, _) => owned(u),
                (_, Some(i), _) => owned(i),
                (_, _, Some(f)) => owned(f),
                _ => return Err(format!("{k}: not a number D-Bus carries")),
            },
            other => return Err(format!("{k}: {other} is not a flat value")),
        };
        m.insert(k, v);
    }
    Ok(m)
}

/// Encode benchmark parameters, each value as the D-Bus type its declared
/// key gives ([`super::bench_keys`]); a field without a declared key is an
/// error, fields left out stay out.
pub(crate) fn encode_typed<T: Serialize>(
    p: &T,
    keys: &[Key],
) -> Result<HashMap<String, OwnedVariant>, String> {
    let Value::Object(obj) = serde_json::to_value(p).map_err(|e| e.to_string())? else {
        return Err("benchmark parameters must be an object".into());
    };
    let mut m = HashMap::new();
    for (k, v) in obj {
        if v.is_null() {
            continue;
        }
        let key = keys
            .iter()
            .find(|x| x.name == k)
            .ok_or_else(|| format!("{k}: no declared key"))?;
        m.insert(k.clone(), typed(&k, key.sig, &v)?);
    }
    Ok(m)
}

/// `v` as D-Bus type `sig`.
fn typed(k: &str, sig: &str, v: &Value) -> Result<OwnedVariant, String> {
    let bad = || format!("{k}: {v} is not a {sig}");
    let u = || v.as_u64().ok_or_else(bad);
    Ok(match sig {
        "b" => owned(v.as_bool().ok_or_else(bad)?),
        "s" => owned(v.as_str().ok_or_else(bad)?.to_string()),
        "y" => owned(u8::try_from(u()?).map_err(|_| bad())?),
        "q" => owned(u16::try_from(u()?).map_err(|_| bad())?),
        "u" => owned(u32::try_from(u()?).map_err(|_| bad())?),
        "t" => owned(u()?),
        "x" => owned(v.as_i64().ok_or_else(bad)?),
        "d" => owned(v.as_f64().ok_or_else(bad)?),
        _ => return Err(format!("{k}: type {sig} is not a flat value")),
    })
}

#[cfg(test)]
mod tests {
    use super::super::bench::{CpuParams, NetParams};
    use super::*;

    #[test]
    fn parameters_round_trip_and_bad_ones_name_the_key() {
        let p = NetParams {
            host: "10.0.0.2".into(),
            port: Some(5301),
            time_s: Some(3),
            interval_s: Some(0.5),
            direction: Some("reverse".into()),
            ..Default::default()
        };
        let back: NetParams = decode("net", &encode(&p).unwrap()).unwrap();
        assert_eq!(back.port, Some(5301));
        assert_eq!(back.interval_s, Some(0.5));
        assert_eq!(back.direction.as_deref(), Some("reverse"));
        let mut m = HashMap::new();
        m.insert("threads".to_string(), owned("two"));
        let e = decode::<CpuParams>("cpu", &m).unwrap_err();
        assert!(
            e.contains("benchmark cpu") && e.contains("invalid type"),
            "{e}"
        );
        let mut m = HashMap::new();
        m.insert("colour".to_string(), owned(1u32));
        let e = decode::<CpuParams>("cpu", &m).unwrap_err();
        assert!(e.contains("unknown field `colour`"), "{e}");
        let mut m = HashMap::new();
        m.insert("threads".to_string(), owned(vec![1u32]));
        let e = decode::<CpuParams>("cpu", &m).unwrap_err();
        assert!(e.contains("threads: wrong type au"), "{e}");
    }
}
