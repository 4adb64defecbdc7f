//! Check a [`ChangeSet`] against what the device reports, before anything is
//! touched: the driver supports the group, values are within the device's
//! limits, features exist and are not fixed. Every problem is collected.
//! Short feature names are expanded to the kernel names the device has.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::nic::aliases;
use crate::nic::model::{ChangeSet, Feature, Interface};
use crate::nic::registry::{self, Check, FEATURE, Setting, SettingValue};
use crate::problem::Problem;

fn unsupported(iface: &Interface, group: &str) -> Problem {
    Problem::new(
        group,
        None,
        format!(
            "not supported by driver {}",
            iface
                .driver
                .as_deref()
                .unwrap_or(iface.kind.as_deref().unwrap_or("(unknown)"))
        ),
    )
}

fn limit(
    p: &mut Vec<Problem>,
    setting: &str,
    value: Option<u32>,
    max: Option<u32>,
    what: &str,
    zero_ok: bool,
) {
    let Some(v) = value else { return };
    let vs = v.to_string();
    match max {
        _ if v == 0 && zero_ok => {}
        Some(0) | None => p.push(Problem::new(
            setting,
            Some(&vs),
            format!("this device has no {what}"),
        )),
        Some(m) if v > m => p.push(Problem::new(
            setting,
            Some(&vs),
            format!("above the device's maximum: allowed 1 to {m}"),
        )),
        Some(m) if v == 0 => p.push(Problem::new(
            setting,
            Some(&vs),
            format!("must be at least 1: allowed 1 to {m}"),
        )),
        _ => {}
    }
}

pub(crate) use crate::nic::model::mode_speed_duplex;

/// Validate `cs` for `iface`; on success returns the change set with feature
/// names expanded to the device's kernel names.
pub(crate) fn validate(iface: &Interface, cs: &ChangeSet) -> Result<ChangeSet, Vec<Problem>> {
    let mut p = Vec::new();
    let mut out = cs.clone();
    check_settings(iface, cs, &mut p);
    if !cs.features.is_empty() {
        match &iface.features {
            None => p.push(unsupported(iface, FEATURE)),
            Some(have) => out.features = expand_features(have, &cs.features, &mut p),
        }
    }
    if p.is_empty() { Ok(out) } else { Err(p) }
}

/// Every requested setting of the table: its group is supported and its
/// value passes the setting's check.
fn check_settings(iface: &Interface, cs: &ChangeSet, p: &mut Vec<Problem>) {
    for g in registry::GROUPS.iter().filter(|g| g.word != FEATURE) {
        let wanted: Vec<(&Setting, Value)> = registry::in_group(g.word)
            .filter_map(|s| (s.get)(cs).map(|v| (s, v)))
            .collect();
        if wanted.is_empty() {
            continue;
        }
        if !(g.supported)(iface) {
            p.push(unsupported(iface, g.word));
            continue;
        }
        for (s, v) in wanted {
            check(iface, s, &v, p);
        }
    }
}

/// One requested value against what the device reports.
fn check(iface: &Interface, s: &Setting, v: &Value, p: &mut Vec<Problem>) {
    let n = v.as_u64().and_then(|n| u32::try_from(n).ok());
    match s.check {
        Check::None => {}
        Check::Mtu => check_mtu(iface, n, p),
        Check::Max { max, what, zero_ok } => limit(p, &s.name(), n, max(iface), what, zero_ok),
        Check::Reported => {
            if (s.read)(iface).is_null() {
                p.push(unsupported(iface, &s.name()));
            }
        }
        Check::Speed => check_speed(iface, &s.name(), n, p),
        Check::Modes => {
            let modes: Vec<String> = SettingValue::from_value(v).unwrap_or_default();
            check_modes(iface, &s.name(), &modes, p);
        }
        Check::Queues { count, what } => check_queues(iface, s, v, count(iface), what, p),
    }
}

/// A per-queue map names one CPU list per queue of the device (or is `none`).
fn check_queues(
    iface: &Interface,
    s: &Setting,
    v: &Value,
    count: Option<u32>,
    what: &str,
    p: &mut Vec<Problem>,
) {
    let text = v.as_str().unwrap_or_default();
    let named = crate::cpu::cpulist::map_len(text);
    match count {
        Some(n) if named != 0 && named != n as usize => p.push(Problem::new(
            s.name(),
            Some(text),
            format!(
                "names {named} queue{}, {} has {n} {what}: give one CPU list per queue, separated by /, or none",
                if named == 1 { "" } else { "s" },
                iface.name
            ),
        )),
        _ => {}
    }
}

