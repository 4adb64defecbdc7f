//! Writing a NetworkManager profile over its D-Bus API: keys of one
//! connection changed with `Update2` (to disk) inside a checkpoint of the
//! device, so that a failure half-way puts the profile and the device back.

use std::collections::BTreeMap;

use zbus::{Connection, OwnedObjectPath, OwnedVariant};

use super::networkmanager::{BUS, proxy};

const ROOT: &str = "/org/freedesktop/NetworkManager";
const SETTINGS: &str = "/org/freedesktop/NetworkManager/Settings";
const CONNECTION: &str = "org.freedesktop.NetworkManager.Settings.Connection";
/// `NM_SETTINGS_UPDATE2_FLAG_TO_DISK`.
const TO_DISK: u32 = 0x1;
/// How long NetworkManager keeps a checkpoint before it rolls back by itself.
const CHECKPOINT_TIMEOUT_S: u32 = 60;

/// A connection's settings as `GetSettings` returns them.
pub(crate) type RawSettings = BTreeMap<String, BTreeMap<String, OwnedVariant>>;

/// One key to change: (section, key, new value; `None` removes it).
pub(crate) type Edit = (String, String, Option<OwnedVariant>);

/// A device's checkpoint: destroyed when the change is done, rolled back
/// when it failed (NetworkManager rolls it back by itself after
/// [`CHECKPOINT_TIMEOUT_S`] if hlctl dies in between).
pub(crate) struct Checkpoint<'c> {
    conn: &'c Connection,
    path: OwnedObjectPath,
}

impl<'c> Checkpoint<'c> {
    /// Refused by NetworkManager while another checkpoint holds the device.
    pub(crate) async fn create(conn: &'c Connection, device: &str) -> zbus::Result<Self> {
        let nm = proxy(conn, ROOT, BUS).await?;
        let devices = vec![zbus::wire::ObjectPath::try_from(device)?];
        let path: OwnedObjectPath = nm
            .call("CheckpointCreate", &(devices, CHECKPOINT_TIMEOUT_S, 0u32))
            .await?;
        Ok(Checkpoint { conn, path })
    }

    pub(crate) async fn destroy(self) -> zbus::Result<()> {
        let nm = proxy(self.conn, ROOT, BUS).await?;
        nm.call::<_, _, ()>("CheckpointDestroy", &(self.path.as_ref(),))
            .await
    }

    pub(crate) async fn rollback(self) -> zbus::Result<()> {
        let nm = proxy(self.conn, ROOT, BUS).await?;
        let _: std::collections::HashMap<OwnedObjectPath, u32> = nm
            .call("CheckpointRollback", &(self.path.as_ref(),))
            .await?;
        Ok(())
    }
}

/// The settings connection whose file is `file`.
pub(crate) async fn connection_by_file(
    conn: &Connection,
    file: &str,
) -> zbus::Result<Option<OwnedObjectPath>> {
    let s = proxy(conn, SETTINGS, "org.freedesktop.NetworkManager.Settings").await?;
    let all: Vec<OwnedObjectPath> = s.call("ListConnections", &()).await?;
    for p in all {
        let c = proxy(conn, p.as_str(), CONNECTION).await?;
        if c.get_property::<String>("Filename").await? == file {
            return Ok(Some(p));
        }
    }
    Ok(None)
}

/// Change `edits` in the connection at `path` and save it to disk; returns
/// each key's value before (`None`: not set).
pub(crate) async fn update(
    conn: &Connection,
    path: &str,
    edits: &[Edit],
) -> zbus::Result<Vec<Option<OwnedVariant>>> {
    let c = proxy(conn, path, CONNECTION).await?;
    let mut settings: RawSettings = c.call("GetSettings", &()).await?;
    let mut before = Vec::new();
    for (section, key, value) in edits {
        let keys = settings.entry(section.clone()).or_default();
        before.push(match value {
            Some(v) => keys.insert(key.clone(), v.try_clone()?),
            None => keys.remove(key),
        });
    }
    let args: BTreeMap<String, OwnedVariant> = BTreeMap::new();
    let _: BTreeMap<String, OwnedVariant> = c.call("Update2", &(settings, TO_DISK, args)).await?;
    Ok(before)
}

/// Ask NetworkManager to apply the saved profile to the device without
/// taking it down; `Err` when it refuses (it does for ethtool settings).
pub(crate) async fn reapply(conn: &Connection, device: &str) -> zbus::Result<()> {
    let d = proxy(conn, device, "org.freedesktop.NetworkManager.Device").await?;
    let empty: RawSettings = BTreeMap::new();
    d.call::<_, _, ()>("Reapply", &(empty, 0u64, 0u32)).await
}
