//! Who else sets a link's settings: the network manager that owns each
//! interface and, per setting, whether it sets it (and so undoes a change
//! hlctl makes behind its back).
//!
//! - [`ifupdown`]: `/etc/network/interfaces` (+ `source`d files), ifupdown and ifupdown2;
//! - [`networkd`]: systemd-networkd's `.network` and udev's `.link` file of a link;
//! - [`netplan`]: netplan as the origin of networkd/NetworkManager files;
//! - [`networkmanager`]: NetworkManager over its D-Bus API;
//! - [`roots`]: where the managers' files are (movable for tests);
//! - [`settle`]: have the managers finished their own work on a link;
//! - [`write`]: persisting a setting through its owner, and undoing that
//!   ([`edit_nm`]: the NetworkManager profile, over [`nm_bus`];
//!   [`edit_netplan`]: hlctl's netplan file; [`edit_ifupdown`]: the
//!   stanza's line; [`edit_networkd`]: hlctl's drop-ins).
//!
//! A setting is named as the registry names it (`mtu`, `ring rx`); a kernel
//! feature as `feature NAME`.

pub(crate) mod edit_ifupdown;
pub(crate) mod edit_netplan;
pub(crate) mod edit_networkd;
pub(crate) mod edit_nm;
pub(crate) mod error;
pub(crate) mod fileedit;
pub(crate) mod ifupdown;
pub(crate) mod netplan;
pub(crate) mod networkd;
pub(crate) mod networkmanager;
pub(crate) mod nm_bus;
pub(crate) mod placed;
pub(crate) mod roots;
pub(crate) mod settle;
pub(crate) mod write;
#[cfg(test)]
mod write_tests;
pub(crate) mod writer;

pub(crate) use crate::nic::managers::{Manager, Owner};
pub(crate) use roots::Roots;

/// The name of a kernel feature as an owned setting.
pub(crate) fn feature(name: &str) -> String {
    format!("{} {name}", crate::nic::registry::FEATURE)
}

/// Every manager that holds `iface`, from their files (NetworkManager, which
/// answers only over D-Bus, is [`networkmanager::owner`]). A `.link` file
/// that sets none of hlctl's settings (`99-default.link`) is left out.
pub(crate) fn from_files(roots: &Roots, iface: &str, ifindex: u32) -> Vec<Owner> {
    let mut out = Vec::new();
    if !roots.managed_ns {
        return out;
    }
    if let Some(o) = ifupdown::owner(roots, iface) {
        out.push(o);
    }
    let nd = networkd::owners(roots, ifindex);
    out.extend(
        nd.into_iter()
            .filter(|o| o.manager != Some(Manager::LinkFile) || !o.owns.is_empty()),
    );
    for o in &mut out {
        o.netplan = o.file.as_deref().and_then(|f| netplan::origin(roots, f));
    }
    out
}

/// Every manager that holds `iface`: NetworkManager first (asked over `nm`,
/// the system bus, when given and the root is the live system's), then the
/// managers found from their files.
pub(crate) async fn find(
    roots: &Roots,
    nm: Option<&zbus::Connection>,
    iface: &str,
    ifindex: u32,
) -> Vec<Owner> {
    let mut out = Vec::new();
    if let Some(conn) = nm.filter(|_| roots.tools && roots.managed_ns) {
        match networkmanager::owner(conn, iface).await {
            Ok(o) => out.extend(o),
            Err(e) => tracing::debug!("{iface}: NetworkManager: {e}"),
        }
    }
    out.extend(from_files(roots, iface, ifindex));
    out
}

/// The index of the interface `name` in this network namespace (0 when
/// there is none: no networkd or udev state is found for it then).
pub(crate) fn ifindex_of(name: &str) -> u32 {
    nix::net::if_::if_nametoindex(name).unwrap_or(0)
}

/// The system bus, where NetworkManager answers; `None` when there is none
/// or the root is moved (tests never ask the host's NetworkManager).
pub(crate) async fn system_bus(roots: &Roots) -> Option<zbus::Connection> {
    if !roots.tools {
        return None;
    }
    zbus::Connection::system().await.ok()
}

/// Fill in the owners of each interface (in this process: the CLI's
/// `--local` path; the daemon asks [`find`] itself).
pub(crate) fn annotate(roots: &Roots, ifaces: &mut [crate::nic::model::Interface]) {
    let Ok(rt) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        return;
    };
    rt.block_on(async {
        let bus = system_bus(roots).await;
        for i in ifaces.iter_mut() {
            i.owners = find(roots, bus.as_ref(), &i.name, i.ifindex).await;
        }
    });
}
