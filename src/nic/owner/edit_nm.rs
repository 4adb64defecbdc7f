//! NetworkManager: hlctl does not write its profiles yet (Update2 inside a
//! checkpoint is not implemented), so persisting a setting the active
//! profile sets is refused with the exact `nmcli` command that persists it
//! there; NetworkManager would otherwise put its own value back at the next
//! activation. Settings the profile does not set are persisted by hlctl alone.

use serde_json::Value;

use super::error::OwnerError;
use super::placed::requested;
use super::{Owner, Roots, networkmanager};
use crate::nic::model::ChangeSet;
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

fn nm_value(setting: &str, v: &Value) -> String {
    let t = value_text(v);
    match (
        setting.starts_with("feature")
            || setting.starts_with("pause")
            || setting.starts_with("coalesce adaptive")
            || setting == "link autoneg",
        t.as_str(),
    ) {
        (true, "on") => "true".into(),
        (true, "off") => "false".into(),
        _ => t,
    }
}

/// The `nmcli` command that persists the owned settings of `cs` in the profile.
pub(crate) fn command(owner: &Owner, cs: &ChangeSet) -> Option<String> {
    let mut args = Vec::new();
    for (setting, v) in requested(cs) {
        if owner.owns.contains(&setting)
            && let Some(k) = nm_key(&setting)
            && !args.iter().any(|(a, _)| *a == k)
        {
            args.push((k, nm_value(&setting, &v)));
        }
    }
    if args.is_empty() {
        return None;
    }
    let id = owner.name.clone().unwrap_or_default();
    let kv: Vec<String> = args.iter().map(|(k, v)| format!("{k} {v}")).collect();
    Some(format!(
        "nmcli connection modify \"{id}\" {} && nmcli connection up \"{id}\"",
        kv.join(" ")
    ))
}

/// Refuse to persist settings NetworkManager's active profile sets.
pub(crate) fn check(roots: &Roots, iface: &str, cs: &ChangeSet) -> Result<(), OwnerError> {
    if !roots.tools || !roots.managed_ns {
        return Ok(());
    }
    let Ok(rt) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        return Ok(());
    };
    let owner = rt.block_on(async {
        let conn = super::system_bus(roots).await?;
        networkmanager::owner(&conn, iface).await.ok().flatten()
    });
    let Some(o) = owner else {
        return Ok(());
    };
    match command(&o, cs) {
        None => Ok(()),
        Some(cmd) => Err(OwnerError::Refused {
            iface: iface.to_string(),
            path: o.file.clone().unwrap_or_else(|| "NetworkManager".into()),
            message: format!(
                "NetworkManager's profile sets these settings and puts its own values back when the connection activates; hlctl does not edit NetworkManager profiles yet. Persist them there: {cmd}"
            ),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nic::model::RingsSet;
    use crate::nic::owned::Manager;

    #[test]
    fn the_command_names_the_profile_keys_of_owned_settings_only() {
        let o = Owner {
            manager: Some(Manager::NetworkManager),
            name: Some("Wired connection 1".into()),
            file: None,
            netplan: None,
            owns: ["mtu", "ring rx", "ring tx", "feature tx-tcp-segmentation"]
                .iter()
                .map(|s| s.to_string())
                .collect(),
        };
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
        assert_eq!(
            command(&o, &cs).unwrap(),
            "nmcli connection modify \"Wired connection 1\" 802-3-ethernet.mtu 9000 ethtool.ring-rx 4096 ethtool.feature-tso false && nmcli connection up \"Wired connection 1\""
        );
        let only_txq = ChangeSet {
            txqueuelen: Some(5000),
            ..Default::default()
        };
        assert_eq!(command(&o, &only_txq), None);
    }
}