fn check_mtu(iface: &Interface, mtu: Option<u32>, p: &mut Vec<Problem>) {
    let Some(mtu) = mtu else { return };
    let min = iface.mtu_min.unwrap_or(68);
    // A maximum of 0 is the kernel's "no upper limit" (`lo`, for one).
    let (max, allowed) = match iface.mtu_max.unwrap_or(65535) {
        0 => (i32::MAX as u32, format!("{min} or more")),
        m => (m, crate::units::range(min, m)),
    };
    if !(min..=max).contains(&mtu) {
        p.push(Problem::new(
            "mtu",
            Some(&mtu.to_string()),
            format!("outside the device's range: allowed {allowed}"),
        ));
    }
}

/// The speeds (Mb/s) of the device's supported link modes, sorted, once each.
fn supported_speeds(iface: &Interface) -> Vec<u32> {
    let mut speeds: Vec<u32> = iface
        .link
        .iter()
        .flat_map(|l| l.supported_modes.iter())
        .filter_map(|m| mode_speed_duplex(m).map(|(s, _)| s))
        .collect();
    speeds.sort();
    speeds.dedup();
    speeds
}

fn check_speed(iface: &Interface, name: &str, speed: Option<u32>, p: &mut Vec<Problem>) {
    let Some(speed) = speed else { return };
    let speeds = supported_speeds(iface);
    if speed == 0 {
        p.push(Problem::new(
            name,
            Some("0"),
            "must be a speed in Mbit/s, e.g. 100, 1000, 10000",
        ));
    } else if !speeds.is_empty() && !speeds.contains(&speed) {
        let list: Vec<String> = speeds.iter().map(u32::to_string).collect();
        p.push(Problem::new(
            name,
            Some(&speed.to_string()),
            format!("not a supported speed: allowed {}", list.join(", ")),
        ));
    }
}

fn check_modes(iface: &Interface, name: &str, modes: &[String], p: &mut Vec<Problem>) {
    let supported = iface
        .link
        .as_ref()
        .map(|l| l.supported_modes.as_slice())
        .unwrap_or_default();
    for m in modes.iter().filter(|m| !supported.contains(m)) {
        let allowed = if supported.is_empty() {
            "(the device lists none)".to_string()
        } else {
            supported.join(", ")
        };
        p.push(Problem::new(
            name,
            Some(m),
            format!("not a supported link mode: allowed {allowed}"),
        ));
    }
}

/// The kernel features a requested name stands for on this device (a short
/// name's expansion, or the name itself), or `None` for an unknown name.
fn kernel_names<'a>(have: &BTreeMap<String, Feature>, name: &'a str) -> Option<Vec<&'a str>> {
    match aliases::expand(name) {
        Some(kernel) => Some(
            kernel
                .iter()
                .copied()
                .filter(|k| have.contains_key(*k))
                .collect(),
        ),
        None if have.contains_key(name) => Some(vec![name]),
        None => None,
    }
}

/// Requested features by kernel name: short names expanded, fixed features
/// dropped (a problem when the request would change them).
fn expand_features(
    have: &BTreeMap<String, Feature>,
    wanted: &BTreeMap<String, bool>,
    p: &mut Vec<Problem>,
) -> BTreeMap<String, bool> {
    let mut expanded = BTreeMap::new();
    for (name, on) in wanted {
        let setting = format!("{FEATURE} {name}");
        let value = if *on { "on" } else { "off" };
        let Some(names) = kernel_names(have, name) else {
            p.push(Problem::new(setting, Some(value), format!(
                "unknown feature: use a kernel name from `hlctl show` (e.g. rx-gro) or one of {}",
                aliases::short_names().join(", "))));
            continue;
        };
        let changeable: Vec<&str> = names.iter().copied().filter(|k| !have[*k].fixed).collect();
        if changeable.is_empty() {
            let why = if names.is_empty() {
                "the device has none of its features".to_string()
            } else {
                format!("fixed by the driver ({})", names.join(", "))
            };
            // Asking for the value it already holds is harmless.
            if names.is_empty() || names.iter().any(|k| have[*k].active != *on) {
                p.push(Problem::new(
                    setting,
                    Some(value),
                    format!("cannot be changed: {why}"),
                ));
            }
            continue;
        }
        for k in changeable {
            expanded.insert(k.to_string(), *on);
        }
    }
    expanded
}
