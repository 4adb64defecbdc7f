//! NetworkManager: a setting it can hold is persisted in the profile of the
//! device's active connection (`Settings.Connection.Update2`, to disk),
//! inside a checkpoint of the device, so that NetworkManager applies hlctl's
//! value at every activation instead of its own. NetworkManager restores
//! ring, coalesce and pause settings a whole group at a time; every such
//! setting hlctl persists goes into the profile, so the group it restores is
//! the one hlctl set. Settings NetworkManager cannot hold (txqueuelen,
//! channels) stay in hlctl's own file. A profile that netplan generated is
//! left to netplan ([`super::edit_netplan`]).

use serde_json::Value;
use zbus::{Connection, OwnedVariant};

use super::error::OwnerError;
use super::nm_bus::{self, Checkpoint, Edit};
use super::placed::Placed;
use super::writer::Writer;
use super::{Manager, Roots, networkmanager};
use crate::nic::registry::value_text;
/// The profile key of a setting (`mtu` → `802-3-ethernet.mtu`), as nmcli names it.
fn nm_key(setting: &str) -> Option<String> {
    let (group, key) = setting.split_once(' ').unwrap_or((setting, ""));
    Some(match (group, key) {
        ("mtu", _) => "802-3-ethernet.mtu".into(),
        ("link", "speed") => "802-3-ethernet.speed".into(),
        ("link", "duplex") => "802-3-ethernet.duplex".into(),
        ("link", "autoneg") => "802-3-ethernet.auto-negotiate".into(),
        ("ring" | "pause" | "coalesce", k) => format!("ethtool.{group}-{k}"),
        ("feature", k) => format!("ethtool.feature-{}", short_name(k)),
        _ => return None,
    })
}

/// ethtool's short name for a kernel feature where it has one (NetworkManager's spelling).
fn short_name(kernel: &str) -> &str {
    crate::nic::aliases::FEATURE_ALIASES
        .iter()
        .find(|(_, k)| k.first() == Some(&kernel))
        .map_or(kernel, |(s, _)| s)
}

/// A value as the profile writes it: `true`/`false` for features and pause
/// settings, `1`/`0` for adaptive coalescing (a number there), else the text.
fn nm_value(setting: &str, v: &Value) -> String {
    let t = value_text(v);
    let boolean =
        setting.starts_with("feature") || setting.starts_with("pause") || setting == "link autoneg";
    match (
        boolean,
        setting.starts_with("coalesce adaptive"),
        t.as_str(),
    ) {
        (true, _, "on") => "true".into(),
        (true, _, "off") => "false".into(),
        (_, true, "on") => "1".into(),
        (_, true, "off") => "0".into(),
        _ => t,
    }
}

/// The D-Bus value of a profile key's text: `duplex` a string, features,
/// pause settings and `auto-negotiate` booleans, the rest `u32`.
fn variant(key: &str, text: &str) -> Option<OwnedVariant> {
    if key == "duplex" {
        return Some(OwnedVariant::from(zbus::wire::Str::from(text.to_string())));
    }
    if key == "auto-negotiate" || key.starts_with("feature-") || key.starts_with("pause-") {
        return text.parse::<bool>().ok().map(OwnedVariant::from);
    }
    text.parse::<u32>().ok().map(OwnedVariant::from)
}

/// One profile key hlctl writes: section, key, value text, the settings it carries.
#[derive(Debug, PartialEq)]
struct Key {
    section: String,
    key: String,
    value: String,
    settings: Vec<String>,
}

/// The profile keys of the settings in `wanted` NetworkManager can hold.
fn plan(wanted: &[(String, Value)]) -> Vec<Key> {
    let mut out: Vec<Key> = Vec::new();
    for (setting, v) in wanted {
        let Some(full) = nm_key(setting) else {
            continue;
        };
        let (section, key) = full.split_once('.').unwrap_or(("", &full));
        let value = nm_value(setting, v);
        match out
            .iter_mut()
            .find(|k| k.key == key && k.section == section)
        {
            Some(k) => k.settings.push(setting.clone()),
            None => out.push(Key {
                section: section.to_string(),
                key: key.to_string(),
                value,
                settings: vec![setting.clone()],
            }),
        }
    }
    out
}

