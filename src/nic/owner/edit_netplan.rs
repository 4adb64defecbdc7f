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
use super::writer::Writer;
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

/// The netplan YAML and device path `iface`'s networkd file came from.
fn origin(roots: &Roots, iface: &str, ifindex: u32) -> Option<(String, String)> {
    let file = networkd::network_file(roots, ifindex)?;
    let yaml = netplan::origin(roots, &file)?;
    let text = std::fs::read_to_string(roots.at(&yaml)).ok()?;
    Some((yaml.clone(), netplan::device_path(&text, iface)?))
}

/// Persist the settings of `wanted` netplan can hold, when the link's
/// networkd files are netplan's.
fn persist(
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

/// Read hlctl's netplan file as YAML (written by [`render`], perhaps edited
/// by hand since: flow style, quotes and comments read as netplan reads them):
/// `network.<kind>.<device>.<key>: <scalar>`. A file that is not YAML, or
/// holds more than scalars under a device, is refused rather than rewritten
/// without what it held.
fn parse(iface: &str, path: &std::path::Path, text: &str) -> Result<Ours, OwnerError> {
    let bad = |message: String| OwnerError::Refused {
        iface: iface.to_string(),
        path: path.display().to_string(),
        message: format!("not a netplan file hlctl can edit: {message}"),
    };
    let docs = yaml_rust2::YamlLoader::load_from_str(text).map_err(|e| bad(e.to_string()))?;
    let mut out = Ours::new();
    let Some(network) = docs.first().and_then(|d| d["network"].as_hash()) else {
        return Ok(out);
    };
    for (kind, devices) in network {
        let (Some(kind), Some(devices)) = (kind.as_str(), devices.as_hash()) else {
            continue;
        };
        for (device, keys) in devices {
            let (Some(device), Some(keys)) = (scalar(device), keys.as_hash()) else {
                return Err(bad(format!(
                    "network.{kind}: a device that is not a mapping"
                )));
            };
            let mine = out.entry(format!("{kind}.{device}")).or_default();
            for (k, v) in keys {
                let (Some(k), Some(v)) = (scalar(k), scalar(v)) else {
                    return Err(bad(format!(
                        "network.{kind}.{device}: a value that is not a scalar"
                    )));
                };
                mine.insert(k, v);
            }
        }
    }
    Ok(out)
}

/// A YAML scalar as its text (`9000`, `false`, `eth0`).
fn scalar(y: &yaml_rust2::Yaml) -> Option<String> {
    use yaml_rust2::Yaml;
    match y {
        Yaml::String(s) | Yaml::Real(s) => Some(s.clone()),
        Yaml::Integer(i) => Some(i.to_string()),
        Yaml::Boolean(b) => Some(b.to_string()),
        _ => None,
    }
}

/// A value as the YAML scalar netplan expects: `9000` an integer, `true` a
/// boolean, anything else a string.
fn typed(v: &str) -> yaml_rust2::Yaml {
    use yaml_rust2::Yaml;
    match (v.parse::<i64>(), v) {
        (Ok(i), _) => Yaml::Integer(i),
        (_, "true" | "false") => Yaml::Boolean(v == "true"),
        _ => Yaml::String(v.to_string()),
    }
}

/// hlctl's netplan file, written with yaml-rust2's emitter (block style;
/// keys and values quoted wherever YAML needs it); empty when hlctl holds
/// no key.
fn render(ours: &Ours) -> String {
    use yaml_rust2::Yaml;
    use yaml_rust2::yaml::Hash;
    if ours.values().all(BTreeMap::is_empty) {
        return String::new();
    }
    let mut kinds: BTreeMap<&str, Hash> = BTreeMap::new();
    for (path, keys) in ours.iter().filter(|(_, k)| !k.is_empty()) {
        let (kind, device) = path.split_once('.').unwrap_or(("ethernets", path));
        let values: Hash = keys
            .iter()
            .map(|(k, v)| (Yaml::String(k.clone()), typed(v)))
            .collect();
        kinds
            .entry(kind)
            .or_default()
            .insert(Yaml::String(device.to_string()), Yaml::Hash(values));
    }
    let mut network = Hash::new();
    network.insert(Yaml::String("version".into()), Yaml::Integer(2));
    for (kind, devices) in kinds {
        network.insert(Yaml::String(kind.into()), Yaml::Hash(devices));
    }
    let mut doc = Hash::new();
    doc.insert(Yaml::String("network".into()), Yaml::Hash(network));
    let mut text = String::new();
    let mut emitter = yaml_rust2::YamlEmitter::new(&mut text);
    emitter
        .dump(&Yaml::Hash(doc))
        .expect("writing YAML into a String");
    let body = text.strip_prefix("---\n").unwrap_or(&text);
    format!(
        "# Written by hlctl (`hlctl set --persist`, `hlctl tune`); `hlctl rollback` edits it.\n{body}\n"
    )
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
        crate::fsutil::write_state(crate::fsutil::Role::OwnerFile, &path, b"", 0o600)
            .map_err(|e| OwnerError::io(iface, &path, e))?;
    }
    let r = fileedit::edit_file(
        roots,
        iface,
        &path,
        |old| {
            let mut ours = parse(iface, &path, old)?;
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
fn set_back(
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

/// The [`Writer`] of hlctl's netplan file.
pub(crate) struct Netplan;

impl Writer for Netplan {
    fn managers(&self) -> &'static [Manager] {
        &[Manager::Netplan]
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
            text.contains("network:\n  version: 2\n  bridges:\n    br0:\n      mtu: 9000\n  ethernets:\n    eth0:\n      mtu: 9000\n"),
            "{text}"
        );
        let p = std::path::Path::new("/etc/netplan/90-hlctl.yaml");
        assert_eq!(parse("eth0", p, &text).unwrap(), ours);
        ours.values_mut().for_each(BTreeMap::clear);
        assert_eq!(render(&ours), "");
    }

    /// Issue 38: the file was read by indentation, so a hand edit in flow
    /// style, with quoted keys or with comments lost hlctl's keys (the next
    /// write dropped them) or read a comment as a key.
    #[test]
    fn hlctls_file_reads_flow_style_quoted_keys_and_comments() {
        let p = std::path::Path::new("/etc/netplan/90-hlctl.yaml");
        let flow = "network: {version: 2, ethernets: {eth0: {mtu: 9000, tcp-segmentation-offload: false}}}\n";
        let quoted = "network:\n  version: 2\n  \"ethernets\":\n    'eth0':\n      \"mtu\": 9000 # jumbo\n      # gso: off, tried once\n      tcp-segmentation-offload: false\n";
        for text in [flow, quoted] {
            let ours = parse("eth0", p, text).unwrap();
            let eth0 = &ours["ethernets.eth0"];
            assert_eq!(eth0.get("mtu").map(String::as_str), Some("9000"), "{text}");
            assert_eq!(
                eth0.get("tcp-segmentation-offload").map(String::as_str),
                Some("false"),
                "{text}"
            );
            assert_eq!(eth0.len(), 2, "{text}: {eth0:?}");
            assert_eq!(parse("eth0", p, &render(&ours)).unwrap(), ours);
        }
        let err = parse("eth0", p, "network: {ethernets: [eth0\n").unwrap_err();
        assert!(err.to_string().contains("nothing changed"), "{err}");
    }
}
