//! A verb's options as one table ([`Field`]): each key with its D-Bus type
//! and the `hlctl` flags it comes from ([`Key`]), and how it is read from
//! and written into the verb's options struct. The `a{sv}` encoding, the
//! strict decoding and the "unknown option" message all read the table,
//! and the verb's declaration ([`super::verb`]) takes its keys from it: a
//! key is written once.

use zbus::Variant;

use super::key::Key;
use super::records::{Dict, OwnedDict};
use crate::problem::Problem;

/// Writes one key's value (`None`: left out, the other side's default).
pub(crate) type Get<T> = fn(&T) -> Option<Variant<'static>>;
/// Reads one key's value into the struct, or says what is wrong with it.
pub(crate) type Set<T> = fn(&mut T, &str, &Variant<'_>) -> Result<(), Problem>;

/// One option of a verb.
pub(crate) struct Field<T: 'static> {
    pub(crate) key: Key,
    pub(crate) get: Get<T>,
    pub(crate) set: Set<T>,
}

/// The options of `v` as the client sends them.
pub(crate) fn encode<T>(fields: &[Field<T>], v: &T) -> Dict {
    fields
        .iter()
        .filter_map(|f| Some((f.key.name.to_string(), (f.get)(v)?)))
        .collect()
}

/// Read every option of `m` into `v`; every problem, each naming its key
/// (an unknown key is answered with the allowed ones and their types).
pub(crate) fn decode_into<T>(fields: &[Field<T>], m: &OwnedDict, v: &mut T) -> Vec<Problem> {
    m.iter()
        .filter_map(|(k, x)| match fields.iter().find(|f| f.key.name == k) {
            Some(f) => (f.set)(v, k, x).err(),
            None => Some(Problem::new(
                format!("option {}", k.chars().take(64).collect::<String>()),
                None,
                format!("unknown option: allowed {}", allowed(fields)),
            )),
        })
        .collect()
}

/// `peers (as), dirs (as), ...`: the keys and their D-Bus types.
pub(crate) fn allowed<T>(fields: &[Field<T>]) -> String {
    fields
        .iter()
        .map(|f| format!("{} ({})", f.key.name, f.key.sig))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The keys of the table, for the verb's declaration.
pub(crate) fn keys<T>(fields: &[Field<T>]) -> Vec<Key> {
    fields.iter().map(|f| f.key).collect()
}

/// A string list's value.
pub(crate) fn strings(v: &[String]) -> Option<Variant<'static>> {
    Some(Variant::from(v.to_vec()))
}

/// A number that the decoder bounds to `u32` (larger ones saturate, and are
/// then refused by that bound).
pub(crate) fn u32_of(v: u64) -> Variant<'static> {
    Variant::U32(u32::try_from(v).unwrap_or(u32::MAX))
}