/// Run `f` on a runtime of its own with the system bus (the callers are
/// synchronous); `None` when there is no bus.
fn with_bus<T>(roots: &Roots, f: impl AsyncFnOnce(&Connection) -> T) -> Option<T> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .ok()?;
    rt.block_on(async {
        let conn = super::system_bus(roots).await?;
        Some(f(&conn).await)
    })
}

fn nm_error(iface: &str, what: &str, e: zbus::Error) -> OwnerError {
    OwnerError::NetworkManager {
        iface: iface.to_string(),
        message: format!("{what}: {e}"),
    }
}

/// Persist the settings of `wanted` NetworkManager can hold in the profile
/// of `iface`'s active connection. Nothing when NetworkManager does not
/// manage `iface` or netplan generated the profile.
fn persist(
    roots: &Roots,
    iface: &str,
    wanted: &[(String, Value)],
) -> Result<Vec<Placed>, OwnerError> {
    if !roots.tools || !roots.managed_ns {
        return Ok(Vec::new());
    }
    let keys = plan(wanted);
    if keys.is_empty() {
        return Ok(Vec::new());
    }
    with_bus(roots, async |conn| persist_on(conn, iface, &keys).await).unwrap_or(Ok(Vec::new()))
}

async fn persist_on(
    conn: &Connection,
    iface: &str,
    keys: &[Key],
) -> Result<Vec<Placed>, OwnerError> {
    let Some(dev) = networkmanager::device(conn, iface).await else {
        return Ok(Vec::new());
    };
    let Some((file, path)) = networkmanager::active_profile(conn, iface)
        .await
        .map_err(|e| nm_error(iface, "reading the active connection", e))?
    else {
        return Ok(Vec::new());
    };
    if super::netplan::origin_of_nm(&file) {
        return Ok(Vec::new());
    }
    let edits: Vec<Edit> = keys
        .iter()
        .map(|k| (k.section.clone(), k.key.clone(), variant(&k.key, &k.value)))
        .collect();
    if let Some(k) = keys.iter().zip(&edits).find(|(_, e)| e.2.is_none()) {
        return Err(OwnerError::Refused {
            iface: iface.to_string(),
            path: file,
            message: format!(
                "{}.{} cannot hold the value {}",
                k.0.section, k.0.key, k.0.value
            ),
        });
    }
    let before = change(conn, iface, dev.as_str(), path.as_str(), &edits).await?;
    let file = networkmanager::profile_file(conn, path.as_str())
        .await
        .unwrap_or(file);
    Ok(keys
        .iter()
        .zip(before)
        .map(|(k, b)| Placed {
            manager: Manager::NetworkManager,
            file: file.clone(),
            section: k.section.clone(),
            key: k.key.clone(),
            value: k.value.clone(),
            before: b.as_ref().map(networkmanager::value_text),
            settings: k.settings.clone(),
        })
        .collect())
}

/// `edits` in the profile at `path` inside a checkpoint of the device: the
/// checkpoint is rolled back when the update fails. NetworkManager is then
/// asked to reapply the profile; where it refuses (ethtool settings), the
/// values are in effect already (hlctl set them) and are applied from the
/// profile at the next activation.
async fn change(
    conn: &Connection,
    iface: &str,
    device: &str,
    path: &str,
    edits: &[Edit],
) -> Result<Vec<Option<OwnedVariant>>, OwnerError> {
    let cp = Checkpoint::create(conn, device)
        .await
        .map_err(|e| nm_error(iface, "creating a checkpoint (another one pending?)", e))?;
    match nm_bus::update(conn, path, edits).await {
        Ok(before) => {
            if let Err(e) = nm_bus::reapply(conn, device).await {
                tracing::info!(
                    "{iface}: NetworkManager applies the profile at the next activation ({e})"
                );
            }
            if let Err(e) = cp.destroy().await {
                tracing::warn!("{iface}: NetworkManager: destroying the checkpoint: {e}");
            }
            Ok(before)
        }
        Err(e) => {
            if let Err(r) = cp.rollback().await {
                tracing::warn!("{iface}: NetworkManager: rolling back the checkpoint: {r}");
            }
            Err(nm_error(iface, "updating the profile (rolled back)", e))
        }
    }
}

