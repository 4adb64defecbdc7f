//! One line per requested setting: before → requested → after.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::nic::model::{ChangeSet, Interface};

/// What happened to one setting.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Dry run: would change.
    Planned,
    /// Already held the requested value; not touched.
    Unchanged,
    /// Changed and reads back as requested.
    Changed,
    /// Changed, but the kernel holds a different value than requested (the driver rounded or ignored it).
    Adjusted,
    /// Part of a change set that failed; restored to its value before.
    Restored,
    /// The request that failed: the kernel still holds the value before.
    NotApplied,
    /// Part of a change set that failed, and restoring it failed too.
    RestoreFailed,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SettingResult {
    /// As the user names it: `mtu`, `ring rx`, `feature rx-gro`, `link speed`.
    pub setting: String,
    pub before: Value,
    pub requested: Value,
    pub after: Option<Value>,
    pub status: Status,
}

fn onoff(b: bool) -> Value {
    json!(if b { "on" } else { "off" })
}

fn opt<T: Into<Value>>(v: Option<T>) -> Value {
    v.map(Into::into).unwrap_or(Value::Null)
}

/// Every requested setting with its requested value, in display order.
pub fn flatten(cs: &ChangeSet) -> Vec<(String, Value)> {
    let mut v: Vec<(String, Value)> = Vec::new();
    let mut push = |k: &str, val: Value| v.push((k.to_string(), val));
    if let Some(n) = cs.mtu {
        push("mtu", json!(n));
    }
    if let Some(n) = cs.txqueuelen {
        push("txqueuelen", json!(n));
    }
    if let Some(r) = &cs.rings {
        for (k, x) in [
            ("ring rx", r.rx),
            ("ring tx", r.tx),
            ("ring rx-mini", r.rx_mini),
            ("ring rx-jumbo", r.rx_jumbo),
        ] {
            if let Some(n) = x {
                push(k, json!(n));
            }
        }
    }
    if let Some(p) = &cs.pause {
        for (k, x) in [
            ("pause autoneg", p.autoneg),
            ("pause rx", p.rx),
            ("pause tx", p.tx),
        ] {
            if let Some(b) = x {
                push(k, onoff(b));
            }
        }
    }
    for (name, on) in &cs.features {
        push(&format!("feature {name}"), onoff(*on));
    }
    if let Some(c) = &cs.channels {
        for (k, x) in [
            ("channels rx", c.rx),
            ("channels tx", c.tx),
            ("channels other", c.other),
            ("channels combined", c.combined),
        ] {
            if let Some(n) = x {
                push(k, json!(n));
            }
        }
    }
    if let Some(c) = &cs.coalesce {
        for (k, x) in [
            ("coalesce rx-usecs", c.rx_usecs),
            ("coalesce tx-usecs", c.tx_usecs),
            ("coalesce rx-frames", c.rx_frames),
            ("coalesce tx-frames", c.tx_frames),
        ] {
            if let Some(n) = x {
                push(k, json!(n));
            }
        }
        for (k, x) in [
            ("coalesce adaptive-rx", c.adaptive_rx),
            ("coalesce adaptive-tx", c.adaptive_tx),
        ] {
            if let Some(b) = x {
                push(k, onoff(b));
            }
        }
    }
    if let Some(l) = &cs.link {
        if let Some(n) = l.speed_mbps {
            push("link speed", json!(n));
        }
        if let Some(d) = l.duplex {
            push("link duplex", json!(d.to_string()));
        }
        if let Some(b) = l.autoneg {
            push("link autoneg", onoff(b));
        }
        if let Some(m) = &l.advertise {
            let mut m = m.clone();
            m.sort();
            push("link advertise", json!(m));
        }
    }
    v
}

/// The value `iface` holds for a setting named as in [`flatten`].
pub fn current(iface: &Interface, setting: &str) -> Value {
    let (group, key) = setting.split_once(' ').unwrap_or((setting, ""));
    match group {
        "mtu" => json!(iface.mtu),
        "txqueuelen" => json!(iface.txqueuelen),
        "ring" => iface.rings.as_ref().map_or(Value::Null, |r| {
            opt(match key {
                "rx" => r.rx,
                "tx" => r.tx,
                "rx-mini" => r.rx_mini,
                _ => r.rx_jumbo,
            })
        }),
        "pause" => iface.pause.as_ref().map_or(Value::Null, |p| {
            onoff(match key {
                "autoneg" => p.autoneg,
                "rx" => p.rx,
                _ => p.tx,
            })
        }),
        "feature" => iface
            .features
            .as_ref()
            .and_then(|f| f.get(key))
            .map_or(Value::Null, |f| onoff(f.active)),
        "channels" => iface.channels.as_ref().map_or(Value::Null, |c| {
            opt(match key {
                "rx" => c.rx,
                "tx" => c.tx,
                "other" => c.other,
                _ => c.combined,
            })
        }),
        "coalesce" => iface.coalesce.as_ref().map_or(Value::Null, |c| match key {
            "rx-usecs" => opt(c.rx_usecs),
            "tx-usecs" => opt(c.tx_usecs),
            "rx-frames" => opt(c.rx_frames),
            "tx-frames" => opt(c.tx_frames),
            "adaptive-rx" => c.adaptive_rx.map_or(Value::Null, onoff),
            _ => c.adaptive_tx.map_or(Value::Null, onoff),
        }),
        "link" => iface.link.as_ref().map_or(Value::Null, |l| match key {
            "speed" => opt(l.speed_mbps),
            "duplex" => l.duplex.map_or(Value::Null, |d| json!(d.to_string())),
            "autoneg" => onoff(l.autoneg),
            _ => {
                let mut m = l.advertised_modes.clone();
                m.sort();
                json!(m)
            }
        }),
        _ => Value::Null,
    }
}

/// Results for a plan, before anything is applied: Planned or Unchanged.
pub fn plan(iface: &Interface, cs: &ChangeSet) -> Vec<SettingResult> {
    flatten(cs)
        .into_iter()
        .map(|(setting, requested)| {
            let before = current(iface, &setting);
            let status = if before == requested {
                Status::Unchanged
            } else {
                Status::Planned
            };
            SettingResult {
                setting,
                before,
                requested,
                after: None,
                status,
            }
        })
        .collect()
}

/// Fill in `after` from a re-read of the interface and settle each status.
/// `failed_group` is the setting group (`link`, `ring`...) whose request failed.
pub fn settle(
    results: &mut [SettingResult],
    after: &Interface,
    failed_group: Option<&str>,
    restore_ok: bool,
) {
    let failed = failed_group.is_some();
    for r in results.iter_mut() {
        let now = current(after, &r.setting);
        let in_failed = failed_group.is_some_and(|g| r.setting.split(' ').next() == Some(g));
        r.status = match (failed, r.status) {
            (_, Status::Unchanged) => Status::Unchanged,
            (true, _) if in_failed && now == r.before => Status::NotApplied,
            (false, _) if now == r.requested => Status::Changed,
            (false, _) => Status::Adjusted,
            (true, _) if restore_ok && now == r.before => Status::Restored,
            (true, _) => Status::RestoreFailed,
        };
        r.after = Some(now);
    }
}
