//! The typed replies of `Manager.ShowSysctl` and `Manager.SetSysctl`.
//!
//! `ShowSysctl` returns one row per key `a(sbs)`: key, whether the key exists
//! here, its value ("" when it does not). `SetSysctl` returns one row per
//! assignment `a(ssss)`: key, before, requested, after ("" in a dry run or
//! when the kernel could not be read back), and an `a{sv}` summary
//! ([`SUMMARY_KEYS`]). The daemon encodes, hlctl decodes back into the same
//! values, so `hlctl sysctl` prints the same on both paths.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

use zbus::OwnedVariant;

use super::typed::{get, non_empty, owned};
use crate::sysctl::persist::Override;
use crate::sysctl::set::SysctlReply;
use crate::sysctl::{Change, Entry, keys};

/// One `ShowSysctl` row: key, exists, value.
pub type ShowRow = (String, bool, String);

/// One `SetSysctl` row: key, before, requested, after.
pub type SetRow = (String, String, String, String);

/// One override: key, the file that sets it after ours at boot, its value.
pub(crate) type OverrideRow = (String, String, String);

/// The `SetSysctl` summary's keys with their D-Bus types (all always present).
#[cfg_attr(not(test), expect(dead_code, reason = "only the unit tests use it"))]
pub(crate) const SUMMARY_KEYS: &[(&str, &str)] = &[
    ("dry_run", "b"),
    ("failed", "s"),
    ("restore_errors", "a{ss}"),
    ("persisted", "s"),
    ("persist_error", "s"),
    ("overridden_by", "a(sss)"),
];

/// Encode `ShowSysctl`'s entries.
pub(crate) fn encode_show(entries: &[Entry]) -> Vec<ShowRow> {
    entries
        .iter()
        .map(|e| {
            (
                e.key.clone(),
                e.value.is_some(),
                e.value.clone().unwrap_or_default(),
            )
        })
        .collect()
}

/// Decode `ShowSysctl`'s rows (the description comes from this hlctl's table).
pub(crate) fn decode_show(rows: Vec<ShowRow>) -> Vec<Entry> {
    rows.into_iter()
        .map(|(key, exists, value)| Entry {
            about: keys::lookup(&key).map(|k| k.about),
            value: exists.then_some(value),
            key,
        })
        .collect()
}

/// Encode `SetSysctl`'s reply: the rows and the summary.
pub(crate) fn encode_set(r: &SysctlReply) -> (Vec<SetRow>, HashMap<String, OwnedVariant>) {
    let rows = r
        .changes
        .iter()
        .map(|c| {
            (
                c.key.clone(),
                c.before.clone(),
                c.requested.clone(),
                c.after.clone().unwrap_or_default(),
            )
        })
        .collect();
    let overrides: Vec<OverrideRow> = r
        .overridden_by
        .iter()
        .map(|o| (o.key.clone(), o.path.display().to_string(), o.value.clone()))
        .collect();
    let restore: HashMap<String, String> = r.restore_errors.clone().into_iter().collect();
    let mut m = HashMap::new();
    let mut put = |k: &str, v: OwnedVariant| {
        m.insert(k.to_string(), v);
    };
    put("dry_run", owned(r.dry_run));
    put("failed", owned(r.failed.clone().unwrap_or_default()));
    put("restore_errors", owned(restore));
    put("persisted", owned(r.persisted.clone().unwrap_or_default()));
    put(
        "persist_error",
        owned(r.persist_error.clone().unwrap_or_default()),
    );
    put("overridden_by", owned(overrides));
    (rows, m)
}

/// Decode `SetSysctl`'s rows and summary back into the reply they encode.
pub(crate) fn decode_set(
    rows: Vec<SetRow>,
    m: &HashMap<String, OwnedVariant>,
) -> Result<SysctlReply, String> {
    let dry_run: bool = get(m, "dry_run")?;
    let changes = rows
        .into_iter()
        .map(|(key, before, requested, after)| Change {
            key,
            before,
            requested,
            after: (!dry_run).then_some(after).and_then(non_empty),
        })
        .collect();
    let restore: HashMap<String, String> = get(m, "restore_errors")?;
    let overrides: Vec<OverrideRow> = get(m, "overridden_by")?;
    Ok(SysctlReply {
        dry_run,
        changes,
        failed: non_empty(get(m, "failed")?),
        restore_errors: restore.into_iter().collect::<BTreeMap<_, _>>(),
        persisted: non_empty(get(m, "persisted")?),
        persist_error: non_empty(get(m, "persist_error")?),
        overridden_by: overrides
            .into_iter()
            .map(|(key, path, value)| Override {
                key,
                path: PathBuf::from(path),
                value,
            })
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_set_reply_survives_the_wire() {
        let r = SysctlReply {
            dry_run: false,
            changes: vec![
                Change {
                    key: "net.ipv4.tcp_rmem".into(),
                    before: "4096 131072 6291456".into(),
                    requested: "4096 131072 33554432".into(),
                    after: Some("4096 131072 33554432".into()),
                },
                Change {
                    key: "net.core.rmem_max".into(),
                    before: "212992".into(),
                    requested: "33554432".into(),
                    after: None,
                },
            ],
            failed: Some("net.core.rmem_max".into()),
            restore_errors: BTreeMap::from([("net.ipv4.tcp_rmem".into(), "EPERM".into())]),
            persisted: None,
            persist_error: None,
            overridden_by: vec![Override {
                key: "net.ipv4.tcp_rmem".into(),
                path: PathBuf::from("/etc/sysctl.d/99-x.conf"),
                value: "1 2 3".into(),
            }],
        };
        let (rows, m) = encode_set(&r);
        let mut keys: Vec<&str> = m.keys().map(String::as_str).collect();
        keys.sort();
        let mut want: Vec<&str> = SUMMARY_KEYS.iter().map(|(k, _)| *k).collect();
        want.sort();
        assert_eq!(keys, want);
        assert_eq!(decode_set(rows, &m).unwrap(), r);
    }

    #[test]
    fn show_rows_keep_a_missing_key_missing() {
        let e = vec![
            Entry {
                key: "net.ipv4.tcp_sack".into(),
                value: Some("1".into()),
                about: keys::lookup("net.ipv4.tcp_sack").map(|k| k.about),
            },
            Entry {
                key: "net.core.nosuch".into(),
                value: None,
                about: None,
            },
        ];
        assert_eq!(decode_show(encode_show(&e)), e);
    }
}
