//! systemd-networkd and udev's `.link` files: which files apply to a link
//! (`/run/systemd/netif/links/<ifindex>`, udev's `ID_NET_LINK_FILE`), the
//! `[Link]` keys they and their drop-ins set, as registry settings, and the
//! drop-in hlctl writes (`<file>.d/90-hlctl.conf`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::{Manager, Owner, Roots, feature};
use crate::nic::export::FEATURE_KEYS;
use crate::nic::registry;

/// The name of the drop-in hlctl owns beside a `.link`/`.network` file.
pub(crate) const DROPIN: &str = "90-hlctl.conf";

/// `KEY=VALUE` lines (networkd's state files, udev's `E:` database lines).
pub(crate) fn env_value(text: &str, key: &str) -> Option<String> {
    text.lines().find_map(|l| {
        let l = l.strip_prefix("E:").unwrap_or(l);
        let v = l.strip_prefix(key)?.strip_prefix('=')?;
        let v = v.trim().trim_matches('"');
        (!v.is_empty()).then(|| v.to_string())
    })
}

/// The keys of one section of a systemd unit-style file, later lines winning.
pub(crate) fn section(text: &str, name: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut inside = false;
    for l in text.lines().map(str::trim) {
        if l.starts_with('[') {
            inside = l == format!("[{name}]");
        } else if inside
            && !l.starts_with(['#', ';'])
            && let Some((k, v)) = l.split_once('=')
        {
            out.insert(k.trim().to_string(), v.trim().to_string());
        }
    }
    out
}

/// The drop-ins of a file named `name` (`10-netplan-eth0.link`) in every
/// directory, ordered by file name as systemd applies them.
fn dropins(roots: &Roots, name: &str) -> Vec<PathBuf> {
    let mut by_name: BTreeMap<String, PathBuf> = BTreeMap::new();
    for dir in roots.systemd_network_dirs().iter().rev() {
        let Ok(rd) = std::fs::read_dir(dir.join(format!("{name}.d"))) else {
            continue;
        };
        for e in rd.flatten() {
            let n = e.file_name().to_string_lossy().into_owned();
            if n.ends_with(".conf") {
                // A higher-priority directory's drop-in of the same name wins.
                by_name.insert(n, e.path());
            }
        }
    }
    by_name.into_values().collect()
}

/// The `[Link]` keys of a file and its drop-ins.
pub(crate) fn link_keys(roots: &Roots, file: &str) -> BTreeMap<String, String> {
    let path = roots.at(file);
    let mut keys = std::fs::read_to_string(&path)
        .map(|t| section(&t, "Link"))
        .unwrap_or_default();
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
    for d in name.map(|n| dropins(roots, &n)).unwrap_or_default() {
        if let Ok(t) = std::fs::read_to_string(d) {
            keys.extend(section(&t, "Link"));
        }
    }
    keys
}

/// The settings a `.link` file's `[Link]` keys set.
pub(crate) fn link_file_settings(keys: &BTreeMap<String, String>) -> BTreeSet<String> {
    let mut owns: BTreeSet<String> = registry::SETTINGS
        .iter()
        .filter(|s| s.link_key.is_some_and(|(k, _)| keys.contains_key(k)))
        .map(registry::Setting::name)
        .collect();
    owns.extend(
        FEATURE_KEYS
            .iter()
            .filter(|(_, k)| keys.contains_key(*k))
            .map(|(f, _)| feature(f)),
    );
    owns
}

/// The settings a `.network` file's `[Link]` section sets (networkd applies
/// only the MTU of the NIC settings hlctl knows).
pub(crate) fn network_file_settings(keys: &BTreeMap<String, String>) -> BTreeSet<String> {
    keys.contains_key("MTUBytes")
        .then(|| "mtu".to_string())
        .into_iter()
        .collect()
}

/// The `.network` file networkd configures `ifindex` with, when it manages it.
pub(crate) fn network_file(roots: &Roots, ifindex: u32) -> Option<String> {
    let text = std::fs::read_to_string(roots.networkd_link_state(ifindex)).ok()?;
    if env_value(&text, "ADMIN_STATE").as_deref() == Some("unmanaged") {
        return None;
    }
    env_value(&text, "NETWORK_FILE")
}

/// The `.link` file udev applied to `ifindex`.
pub(crate) fn link_file(roots: &Roots, ifindex: u32) -> Option<String> {
    let text = std::fs::read_to_string(roots.udev_data(ifindex)).ok()?;
    env_value(&text, "ID_NET_LINK_FILE")
}

/// networkd's and udev's holds on the link: the `.network` file (when
/// networkd manages it) and the `.link` file.
pub(crate) fn owners(roots: &Roots, ifindex: u32) -> Vec<Owner> {
    let mut out = Vec::new();
    if let Some(f) = network_file(roots, ifindex) {
        out.push(Owner {
            owns: network_file_settings(&link_keys(roots, &f)),
            file: Some(f),
            ..Owner::new(Manager::Networkd)
        });
    }
    if let Some(f) = link_file(roots, ifindex) {
        out.push(Owner {
            owns: link_file_settings(&link_keys(roots, &f)),
            file: Some(f),
            ..Owner::new(Manager::LinkFile)
        });
    }
    out
}

