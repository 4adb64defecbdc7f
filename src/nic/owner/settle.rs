//! Have the network managers finished their own work on a link? hlctld
//! re-applies a persisted value only once they have: udev's event queue is
//! empty, networkd is not configuring the link, no `ifup`/`ifreload`/
//! `netplan` runs, and NetworkManager is neither activating the device nor
//! holding a checkpoint (which it could roll back).

use zbus::Connection;

use super::Roots;
use super::networkd::env_value;
use super::networkmanager;

/// Why a link is not settled yet, or `None` when it is.
pub(crate) fn busy_files(roots: &Roots, ifindex: u32) -> Option<String> {
    if roots.at("/run/udev/queue").exists() {
        return Some("udev is processing events".into());
    }
    if let Ok(t) = std::fs::read_to_string(roots.networkd_link_state(ifindex))
        && let Some(s) = env_value(&t, "ADMIN_STATE")
        && matches!(s.as_str(), "pending" | "initialized" | "configuring")
    {
        return Some(format!("systemd-networkd is {s}"));
    }
    running_tool(roots).map(|p| format!("{p} is running"))
}

/// A manager's tool that is running now (by `/proc/PID/comm`).
fn running_tool(roots: &Roots) -> Option<String> {
    const TOOLS: &[&str] = &["ifup", "ifdown", "ifreload", "netplan", "networkctl"];
    let proc = roots.at("/proc");
    std::fs::read_dir(proc).ok()?.flatten().find_map(|e| {
        let n = e.file_name();
        if !n.to_string_lossy().bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let comm = std::fs::read_to_string(e.path().join("comm")).ok()?;
        let comm = comm.trim();
        TOOLS.contains(&comm).then(|| comm.to_string())
    })
}

/// NetworkManager's part: a checkpoint pending, or the device between
/// states (NM_DEVICE_STATE 40..=90 activating, 110 deactivating).
pub(crate) async fn busy_nm(conn: &Connection, iface: &str) -> Option<String> {
    let root = zbus::proxy::Builder::<zbus::Proxy>::new(conn)
        .destination(networkmanager::BUS)
        .path("/org/freedesktop/NetworkManager")
        .interface(networkmanager::BUS)
        .cache_properties(zbus::proxy::CacheProperties::No)
        .build()
        .await
        .ok()?;
    let checkpoints: Vec<zbus::OwnedObjectPath> =
        root.get_property("Checkpoints").await.unwrap_or_default();
    if !checkpoints.is_empty() {
        return Some("a NetworkManager checkpoint is pending".into());
    }
    let state = networkmanager::device_state(conn, iface).await?;
    matches!(state, 40..=90 | 110).then(|| format!("NetworkManager device state is {state}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn udev_queue_and_networkd_configuring_are_busy() {
        let dir = tempfile::tempdir().unwrap();
        let r = Roots::new(&crate::paths::Paths::under(dir.path()));
        assert_eq!(busy_files(&r, 2), None);
        std::fs::create_dir_all(r.at("/run/systemd/netif/links")).unwrap();
        std::fs::write(r.networkd_link_state(2), "ADMIN_STATE=configuring\n").unwrap();
        assert_eq!(
            busy_files(&r, 2).as_deref(),
            Some("systemd-networkd is configuring")
        );
        std::fs::write(r.networkd_link_state(2), "ADMIN_STATE=configured\n").unwrap();
        assert_eq!(busy_files(&r, 2), None);
        std::fs::create_dir_all(r.at("/proc/4242")).unwrap();
        std::fs::write(r.at("/proc/4242/comm"), "ifreload\n").unwrap();
        assert_eq!(busy_files(&r, 2).as_deref(), Some("ifreload is running"));
        std::fs::create_dir_all(r.at("/run/udev")).unwrap();
        std::fs::write(r.at("/run/udev/queue"), "").unwrap();
        assert_eq!(
            busy_files(&r, 2).as_deref(),
            Some("udev is processing events")
        );
    }
}
