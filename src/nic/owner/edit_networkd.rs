//! Persisting through systemd-networkd and udev's `.link` files: hlctl's
//! drop-in `<file>.d/90-hlctl.conf` in `/etc/systemd/network`, for the
//! settings the link's `.network` or `.link` file sets, then what makes it
//! take effect (`networkctl reload`; `udevadm trigger -c add` for `.link`).
//! A file that matches more than one device gets no drop-in: the change is
//! refused with the file and key to change.
//!
//! A setting that no `.link` file of the link sets — typically when udev's
//! only match is the catch-all `99-default.link`, networkd-managed or not —
//! has no owner to persist through and stays in hlctl's own file (hlctld
//! re-applies it when the link appears); nothing here writes a `.link` file
//! of hlctl's own. Only the first matching `.link` applies, so such a file
//! would replace `99-default.link` (and its drop-ins, like Proxmox's
//! `MACAddressPolicy=none`) for that device, freezing a copy of its naming
//! policy; and since 99-default.link sets none of these settings, no udev
//! "add" undoes them (docs/network-managers.md; tests/netmgr_veth.rs,
//! tests/vm_netmgr.rs).

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use super::error::OwnerError;
use super::fileedit;
use super::networkd::{self, DROPIN};
use super::placed::Placed;
use super::writer::Writer;
use super::{Manager, Roots, feature};
use crate::nic::export::{FEATURE_KEYS, link_value};
use crate::nic::registry;

/// (key, value, settings) for the keys of `file` that `wanted` changes.
type Keys = Vec<(String, String, Vec<String>)>;

/// The `.network` keys: networkd applies only `MTUBytes` of hlctl's settings.
fn network_keys(owned: &std::collections::BTreeSet<String>, wanted: &[(String, Value)]) -> Keys {
    wanted
        .iter()
        .filter(|(n, _)| n == "mtu" && owned.contains(n))
        .map(|(n, v)| {
            (
                "MTUBytes".to_string(),
                registry::value_text(v),
                vec![n.clone()],
            )
        })
        .collect()
}

/// The `.link` keys of the owned settings `wanted` changes.
fn link_keys(owned: &std::collections::BTreeSet<String>, wanted: &[(String, Value)]) -> Keys {
    let mut out: Keys = Vec::new();
    for s in registry::SETTINGS {
        let (Some((key, format)), Some((n, v))) =
            (s.link_key, wanted.iter().find(|(n, _)| *n == s.name()))
        else {
            continue;
        };
        if owned.contains(n) {
            out.push((key.to_string(), link_value(format, v), vec![n.clone()]));
        }
    }
    for (kernel, key) in FEATURE_KEYS {
        let name = feature(kernel);
        let Some((_, v)) = wanted.iter().find(|(n, _)| *n == name) else {
            continue;
        };
        if !owned.contains(&name) {
            continue;
        }
        let yes = if v == "on" { "yes" } else { "no" };
        match out.iter_mut().find(|(k, _, _)| k == key) {
            Some((_, _, settings)) => settings.push(name),
            None => out.push((key.to_string(), yes.to_string(), vec![name])),
        }
    }
    out
}

/// Write hlctl's drop-ins for the link's `.network` and `.link` files.
fn persist(
    roots: &Roots,
    iface: &str,
    ifindex: u32,
    wanted: &[(String, Value)],
) -> Result<Vec<Placed>, OwnerError> {
    let mut todo: Vec<(Manager, String, Keys)> = Vec::new();
    if let Some(f) = networkd::network_file(roots, ifindex) {
        let owned = networkd::network_file_settings(&networkd::link_keys(roots, &f));
        todo.push((Manager::Networkd, f.clone(), network_keys(&owned, wanted)));
    }
    if let Some(f) = networkd::link_file(roots, ifindex) {
        let owned = networkd::link_file_settings(&networkd::link_keys(roots, &f));
        todo.push((Manager::LinkFile, f.clone(), link_keys(&owned, wanted)));
    }
    let mut placed = Vec::new();
    for (manager, file, keys) in todo.into_iter().filter(|(_, _, k)| !k.is_empty()) {
        match write_dropin(roots, manager, iface, &file, &keys) {
            Ok(p) => placed.extend(p),
            Err(e) => {
                Networkd.undo(roots, iface, &placed);
                return Err(e);
            }
        }
    }
    Ok(placed)
}

