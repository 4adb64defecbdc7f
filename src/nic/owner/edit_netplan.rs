//! netplan: when the link's networkd files were generated from a netplan
//! YAML that names the interface, the settings netplan can hold (the MTU and
//! the offloads it renders into `.link` keys) are persisted in hlctl's own
//! netplan file, `/etc/netplan/90-hlctl.yaml` (what `netplan set
//! --origin-hint=90-hlctl` would write), which netplan merges after the
//! user's own files: those stay byte for byte as they were, and taking
//! hlctl's key out brings the user's value back. `netplan generate` then
//! renders the files networkd and udev read at the next `netplan apply` or
//! boot; the values are in effect already (hlctl set them). The rest goes to
//! networkd's drop-ins.

use std::collections::BTreeMap;

use serde_json::Value;

use super::error::OwnerError;
use super::placed::Placed;
use super::{Manager, Roots, feature, fileedit, netplan, networkd};
use crate::nic::export::FEATURE_KEYS;
use crate::nic::registry::value_text;

/// hlctl's netplan file (the `--origin-hint`).
pub(crate) const HINT: &str = "90-hlctl";

/// `.link` keys → netplan's names for them (netplan renders one into the other).
const KEYS: &[(&str, &str)] = &[
    ("ReceiveChecksumOffload", "receive-checksum-offload"),
    ("TransmitChecksumOffload", "transmit-checksum-offload"),
    ("TCPSegmentationOffload", "tcp-segmentation-offload"),
    ("TCP6SegmentationOffload", "tcp6-segmentation-offload"),
    ("GenericSegmentationOffload", "generic-segmentation-offload"),
    ("GenericReceiveOffload", "generic-receive-offload"),
    ("LargeReceiveOffload", "large-receive-offload"),
];

/// One netplan key: its name under the interface, value, settings it carries.
#[derive(Debug, PartialEq)]
pub(crate) struct Key {
    pub(crate) key: String,
    pub(crate) value: String,
    pub(crate) settings: Vec<String>,
}

/// The netplan keys of the settings in `wanted` netplan can hold.
pub(crate) fn plan(wanted: &[(String, Value)]) -> Vec<Key> {
    let mut out: Vec<Key> = Vec::new();
    for (setting, v) in wanted {
        let (key, value) = if setting == "mtu" {
            ("mtu", value_text(v))
        } else {
            let Some((_, link_key)) = FEATURE_KEYS.iter().find(|(k, _)| feature(k) == *setting)
            else {
                continue;
            };
            let Some((_, key)) = KEYS.iter().find(|(l, _)| l == link_key) else {
                continue;
            };
            (*key, (value_text(v) == "on").to_string())
        };
        match out.iter_mut().find(|k| k.key == key) {
            Some(k) => k.settings.push(setting.clone()),
            None => out.push(Key {
                key: key.to_string(),
                value,
                settings: vec![setting.clone()],
            }),
        }
    }
    out
}

/// Where `iface` is defined in a netplan YAML: `ethernets.eth0` (the
/// device-type mapping it is a key of), or `None` when the file does not
/// name it.
pub(crate) fn device_path(yaml: &str, iface: &str) -> Option<String> {
    let lines: Vec<&str> = yaml.lines().collect();
    let indent = |l: &str| l.len() - l.trim_start().len();
    let at = lines.iter().position(|l| {
        l.trim_start()
            .strip_prefix(iface)
            .is_some_and(|r| r.trim_end() == ":")
    })?;
    let own = indent(lines[at]);
    let parent = lines[..at]
        .iter()
        .rev()
        .find(|l| !l.trim().is_empty() && indent(l) < own)?;
    let kind = parent.trim().strip_suffix(':')?;
    matches!(
        kind,
        "ethernets" | "bonds" | "bridges" | "vlans" | "wifis" | "vrfs"
    )
    .then(|| format!("{kind}.{iface}"))
}

/// The netplan YAML and device path `iface`'s networkd file came from.
fn origin(roots: &Roots, iface: &str, ifindex: u32) -> Option<(String, String)> {
    let file = networkd::network_file(roots, ifindex)?;
    let yaml = netplan::origin(roots, &file)?;
    let text = std::fs::read_to_string(roots.at(&yaml)).ok()?;
    Some((yaml.clone(), device_path(&text, iface)?))
}

/// Persist the settings of `wanted` netplan can hold, when the link's
/// networkd files are netplan's.
pub(crate) fn persist(
    roots: &Roots,
    iface: &str,
    ifindex: u32,
    wanted: &[(String, Value)],
) -> Result<Vec<Placed>, OwnerError> {
    let keys = plan(wanted);
    let Some((_, device)) = origin(roots, iface, ifindex).filter(|_| !keys.is_empty()) else {
        return Ok(Vec::new());
    };
    let file = format!("/etc/netplan/{HINT}.yaml");
    let mut placed = Vec::new();
    edit(roots, iface, &file, |ours| {
        let mine = ours.entry(device.clone()).or_default();
        for k in &keys {
            let before = mine.insert(k.key.clone(), k.value.clone());
            placed.push(Placed {
                manager: Manager::Netplan,
                file: file.clone(),
                section: device.clone(),
                key: k.key.clone(),
                value: k.value.clone(),
                before,
                settings: k.settings.clone(),
            });
        }
    })?;
    Ok(placed)
}

/// hlctl's netplan file: device path (`ethernets.eth0`) → key → value.
type Ours = BTreeMap<String, BTreeMap<String, String>>;

