//! NetworkManager over its D-Bus API: whether it manages a link, the active
//! connection and its file, and the settings the profile sets. No
//! NetworkManager on the bus simply means "not NetworkManager's".
//!
//! NetworkManager restores ring, coalesce and pause settings a whole group at
//! a time when the connection goes down, so one key of such a group in the
//! profile makes it own the whole group.

use std::collections::{BTreeMap, BTreeSet};

use zbus::Connection;
use zbus::proxy::CacheProperties;
use zbus::{OwnedObjectPath, OwnedVariant};

use super::{Manager, Owner, feature};
use crate::nic::registry;

pub(crate) const BUS: &str = "org.freedesktop.NetworkManager";
const ROOT: &str = "/org/freedesktop/NetworkManager";

/// A profile's settings as section → key → value text (`802-3-ethernet` →
/// `mtu` → `9000`), the shape of `GetSettings` and of a keyfile.
pub(crate) type Profile = BTreeMap<String, BTreeMap<String, String>>;

/// `802-3-ethernet` keys → registry settings (0 / empty: not set).
const ETHERNET: &[(&str, &str)] = &[
    ("mtu", "mtu"),
    ("speed", "link speed"),
    ("duplex", "link duplex"),
    ("auto-negotiate", "link autoneg"),
];

/// The `ethtool` key prefixes of the groups NetworkManager restores whole.
const ETHTOOL_GROUPS: &[(&str, &str)] = &[
    ("ring-", "ring"),
    ("coalesce-", "coalesce"),
    ("pause-", "pause"),
];

/// The settings a profile sets, as registry names.
pub(crate) fn owned(profile: &Profile) -> BTreeSet<String> {
    let mut owns = BTreeSet::new();
    let eth = profile
        .get("802-3-ethernet")
        .or_else(|| profile.get("ethernet"));
    for (k, v) in eth.into_iter().flatten() {
        let set = !matches!(v.as_str(), "" | "0" | "false");
        if let Some((_, s)) = ETHERNET.iter().find(|(key, _)| key == k)
            && set
        {
            owns.insert(s.to_string());
        }
    }
    for k in profile.get("ethtool").into_iter().flat_map(BTreeMap::keys) {
        if let Some(f) = k.strip_prefix("feature-") {
            match crate::nic::aliases::expand(f) {
                Some(kernel) => owns.extend(kernel.iter().map(|n| feature(n))),
                None => {
                    owns.insert(feature(f));
                }
            }
        } else if let Some((_, group)) = ETHTOOL_GROUPS.iter().find(|(p, _)| k.starts_with(p)) {
            owns.extend(registry::in_group(group).map(registry::Setting::name));
        }
    }
    owns
}

#[cfg(test)]
/// Parse a keyfile (`.nmconnection`) into a [`Profile`] (`[ethernet]` is
/// `802-3-ethernet` on the bus).
pub(crate) fn parse_keyfile(text: &str) -> Profile {
    let mut out = Profile::new();
    let mut current = String::new();
    for l in text.lines().map(str::trim) {
        if let Some(s) = l.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            current = if s == "ethernet" {
                "802-3-ethernet".into()
            } else {
                s.to_string()
            };
        } else if let Some((k, v)) = l.split_once('=')
            && !l.starts_with('#')
        {
            out.entry(current.clone())
                .or_default()
                .insert(k.trim().to_string(), v.trim().to_string());
        }
    }
    out
}

pub(crate) async fn proxy<'a>(
    conn: &'a Connection,
    path: &'a str,
    iface: &'a str,
) -> zbus::Result<zbus::Proxy<'a>> {
    zbus::proxy::Builder::new(conn)
        .destination(BUS)
        .path(path)
        .interface(iface)
        .cache_properties(CacheProperties::No)
        .build()
        .await
}