/// Put one key of a profile back to `target` (`None`: remove it).
fn set_back(
    roots: &Roots,
    iface: &str,
    p: &Placed,
    target: Option<String>,
) -> Result<(), OwnerError> {
    if !roots.tools {
        return Ok(());
    }
    let value = target.as_deref().and_then(|t| variant(&p.key, t));
    let edit: Edit = (p.section.clone(), p.key.clone(), value);
    with_bus(roots, async |conn| {
        let path = nm_bus::connection_by_file(conn, &p.file)
            .await
            .map_err(|e| nm_error(iface, "listing the profiles", e))?;
        let Some(path) = path else {
            return Err(OwnerError::Refused {
                iface: iface.to_string(),
                path: p.file.clone(),
                message: "NetworkManager has no profile from this file any more".into(),
            });
        };
        match networkmanager::device(conn, iface).await {
            Some(dev) => change(conn, iface, dev.as_str(), path.as_str(), &[edit])
                .await
                .map(|_| ()),
            None => nm_bus::update(conn, path.as_str(), &[edit])
                .await
                .map(|_| ())
                .map_err(|e| nm_error(iface, "updating the profile", e)),
        }
    })
    .unwrap_or(Ok(()))
}

/// The [`Writer`] of NetworkManager profiles.
pub(crate) struct Nm;

impl Writer for Nm {
    fn managers(&self) -> &'static [Manager] {
        &[Manager::NetworkManager]
    }

    fn persist(
        &self,
        roots: &Roots,
        iface: &str,
        _ifindex: u32,
        wanted: &[(String, Value)],
    ) -> Result<Vec<Placed>, OwnerError> {
        persist(roots, iface, wanted)
    }

    fn set_back(
        &self,
        roots: &Roots,
        iface: &str,
        p: &Placed,
        target: Option<String>,
    ) -> Result<(), OwnerError> {
        set_back(roots, iface, p, target)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nic::model::{ChangeSet, RingsSet};
    use crate::nic::owner::placed::requested;

    #[test]
    fn the_profile_keys_and_their_bus_types_come_from_the_settings() {
        let mut cs = ChangeSet {
            mtu: Some(9000),
            rings: Some(RingsSet {
                rx: Some(4096),
                ..Default::default()
            }),
            txqueuelen: Some(5000),
            ..Default::default()
        };
        cs.features.insert("tx-tcp-segmentation".into(), false);
        let keys = plan(&requested(&cs));
        let got: Vec<(&str, &str, &str)> = keys
            .iter()
            .map(|k| (k.section.as_str(), k.key.as_str(), k.value.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                ("802-3-ethernet", "mtu", "9000"),
                ("ethtool", "ring-rx", "4096"),
                ("ethtool", "feature-tso", "false"),
            ],
            "txqueuelen has no profile key"
        );
        assert_eq!(variant("mtu", "9000"), Some(OwnedVariant::from(9000u32)));
        assert_eq!(
            variant("feature-tso", "false"),
            Some(OwnedVariant::from(false))
        );
        assert_eq!(variant("pause-rx", "true"), Some(OwnedVariant::from(true)));
        assert_eq!(
            variant("coalesce-adaptive-rx", "1"),
            Some(OwnedVariant::from(1u32))
        );
        assert_eq!(variant("ring-rx", "lots"), None, "not a number: refused");
    }

    #[test]
    fn adaptive_coalescing_is_a_number_in_the_profile() {
        let v = Value::from("on");
        assert_eq!(nm_value("coalesce adaptive-rx", &v), "1");
        assert_eq!(nm_value("pause rx", &v), "true");
        assert_eq!(nm_value("link duplex", &Value::from("full")), "full");
    }
}
