//! Check a [`ChangeSet`] against what the device reports, before anything is
//! touched: the driver supports the group, values are within the device's
//! limits, features exist and are not fixed. Every problem is collected.
//! Short feature names are expanded to the kernel names the device has.

use std::collections::BTreeMap;

use crate::nic::aliases;
use crate::nic::model::{ChangeSet, Interface};
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
            format!("above the device's maximum: allowed 1..={m}"),
        )),
        Some(m) if v == 0 => p.push(Problem::new(
            setting,
            Some(&vs),
            format!("must be at least 1: allowed 1..={m}"),
        )),
        _ => {}
    }
}

/// Speed (Mb/s) and duplex of a link mode name such as `1000baseT/Full`.
pub fn mode_speed_duplex(mode: &str) -> Option<(u32, &str)> {
    let (speed, rest) = mode.split_once("base")?;
    let duplex = rest.rsplit_once('/').map(|(_, d)| d).unwrap_or("Full");
    Some((speed.parse().ok()?, duplex))
}

/// Validate `cs` for `iface`; on success returns the change set with feature
/// names expanded to the device's kernel names.
pub fn validate(iface: &Interface, cs: &ChangeSet) -> Result<ChangeSet, Vec<Problem>> {
    let mut p = Vec::new();
    let mut out = cs.clone();

    if let Some(mtu) = cs.mtu {
        let min = iface.mtu_min.unwrap_or(68);
        let max = iface.mtu_max.unwrap_or(65535);
        if !(min..=max).contains(&mtu) {
            p.push(Problem::new(
                "mtu",
                Some(&mtu.to_string()),
                format!("outside the device's range: allowed {min}..={max}"),
            ));
        }
    }
    if let Some(rs) = &cs.rings {
        match &iface.rings {
            None => p.push(unsupported(iface, "ring")),
            Some(r) => {
                limit(&mut p, "ring rx", rs.rx, r.rx_max, "rx ring", false);
                limit(&mut p, "ring tx", rs.tx, r.tx_max, "tx ring", false);
                limit(
                    &mut p,
                    "ring rx-mini",
                    rs.rx_mini,
                    r.rx_mini_max,
                    "rx-mini ring",
                    false,
                );
                limit(
                    &mut p,
                    "ring rx-jumbo",
                    rs.rx_jumbo,
                    r.rx_jumbo_max,
                    "rx-jumbo ring",
                    false,
                );
            }
        }
    }
    if cs.pause.is_some() && iface.pause.is_none() {
        p.push(unsupported(iface, "pause"));
    }
    if let Some(cs_ch) = &cs.channels {
        match &iface.channels {
            None => p.push(unsupported(iface, "channels")),
            Some(c) => {
                limit(
                    &mut p,
                    "channels rx",
                    cs_ch.rx,
                    c.rx_max,
                    "rx channels",
                    true,
                );
                limit(
                    &mut p,
                    "channels tx",
                    cs_ch.tx,
                    c.tx_max,
                    "tx channels",
                    true,
                );
                limit(
                    &mut p,
                    "channels other",
                    cs_ch.other,
                    c.other_max,
                    "other channels",
                    true,
                );
                limit(
                    &mut p,
                    "channels combined",
                    cs_ch.combined,
                    c.combined_max,
                    "combined channels",
                    true,
                );
            }
        }
    }
    if let Some(co) = &cs.coalesce {
        match &iface.coalesce {
            None => p.push(unsupported(iface, "coalesce")),
            Some(c) => {
                let fields = [
                    (
                        "coalesce rx-usecs",
                        co.rx_usecs.is_some(),
                        c.rx_usecs.is_some(),
                    ),
                    (
                        "coalesce tx-usecs",
                        co.tx_usecs.is_some(),
                        c.tx_usecs.is_some(),
                    ),
                    (
                        "coalesce rx-frames",
                        co.rx_frames.is_some(),
                        c.rx_frames.is_some(),
                    ),
                    (
                        "coalesce tx-frames",
                        co.tx_frames.is_some(),
                        c.tx_frames.is_some(),
                    ),
                    (
                        "coalesce adaptive-rx",
                        co.adaptive_rx.is_some(),
                        c.adaptive_rx.is_some(),
                    ),
                    (
                        "coalesce adaptive-tx",
                        co.adaptive_tx.is_some(),
                        c.adaptive_tx.is_some(),
                    ),
                ];
                for (name, wanted, has) in fields {
                    if wanted && !has {
                        p.push(unsupported(iface, name));
                    }
                }
            }
        }
    }
    if let Some(l) = &cs.link {
        match &iface.link {
            None => p.push(unsupported(iface, "link")),
            Some(cur) => {
                let supported: Vec<(u32, &str)> = cur
                    .supported_modes
                    .iter()
                    .filter_map(|m| mode_speed_duplex(m))
                    .collect();
                if let Some(speed) = l.speed_mbps {
                    if speed == 0 {
                        p.push(Problem::new(
                            "link speed",
                            Some("0"),
                            "must be a speed in Mb/s, e.g. 100, 1000, 10000",
                        ));
                    } else if !supported.is_empty() && !supported.iter().any(|(s, _)| *s == speed) {
                        let mut speeds: Vec<u32> = supported.iter().map(|(s, _)| *s).collect();
                        speeds.sort();
                        speeds.dedup();
                        let list: Vec<String> = speeds.iter().map(u32::to_string).collect();
                        p.push(Problem::new(
                            "link speed",
                            Some(&speed.to_string()),
                            format!("not a supported speed: allowed {}", list.join(", ")),
                        ));
                    }
                }
                if let Some(modes) = &l.advertise {
                    for m in modes {
                        if !cur.supported_modes.contains(m) {
                            let allowed = if cur.supported_modes.is_empty() {
                                "(the device lists none)".to_string()
                            } else {
                                cur.supported_modes.join(", ")
                            };
                            p.push(Problem::new(
                                "link advertise",
                                Some(m),
                                format!("not a supported link mode: allowed {allowed}"),
                            ));
                        }
                    }
                }
            }
        }
    }
    if !cs.features.is_empty() {
        match &iface.features {
            None => p.push(unsupported(iface, "feature")),
            Some(have) => {
                let mut expanded = BTreeMap::new();
                for (name, on) in &cs.features {
                    let setting = format!("feature {name}");
                    let value = if *on { "on" } else { "off" };
                    let names: Vec<&str> = match aliases::expand(name) {
                        Some(kernel) => kernel
                            .iter()
                            .copied()
                            .filter(|k| have.contains_key(*k))
                            .collect(),
                        None if have.contains_key(name.as_str()) => vec![name.as_str()],
                        None => {
                            p.push(Problem::new(setting, Some(value), format!(
                                "unknown feature: use a kernel name from `hlctl show` (e.g. rx-gro) or one of {}",
                                aliases::short_names().join(", "))));
                            continue;
                        }
                    };
                    let changeable: Vec<&str> =
                        names.iter().copied().filter(|k| !have[*k].fixed).collect();
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
                out.features = expanded;
            }
        }
    }
    if p.is_empty() { Ok(out) } else { Err(p) }
}