/// A value of `GetSettings` as text, the way a keyfile writes it.
pub(crate) fn value_text(v: &OwnedVariant) -> String {
    use zbus::Variant as Value;
    match &**v {
        Value::U32(n) => n.to_string(),
        Value::I32(n) => n.to_string(),
        Value::U64(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Str(s) => s.to_string(),
        other => other.to_string(),
    }
}

/// The device object of `iface`, or `None` when NetworkManager is not on
/// the bus or does not know the interface.
pub(crate) async fn device(conn: &Connection, iface: &str) -> Option<OwnedObjectPath> {
    let nm = proxy(conn, ROOT, BUS).await.ok()?;
    nm.call("GetDeviceByIpIface", &(iface,)).await.ok()
}

/// The settings object of a device's active connection (`None`: not activated).
async fn active(conn: &Connection, d: &zbus::Proxy<'_>) -> zbus::Result<Option<OwnedObjectPath>> {
    let ac: OwnedObjectPath = d.get_property("ActiveConnection").await?;
    if ac.as_str() == "/" {
        return Ok(None);
    }
    let a = proxy(
        conn,
        ac.as_str(),
        "org.freedesktop.NetworkManager.Connection.Active",
    )
    .await?;
    Ok(Some(a.get_property("Connection").await?))
}

/// A connection's file and settings.
pub(crate) async fn settings(conn: &Connection, path: &str) -> zbus::Result<(String, Profile)> {
    let c = proxy(
        conn,
        path,
        "org.freedesktop.NetworkManager.Settings.Connection",
    )
    .await?;
    let file: String = c.get_property("Filename").await?;
    let raw: BTreeMap<String, BTreeMap<String, OwnedVariant>> = c.call("GetSettings", &()).await?;
    let profile = raw
        .into_iter()
        .map(|(s, keys)| {
            (
                s,
                keys.iter()
                    .map(|(k, v)| (k.clone(), value_text(v)))
                    .collect(),
            )
        })
        .collect();
    Ok((file, profile))
}

/// The device's `State` (NM_DEVICE_STATE: 100 activated), when NetworkManager knows it.
pub(crate) async fn device_state(conn: &Connection, iface: &str) -> Option<u32> {
    let dev = device(conn, iface).await?;
    let d = proxy(conn, dev.as_str(), "org.freedesktop.NetworkManager.Device")
        .await
        .ok()?;
    d.get_property("State").await.ok()
}

/// The file and settings object of `iface`'s active connection (the file
/// is empty for a profile NetworkManager holds in memory only).
pub(crate) async fn active_profile(
    conn: &Connection,
    iface: &str,
) -> zbus::Result<Option<(String, OwnedObjectPath)>> {
    let Some(dev) = device(conn, iface).await else {
        return Ok(None);
    };
    let d = proxy(conn, dev.as_str(), "org.freedesktop.NetworkManager.Device").await?;
    if !d.get_property::<bool>("Managed").await? {
        return Ok(None);
    }
    let Some(path) = active(conn, &d).await? else {
        return Ok(None);
    };
    Ok(Some((profile_file(conn, path.as_str()).await?, path)))
}

/// The file a settings connection is saved in.
pub(crate) async fn profile_file(conn: &Connection, path: &str) -> zbus::Result<String> {
    let c = proxy(
        conn,
        path,
        "org.freedesktop.NetworkManager.Settings.Connection",
    )
    .await?;
    c.get_property("Filename").await
}

/// NetworkManager's hold on `iface`: `None` when it is not on the bus, does
/// not know the interface, or does not manage it.
pub(crate) async fn owner(conn: &Connection, iface: &str) -> Result<Option<Owner>, zbus::Error> {
    let Some(dev) = device(conn, iface).await else {
        return Ok(None);
    };
    let d = proxy(conn, dev.as_str(), "org.freedesktop.NetworkManager.Device").await?;
    if !d.get_property::<bool>("Managed").await? {
        return Ok(None);
    }
    let mut o = Owner::new(Manager::NetworkManager);
    let profile = match active(conn, &d).await? {
        active @ Some(_) => active,
        None => the_only_available(&d).await?,
    };
    if let Some(path) = profile {
        let (file, profile) = settings(conn, path.as_str()).await?;
        o.name = profile.get("connection").and_then(|c| c.get("id")).cloned();
        o.owns = owned(&profile);
        o.file = (!file.is_empty()).then_some(file);
    }
    Ok(Some(o))
}

/// A device between activations (`nmcli connection up` on an active
/// connection passes through "disconnected") or down has no active
/// connection; when exactly one profile is available to it, that is the one
/// NetworkManager applies next: its settings object.
async fn the_only_available(dev: &zbus::Proxy<'_>) -> zbus::Result<Option<OwnedObjectPath>> {
    let avail: Vec<OwnedObjectPath> = dev.get_property("AvailableConnections").await?;
    Ok(match avail.as_slice() {
        [path] => Some(path.clone()),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A keyfile as `nmcli connection add ... ethtool.ring-rx 4096` writes it (NM 1.42).
    const KEYFILE: &str = "[connection]\nid=enp1s0\nuuid=0c5c8b1e-3a53-4a8e-9a40-9d3a4cf3a0f1\ntype=ethernet\ninterface-name=enp1s0\n\n[ethernet]\nmtu=9000\n\n[ethtool]\nfeature-tso=false\nfeature-rx-gro-hw=false\nring-rx=4096\n\n[ipv4]\nmethod=auto\n";

    #[test]
    fn a_ring_key_owns_the_whole_group_and_features_expand() {
        let p = parse_keyfile(KEYFILE);
        assert_eq!(p["802-3-ethernet"]["mtu"], "9000");
        let owns = owned(&p);
        for s in [
            "mtu",
            "ring rx",
            "ring tx",
            "ring rx-jumbo",
            "feature tx-tcp-segmentation",
            "feature rx-gro-hw",
        ] {
            assert!(owns.contains(s), "{s} not in {owns:?}");
        }
        assert!(!owns.contains("link speed"));
        assert!(!owns.iter().any(|s| s.starts_with("pause")));
        let mut zero = p.clone();
        zero.get_mut("802-3-ethernet")
            .unwrap()
            .insert("mtu".into(), "0".into());
        assert!(
            !owned(&zero).contains("mtu"),
            "mtu 0 is NetworkManager's 'auto'"
        );
    }

    /// With no NetworkManager on the bus, a link is simply not its.
    #[tokio::test]
    async fn no_networkmanager_on_the_bus_is_not_an_error() {
        let Ok(conn) = Connection::system().await else {
            return;
        };
        if device(&conn, "lo").await.is_some() {
            return; // a NetworkManager is running here; nothing to check.
        }
        assert_eq!(owner(&conn, "no-such-nic0").await.unwrap(), None);
    }
}