/// Set `keys` in hlctl's drop-in for `file`, then make it take effect.
fn write_dropin(
    roots: &Roots,
    manager: Manager,
    iface: &str,
    file: &str,
    keys: &Keys,
) -> Result<Vec<Placed>, OwnerError> {
    let main = roots.at(file);
    let text = std::fs::read_to_string(&main).map_err(|e| OwnerError::io(iface, &main, e))?;
    if !networkd::matches_one_device(&text) {
        let lines: Vec<String> = keys.iter().map(|(k, v, _)| format!("{k}={v}")).collect();
        return Err(OwnerError::Refused {
            iface: iface.to_string(),
            path: file.to_string(),
            message: format!(
                "matches more than one device, so hlctl writes no drop-in for it; set {} in a .{} file that matches only {iface}",
                lines.join(" "),
                if manager == Manager::Networkd {
                    "network"
                } else {
                    "link"
                }
            ),
        });
    }
    let path = networkd::dropin_path(roots, file).ok_or_else(|| OwnerError::Refused {
        iface: iface.to_string(),
        path: file.to_string(),
        message: "has no file name".into(),
    })?;
    let mut placed = Vec::new();
    fileedit::edit_file(
        roots,
        iface,
        &path,
        |old| {
            let mut ours = networkd::section(old, "Link");
            for (k, v, settings) in keys {
                let before = ours.insert(k.clone(), v.clone());
                placed.push(Placed {
                    manager,
                    file: roots.live(&path),
                    section: "Link".into(),
                    key: k.clone(),
                    value: v.clone(),
                    before,
                    settings: settings.clone(),
                });
            }
            Ok(networkd::render_dropin(&ours))
        },
        || take_effect(roots, manager, iface, &path),
    )?;
    Ok(placed)
}

/// Make networkd or udev read the changed drop-in (live system only).
fn take_effect(
    roots: &Roots,
    manager: Manager,
    iface: &str,
    path: &Path,
) -> Result<(), OwnerError> {
    if !roots.tools {
        return Ok(());
    }
    if manager == Manager::Networkd {
        return fileedit::run(iface, path, &["networkctl", "reload"]).map(|_| ());
    }
    let dev = format!("/sys/class/net/{iface}");
    fileedit::run(iface, path, &["udevadm", "control", "--reload"])?;
    fileedit::run(iface, path, &["udevadm", "trigger", "-c", "add", &dev])?;
    fileedit::run(iface, path, &["udevadm", "settle", "--timeout=30"]).map(|_| ())
}

/// Put one key of hlctl's drop-in back to `target` (`None`: remove it; the
/// drop-in goes when it has no key left).
fn set_back(
    roots: &Roots,
    iface: &str,
    p: &Placed,
    target: Option<String>,
) -> Result<(), OwnerError> {
    let path = roots.at(&p.file);
    if path.file_name().is_none_or(|n| n != DROPIN) {
        return Ok(()); // only hlctl's own drop-in is ever edited
    }
    fileedit::edit_file(
        roots,
        iface,
        &path,
        |old| {
            let mut ours: BTreeMap<String, String> = networkd::section(old, "Link");
            match &target {
                Some(v) => ours.insert(p.key.clone(), v.clone()),
                None => ours.remove(&p.key),
            };
            Ok(if ours.is_empty() {
                String::new()
            } else {
                networkd::render_dropin(&ours)
            })
        },
        || take_effect(roots, p.manager, iface, &path),
    )
    .map(|_| ())
}

/// The [`Writer`] of hlctl's networkd and .link drop-ins.
pub(crate) struct Networkd;

impl Writer for Networkd {
    fn managers(&self) -> &'static [Manager] {
        &[Manager::Networkd, Manager::LinkFile]
    }

    fn persist(
        &self,
        roots: &Roots,
        iface: &str,
        ifindex: u32,
        wanted: &[(String, Value)],
    ) -> Result<Vec<Placed>, OwnerError> {
        persist(roots, iface, ifindex, wanted)
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