/// Read hlctl's netplan file (only ever written by [`render`]).
fn parse(text: &str) -> Ours {
    let mut out = Ours::new();
    let (mut kind, mut device) = (String::new(), String::new());
    for l in text.lines().filter(|l| !l.trim_start().starts_with('#')) {
        let depth = l.len() - l.trim_start().len();
        let Some((k, v)) = l.trim().split_once(':') else {
            continue;
        };
        let k = k.trim_matches('"').to_string();
        match depth {
            2 if k != "version" => kind = k,
            4 => device = format!("{kind}.{k}"),
            6 => {
                out.entry(device.clone())
                    .or_default()
                    .insert(k, v.trim().to_string());
            }
            _ => {}
        }
    }
    out
}

fn render(ours: &Ours) -> String {
    if ours.values().all(BTreeMap::is_empty) {
        return String::new();
    }
    let mut out = String::from(
        "# Written by hlctl (`hlctl set --persist`, `hlctl tune`); `hlctl rollback` edits it.\nnetwork:\n  version: 2\n",
    );
    let mut kind = "";
    for (path, keys) in ours.iter().filter(|(_, k)| !k.is_empty()) {
        let (k, device) = path.split_once('.').unwrap_or(("ethernets", path));
        if k != kind {
            out.push_str(&format!("  {k}:\n"));
            kind = k;
        }
        out.push_str(&format!("    \"{device}\":\n"));
        for (key, v) in keys {
            out.push_str(&format!("      {key}: {v}\n"));
        }
    }
    out
}

/// Change hlctl's netplan file (mode 0600, as netplan wants its files),
/// then render networkd's and udev's files from the YAML again.
fn edit(
    roots: &Roots,
    iface: &str,
    file: &str,
    change: impl FnOnce(&mut Ours),
) -> Result<(), OwnerError> {
    let path = roots.at(file);
    if !path.exists() {
        std::fs::create_dir_all(path.parent().unwrap_or(&path))
            .map_err(|e| OwnerError::io(iface, &path, e))?;
        crate::fsutil::write_atomic(&path, b"", 0o600)
            .map_err(|e| OwnerError::io(iface, &path, e))?;
    }
    let r = fileedit::edit_file(
        roots,
        iface,
        &path,
        |old| {
            let mut ours = parse(old);
            change(&mut ours);
            Ok(render(&ours))
        },
        || generate(roots, iface),
    );
    if std::fs::metadata(&path).is_ok_and(|m| m.len() == 0) {
        let _ = std::fs::remove_file(&path);
    }
    r.map(|_| ())
}

/// `netplan generate`: networkd's and udev's files from the YAML (live system only).
fn generate(roots: &Roots, iface: &str) -> Result<(), OwnerError> {
    if !roots.tools {
        return Ok(());
    }
    let dir = roots.at("/etc/netplan");
    fileedit::run(iface, &dir, &["netplan", "generate"]).map(|_| ())
}

/// Put one of hlctl's netplan keys back to `target` (`None`: take it out,
/// which brings back the value of the user's own file).
pub(crate) fn set_back(
    roots: &Roots,
    iface: &str,
    p: &Placed,
    target: Option<String>,
) -> Result<(), OwnerError> {
    edit(roots, iface, &p.file, |ours| {
        let mine = ours.entry(p.section.clone()).or_default();
        match target {
            Some(v) => mine.insert(p.key.clone(), v),
            None => mine.remove(&p.key),
        };
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nic::model::ChangeSet;
    use crate::nic::owner::placed::requested;

    #[test]
    fn mtu_and_offloads_have_netplan_keys_rings_do_not() {
        let mut cs = ChangeSet {
            mtu: Some(9000),
            rings: Some(crate::nic::model::RingsSet {
                rx: Some(4096),
                ..Default::default()
            }),
            ..Default::default()
        };
        cs.features.insert("tx-tcp-segmentation".into(), false);
        cs.features.insert("rx-gro".into(), true);
        let keys = plan(&requested(&cs));
        let got: Vec<(&str, &str)> = keys
            .iter()
            .map(|k| (k.key.as_str(), k.value.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                ("mtu", "9000"),
                ("generic-receive-offload", "true"),
                ("tcp-segmentation-offload", "false"),
            ]
        );
    }

    #[test]
    fn the_device_path_is_the_mapping_the_interface_is_a_key_of() {
        let yaml = "network:\n  version: 2\n  renderer: networkd\n  ethernets:\n    eth0:\n      addresses: [10.0.0.2/24]\n  bridges:\n    br0:\n      interfaces: [eth0]\n";
        assert_eq!(device_path(yaml, "eth0").as_deref(), Some("ethernets.eth0"));
        assert_eq!(device_path(yaml, "br0").as_deref(), Some("bridges.br0"));
        assert_eq!(device_path(yaml, "eth1"), None);
        assert_eq!(device_path("network:\n  eth0:\n", "eth0"), None);
    }

    #[test]
    fn hlctls_file_reads_back_what_it_wrote_and_empty_means_no_file() {
        let mut ours = Ours::new();
        ours.entry("ethernets.eth0".into())
            .or_default()
            .insert("mtu".into(), "9000".into());
        ours.entry("bridges.br0".into())
            .or_default()
            .insert("mtu".into(), "9000".into());
        let text = render(&ours);
        assert!(
            text.contains("network:\n  version: 2\n  bridges:\n    \"br0\":\n      mtu: 9000\n  ethernets:\n    \"eth0\":\n      mtu: 9000\n"),
            "{text}"
        );
        assert_eq!(parse(&text), ours);
        ours.values_mut().for_each(BTreeMap::clear);
        assert_eq!(render(&ours), "");
    }
}
