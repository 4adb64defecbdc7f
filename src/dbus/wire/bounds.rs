//! Size bounds every `a{sv}` argument meets before any decoder or any work
//! sees it: a hostile caller's megabyte string or ten-thousand-entry array is
//! refused with `InvalidArgument` naming the argument and the bound. The
//! decoders of each method apply their own, tighter rules after this.

use std::collections::HashMap;

use zbus::{OwnedVariant, Variant};

use super::settings::{MAX_ENTRIES, MAX_STR};

/// Longest string value inside an `a{sv}` argument (the decoders then allow
/// at most [`MAX_STR`] for names and paths).
pub(crate) const MAX_VALUE_STR: usize = 64 * 1024;
/// Deepest nesting of containers inside one value.
pub(crate) const MAX_DEPTH: usize = 4;

/// Check one `a{sv}` argument named `what`; the error names what was too
/// large and the bound.
pub(crate) fn check_dict(what: &str, m: &HashMap<String, OwnedVariant>) -> Result<(), String> {
    if m.len() > MAX_ENTRIES {
        return Err(format!(
            "{what}: {} entries; at most {MAX_ENTRIES} allowed",
            m.len()
        ));
    }
    for (k, v) in m {
        if k.len() > MAX_STR {
            return Err(format!(
                "{what}: a key of {} bytes; at most {MAX_STR} allowed",
                k.len()
            ));
        }
        check_value(&format!("{what}[{k}]"), v, 0)?;
    }
    Ok(())
}

fn check_value(what: &str, v: &Variant<'_>, depth: usize) -> Result<(), String> {
    if depth > MAX_DEPTH {
        return Err(format!("{what}: nested deeper than {MAX_DEPTH} containers"));
    }
    match v {
        Variant::Str(s) if s.len() > MAX_VALUE_STR => Err(format!(
            "{what}: a string of {} bytes; at most {MAX_VALUE_STR} allowed",
            s.len()
        )),
        Variant::Variant(inner) => check_value(what, inner, depth + 1),
        Variant::Array(a) => {
            if a.len() > MAX_ENTRIES {
                return Err(format!(
                    "{what}: {} elements; at most {MAX_ENTRIES} allowed",
                    a.len()
                ));
            }
            a.iter().try_for_each(|x| check_value(what, x, depth + 1))
        }
        Variant::Dict(d) => {
            let entries: Vec<_> = d.iter().collect();
            if entries.len() > MAX_ENTRIES {
                return Err(format!(
                    "{what}: {} entries; at most {MAX_ENTRIES} allowed",
                    entries.len()
                ));
            }
            entries.iter().try_for_each(|(k, x)| {
                check_value(what, k, depth + 1)?;
                check_value(what, x, depth + 1)
            })
        }
        Variant::Structure(s) => s
            .fields()
            .iter()
            .try_for_each(|x| check_value(what, x, depth + 1)),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dict(pairs: Vec<(&str, Variant<'static>)>) -> HashMap<String, OwnedVariant> {
        pairs
            .into_iter()
            .map(|(k, v)| (k.to_string(), OwnedVariant::try_from(v).unwrap()))
            .collect()
    }

    #[test]
    fn ordinary_arguments_pass() {
        let m = dict(vec![
            ("host", Variant::from("nas.lan")),
            ("interfaces", Variant::from(vec!["eth0", "eth1"])),
            ("time_s", Variant::U32(10)),
        ]);
        assert_eq!(check_dict("options", &m), Ok(()));
    }

    #[test]
    fn oversized_strings_arrays_and_keys_are_named() {
        let big = "x".repeat(MAX_VALUE_STR + 1);
        let e = check_dict("params", &dict(vec![("host", Variant::from(big))])).unwrap_err();
        assert!(e.contains("params[host]") && e.contains("65536"), "{e}");

        let many: Vec<String> = (0..=MAX_ENTRIES).map(|i| i.to_string()).collect();
        let e = check_dict("options", &dict(vec![("dirs", Variant::from(many))])).unwrap_err();
        assert!(
            e.contains("options[dirs]") && e.contains("513 elements"),
            "{e}"
        );

        let long_key = "k".repeat(MAX_STR + 1);
        let e = check_dict("filter", &dict(vec![(long_key.as_str(), Variant::U8(1))])).unwrap_err();
        assert!(e.contains("a key of 257 bytes"), "{e}");
    }

    #[test]
    fn too_many_entries_are_refused() {
        let m: HashMap<String, OwnedVariant> = (0..=MAX_ENTRIES)
            .map(|i| (i.to_string(), OwnedVariant::from(1u8)))
            .collect();
        let e = check_dict("changes", &m).unwrap_err();
        assert!(e.contains("513 entries"), "{e}");
    }

    #[test]
    fn deep_nesting_is_refused() {
        let mut v = Variant::U8(1);
        for _ in 0..=MAX_DEPTH + 1 {
            v = Variant::Variant(Box::new(v));
        }
        let e = check_dict("options", &dict(vec![("x", v)])).unwrap_err();
        assert!(e.contains("nested deeper"), "{e}");
    }
}