/// True when the file's `[Match]` picks out one device (a MAC address, or
/// names without wildcards), so a drop-in for it changes no other link.
pub(crate) fn matches_one_device(text: &str) -> bool {
    let m = section(text, "Match");
    let plain = |v: &String| !v.is_empty() && !v.contains(['*', '?', '[', ' ', '!']);
    ["MACAddress", "PermanentMACAddress", "OriginalName", "Name"]
        .iter()
        .any(|k| m.get(*k).is_some_and(plain))
}

/// Where hlctl's drop-in for `file` goes: `/etc/systemd/network/<name>.d/90-hlctl.conf`.
pub(crate) fn dropin_path(roots: &Roots, file: &str) -> Option<PathBuf> {
    let name = Path::new(file).file_name()?.to_string_lossy().into_owned();
    Some(roots.at(&format!("/etc/systemd/network/{name}.d/{DROPIN}")))
}

/// hlctl's drop-in text with `keys` (`MTUBytes` → `9000`).
pub(crate) fn render_dropin(keys: &BTreeMap<String, String>) -> String {
    let mut out = String::from(
        "# Written by hlctl (`hlctl set --persist`, `hlctl tune`); `hlctl rollback` edits it.\n[Link]\n",
    );
    for (k, v) in keys {
        out.push_str(&format!("{k}={v}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roots(dir: &Path) -> Roots {
        Roots::new(&crate::paths::Paths::under(dir))
    }

    fn write(r: &Roots, path: &str, text: &str) {
        let p = r.at(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    /// The state files of a link netplan rendered for networkd, as systemd 252
    /// writes them (trimmed).
    #[test]
    fn finds_the_network_and_link_files_and_their_settings() {
        let dir = tempfile::tempdir().unwrap();
        let r = roots(dir.path());
        write(
            &r,
            "/run/systemd/netif/links/2",
            "# This is private data. Do not parse.\nADMIN_STATE=configured\nOPER_STATE=routable\nNETWORK_FILE=/run/systemd/network/10-netplan-eth0.network\n",
        );
        write(
            &r,
            "/run/udev/data/n2",
            "I:1234\nE:ID_NET_LINK_FILE=/run/systemd/network/10-netplan-eth0.link\nE:ID_NET_NAME=eth0\n",
        );
        write(
            &r,
            "/run/systemd/network/10-netplan-eth0.network",
            "[Match]\nName=eth0\n\n[Link]\nMTUBytes=9000\n\n[Network]\nDHCP=ipv4\n",
        );
        write(
            &r,
            "/run/systemd/network/10-netplan-eth0.link",
            "[Match]\nOriginalName=eth0\n\n[Link]\nWakeOnLan=off\nTCPSegmentationOffload=true\n",
        );
        write(
            &r,
            "/etc/systemd/network/10-netplan-eth0.link.d/90-hlctl.conf",
            &render_dropin(&[("RxBufferSize".into(), "4096".into())].into()),
        );
        let o = owners(&r, 2);
        assert_eq!(o.len(), 2);
        assert_eq!(o[0].manager, Some(Manager::Networkd));
        assert_eq!(
            o[0].file.as_deref(),
            Some("/run/systemd/network/10-netplan-eth0.network")
        );
        assert_eq!(o[0].owns.iter().collect::<Vec<_>>(), ["mtu"]);
        assert_eq!(o[1].manager, Some(Manager::LinkFile));
        assert_eq!(
            o[1].owns.iter().map(String::as_str).collect::<Vec<_>>(),
            ["feature tx-tcp-segmentation", "ring rx"]
        );
        assert!(owners(&r, 3).is_empty());
        write(
            &r,
            "/run/systemd/netif/links/2",
            "ADMIN_STATE=unmanaged\nNETWORK_FILE=/x.network\n",
        );
        assert_eq!(
            owners(&r, 2).len(),
            1,
            "an unmanaged link is not networkd's"
        );
    }

    #[test]
    fn only_files_matching_one_device_get_a_dropin() {
        assert!(matches_one_device("[Match]\nOriginalName=eth0\n"));
        assert!(matches_one_device(
            "[Match]\nMACAddress=52:54:00:12:34:56\n"
        ));
        assert!(!matches_one_device("[Match]\nOriginalName=*\n"));
        assert!(!matches_one_device("[Match]\nName=en*\n"));
        assert!(!matches_one_device("[Match]\nName=eth0 eth1\n"));
        assert!(!matches_one_device("[Link]\nNamePolicy=keep\n"));
        let r = roots(Path::new("/"));
        assert_eq!(
            dropin_path(&r, "/run/systemd/network/10-netplan-eth0.link").unwrap(),
            Path::new("/etc/systemd/network/10-netplan-eth0.link.d/90-hlctl.conf")
        );
    }
}
