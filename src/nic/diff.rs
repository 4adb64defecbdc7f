//! One line per requested setting: before → requested → after, why the
//! driver held another value when that is known, and the counts per status.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::nic::model::{ChangeSet, Interface};
use crate::nic::registry::{self, FEATURE};

/// What happened to one setting.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Status {
    /// Dry run: would change.
    Planned,
    /// Already held the requested value; not touched.
    Unchanged,
    /// Changed and reads back as requested.
    Changed,
    /// The kernel holds a different value than requested: the driver rounded
    /// it (`after` differs from `before` too) or kept the value before.
    Adjusted,
    /// Part of a change set that failed; restored to its value before.
    Restored,
    /// The request that failed: the kernel still holds the value before.
    NotApplied,
    /// Part of a change set that failed, and restoring it failed too.
    RestoreFailed,
    /// Not requested: the kernel changed it on its own after a requested
    /// change of its group (`tx-tcp-segmentation` follows `sg off`).
    Followed,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct SettingResult {
    /// As the user names it: `mtu`, `ring rx`, `feature rx-gro`, `link speed`.
    pub(crate) setting: String,
    pub(crate) before: Value,
    pub(crate) requested: Value,
    pub(crate) after: Option<Value>,
    pub(crate) status: Status,
    /// Why the driver holds another value than requested, when that is known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) reason: Option<String>,
}

impl SettingResult {
    /// True when the kernel now holds another value than before (a dry run
    /// changes nothing).
    pub(crate) fn changed(&self) -> bool {
        self.after.as_ref().is_some_and(|a| *a != self.before)
    }
}

/// The counts of a change set: what changed, and how many settings ended in each status.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Summary {
    /// Settings whose value the kernel now holds differently from before:
    /// `changed` rows and the `adjusted` rows the driver rounded (not those it
    /// kept). A dry run: the settings that would change.
    pub(crate) changed: usize,
    /// Every status that occurs, with its number of settings.
    pub(crate) statuses: BTreeMap<Status, usize>,
}

/// Count `results` (of a dry run when `dry_run`).
pub(crate) fn summarize(results: &[SettingResult], dry_run: bool) -> Summary {
    let mut statuses = BTreeMap::new();
    for r in results {
        *statuses.entry(r.status).or_insert(0) += 1;
    }
    let changed = results
        .iter()
        .filter(|r| {
            if dry_run {
                r.status == Status::Planned
            } else {
                r.changed()
            }
        })
        .count();
    Summary { changed, statuses }
}

fn onoff(b: bool) -> Value {
    json!(if b { "on" } else { "off" })
}

/// Every requested setting with its requested value, in display order.
pub(crate) fn flatten(cs: &ChangeSet) -> Vec<(String, Value)> {
    let mut v: Vec<(String, Value)> = Vec::new();
    for g in registry::GROUPS {
        if g.word == FEATURE {
            for (name, on) in &cs.features {
                v.push((format!("{FEATURE} {name}"), onoff(*on)));
            }
        }
        for s in registry::in_group(g.word) {
            if let Some(val) = (s.get)(cs) {
                v.push((s.name(), val));
            }
        }
    }
    v
}

/// The value `iface` holds for a setting named as in [`flatten`].
pub(crate) fn current(iface: &Interface, setting: &str) -> Value {
    if let Some(name) = setting
        .strip_prefix(FEATURE)
        .and_then(|r| r.strip_prefix(' '))
    {
        return iface
            .features
            .as_ref()
            .and_then(|f| f.get(name))
            .map_or(Value::Null, |f| onoff(f.active));
    }
    registry::by_name(setting).map_or(Value::Null, |s| (s.read)(iface))
}

/// Results for a plan, before anything is applied: Planned or Unchanged.
pub(crate) fn plan(iface: &Interface, cs: &ChangeSet) -> Vec<SettingResult> {
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
                reason: None,
            }
        })
        .collect()
}

/// Fill in `after` from a re-read of the interface and settle each status.
/// `failed_group` is the setting group (`link`, `ring`...) whose request failed.
pub(crate) fn settle(
    results: &mut [SettingResult],
    before: &Interface,
    after: &Interface,
    failed_group: Option<&str>,
    restore_ok: bool,
) {
    let failed = failed_group.is_some();
    for r in results.iter_mut() {
        let now = current(after, &r.setting);
        let in_failed = failed_group.is_some_and(|g| r.setting.split(' ').next() == Some(g));
        let renegotiating = failed && renegotiating(&r.setting, &now, before, after);
        let held = now == r.before || renegotiating;
        r.status = match (failed, r.status) {
            (_, Status::Unchanged) => Status::Unchanged,
            (true, _) if in_failed && held => Status::NotApplied,
            (false, _) if now == r.requested => Status::Changed,
            (false, _) => Status::Adjusted,
            (true, _) if restore_ok && held => Status::Restored,
            (true, _) => Status::RestoreFailed,
        };
        if r.status == Status::Adjusted {
            r.reason = adjusted_reason(&r.setting, after);
        }
        if renegotiating {
            r.reason = Some(RENEGOTIATING.into());
        }
        r.after = Some(now);
    }
}

const RENEGOTIATING: &str =
    "autonegotiation is on again as before and not finished: no speed or duplex yet";

/// A link speed or duplex that reads unknown after a failed change set put
/// autonegotiation back as it was (on, same advertised modes): the
/// negotiation decides it, and it has not finished yet (e1000e takes seconds).
fn renegotiating(setting: &str, now: &Value, before: &Interface, after: &Interface) -> bool {
    let negotiates = |i: &Interface| {
        i.link
            .as_ref()
            .filter(|l| l.autoneg)
            .map(|l| l.advertised_modes.clone())
    };
    matches!(setting, "link speed" | "link duplex")
        && now.is_null()
        && negotiates(before).is_some()
        && negotiates(before) == negotiates(after)
}

/// Rows for what the kernel changed on its own: every setting of a group
/// `results` touched (all offloads when a feature was requested) that was
/// not requested and reads differently in `after` than in `before`.
pub(crate) fn followed(
    results: &[SettingResult],
    before: &Interface,
    after: &Interface,
) -> Vec<SettingResult> {
    let requested: Vec<&str> = results.iter().map(|r| r.setting.as_str()).collect();
    let causes = |group: &str| -> String {
        let c: Vec<String> = results
            .iter()
            .filter(|r| r.changed() && r.setting.split(' ').next() == Some(group))
            .map(|r| format!("{} {}", r.setting, show_value(&r.requested)))
            .collect();
        c.join(", ")
    };
    let mut out = Vec::new();
    for group in touched_groups(results) {
        let cause = causes(group);
        if cause.is_empty() {
            continue;
        }
        for setting in settings_of(group, after) {
            let (was, now) = (current(before, &setting), current(after, &setting));
            if requested.contains(&setting.as_str()) || now.is_null() || was == now {
                continue;
            }
            out.push(SettingResult {
                setting,
                before: was,
                requested: Value::Null,
                after: Some(now),
                status: Status::Followed,
                reason: Some(format!("follows {cause}")),
            });
        }
    }
    out
}

/// The groups (`feature`, `ring`, `link`...) of `results`, once each.
fn touched_groups(results: &[SettingResult]) -> Vec<&str> {
    let mut g: Vec<&str> = results
        .iter()
        .filter_map(|r| r.setting.split(' ').next())
        .collect();
    g.sort_unstable();
    g.dedup();
    g
}

/// Every setting of `group` that `iface` reports, named as in [`flatten`].
fn settings_of(group: &str, iface: &Interface) -> Vec<String> {
    if group == FEATURE {
        return iface.features.as_ref().map_or(Vec::new(), |f| {
            f.keys().map(|n| format!("{FEATURE} {n}")).collect()
        });
    }
    registry::in_group(group).map(|s| s.name()).collect()
}

fn show_value(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Why a driver holds another value than requested, when the interface tells.
fn adjusted_reason(setting: &str, after: &Interface) -> Option<String> {
    let s = registry::by_name(setting)?;
    let pause_held = s.group == "pause" && s.key != "autoneg";
    (pause_held && after.pause.is_some_and(|p| p.autoneg))
        .then(|| "pause autoneg is on: the negotiation decides; add `autoneg off` to force".into())
}

/// The settings of `cs` that `iface` holds differently now (a value the
/// driver does not report is left out): (setting, wanted, now).
pub(crate) fn drifted(iface: &Interface, cs: &ChangeSet) -> Vec<(String, Value, Value)> {
    flatten(cs)
        .into_iter()
        .filter_map(|(setting, wanted)| {
            let now = current(iface, &setting);
            (!now.is_null() && now != wanted).then_some((setting, wanted, now))
        })
        .collect()
}

/// The part of `cs` that sets the named settings (as [`flatten`] names them).
pub(crate) fn only(cs: &ChangeSet, names: &[String]) -> ChangeSet {
    let mut out = ChangeSet::default();
    for (setting, v) in flatten(cs).into_iter().filter(|(n, _)| names.contains(n)) {
        match setting
            .strip_prefix(FEATURE)
            .and_then(|r| r.strip_prefix(' '))
        {
            Some(f) => {
                out.features.insert(f.to_string(), v == "on");
            }
            None => {
                if let Some(s) = registry::by_name(&setting) {
                    (s.put)(&mut out, &v);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nic::model::{Duplex, LinkModes, LinkSet, Pause, PauseSet, Rings, RingsSet};

    fn e1000e_like(pause: Pause, ring_rx: u32, mtu: u32) -> Interface {
        Interface {
            name: "eth0".into(),
            mtu,
            pause: Some(pause),
            rings: Some(Rings {
                rx: Some(ring_rx),
                rx_max: Some(4096),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    const NEGOTIATED: Pause = Pause {
        autoneg: true,
        rx: true,
        tx: true,
    };

    fn pause_off() -> ChangeSet {
        ChangeSet {
            pause: Some(PauseSet {
                rx: Some(false),
                tx: Some(false),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    /// Plan `cs` on `before`, then settle it against `after` (nothing failed).
    fn applied(before: &Interface, cs: &ChangeSet, after: &Interface) -> Vec<SettingResult> {
        let mut r = plan(before, cs);
        settle(&mut r, before, after, None, true);
        r
    }

    #[test]
    fn pause_kept_by_autoneg_is_adjusted_with_the_reason_and_changes_nothing() {
        let iface = e1000e_like(NEGOTIATED, 256, 1500);
        let r = applied(&iface, &pause_off(), &iface);
        assert_eq!(r.len(), 2);
        for row in &r {
            assert_eq!(row.status, Status::Adjusted, "{row:?}");
            assert!(!row.changed(), "{row:?}");
            let why = row.reason.as_deref().unwrap_or_default();
            assert!(
                why.contains("pause autoneg is on") && why.contains("`autoneg off`"),
                "{row:?}"
            );
        }
        let s = summarize(&r, false);
        assert_eq!(s.changed, 0);
        assert_eq!(s.statuses, BTreeMap::from([(Status::Adjusted, 2)]));
    }

    #[test]
    fn no_reason_is_invented_when_the_interface_does_not_tell() {
        // Pause autoneg off, and the driver still keeps rx on: cause unknown.
        let before = e1000e_like(
            Pause {
                autoneg: false,
                ..NEGOTIATED
            },
            256,
            1500,
        );
        let r = applied(&before, &pause_off(), &before);
        assert!(
            r.iter()
                .all(|x| x.status == Status::Adjusted && x.reason.is_none())
        );
        // Pause applied as asked: changed, no reason.
        let after = e1000e_like(Pause::default(), 256, 1500);
        let r = applied(&before, &pause_off(), &after);
        assert!(
            r.iter()
                .all(|x| x.status == Status::Changed && x.reason.is_none())
        );
        assert_eq!(summarize(&r, false).changed, 2);
    }

    #[test]
    fn a_rounded_value_counts_as_changed_an_unchanged_one_does_not() {
        let before = e1000e_like(NEGOTIATED, 256, 1500);
        let cs = ChangeSet {
            mtu: Some(9000),
            rings: Some(RingsSet {
                rx: Some(4000),
                ..Default::default()
            }),
            pause: Some(PauseSet {
                autoneg: Some(true),
                ..Default::default()
            }),
            ..Default::default()
        };
        let after = e1000e_like(NEGOTIATED, 4096, 9000);
        let r = applied(&before, &cs, &after);
        let status = |k: &str| r.iter().find(|x| x.setting == k).unwrap().status;
        assert_eq!(status("mtu"), Status::Changed);
        assert_eq!(status("ring rx"), Status::Adjusted);
        assert_eq!(status("pause autoneg"), Status::Unchanged);
        let s = summarize(&r, false);
        assert_eq!(s.changed, 2, "{r:?}");
        assert_eq!(
            s.statuses,
            BTreeMap::from([
                (Status::Unchanged, 1),
                (Status::Changed, 1),
                (Status::Adjusted, 1)
            ])
        );
        // The same plan as a dry run: what would change.
        let planned = plan(&before, &cs);
        let s = summarize(&planned, true);
        assert_eq!(s.changed, 2);
        assert_eq!(
            s.statuses,
            BTreeMap::from([(Status::Planned, 2), (Status::Unchanged, 1)])
        );
    }

    #[test]
    fn restored_settings_are_not_counted_as_changed() {
        let before = e1000e_like(NEGOTIATED, 256, 1500);
        let cs = ChangeSet {
            mtu: Some(9000),
            rings: Some(RingsSet {
                rx: Some(4096),
                ..Default::default()
            }),
            ..Default::default()
        };
        let mut r = plan(&before, &cs);
        settle(&mut r, &before, &before, Some("ring"), true);
        let s = summarize(&r, false);
        assert_eq!(s.changed, 0);
        assert_eq!(
            s.statuses,
            BTreeMap::from([(Status::Restored, 1), (Status::NotApplied, 1)])
        );
    }

    #[test]
    fn drifted_names_what_differs_and_only_takes_it_back_out() {
        let iface = e1000e_like(NEGOTIATED, 256, 1500);
        let mut cs = ChangeSet {
            mtu: Some(9000),
            rings: Some(RingsSet {
                rx: Some(256),
                tx: Some(4096),
                ..Default::default()
            }),
            ..Default::default()
        };
        cs.features.insert("rx-gro".into(), true);
        let d = drifted(&iface, &cs);
        let names: Vec<&str> = d.iter().map(|(n, _, _)| n.as_str()).collect();
        assert!(names.contains(&"mtu"), "{d:?}");
        assert!(
            !names.contains(&"ring rx"),
            "rx holds what was persisted: {d:?}"
        );
        let back = only(&cs, &["mtu".to_string(), "feature rx-gro".to_string()]);
        assert_eq!(back.mtu, Some(9000));
        assert_eq!(back.rings, None);
        assert_eq!(back.features.get("rx-gro"), Some(&true));
    }
    /// e1000e with autonegotiation on: 1000/full, or renegotiating (unknown).
    fn negotiating(speed: Option<u32>, autoneg: bool) -> Interface {
        Interface {
            link: Some(LinkModes {
                speed_mbps: speed,
                duplex: speed.map(|_| Duplex::Full),
                autoneg,
                advertised_modes: vec!["1000baseT/Full".into()],
                ..Default::default()
            }),
            ..e1000e_like(NEGOTIATED, 256, 1500)
        }
    }

    #[test]
    fn a_refused_link_renegotiating_as_before_is_not_a_failed_restore() {
        let before = negotiating(Some(1000), true);
        let cs = ChangeSet {
            mtu: Some(9000),
            link: Some(LinkSet {
                speed_mbps: Some(1000),
                duplex: Some(Duplex::Half),
                autoneg: Some(false),
                advertise: None,
            }),
            ..Default::default()
        };
        let settled = |after: &Interface| {
            let mut r = plan(&before, &cs);
            settle(&mut r, &before, after, Some("link"), true);
            r.iter()
                .map(|r| (r.setting.clone(), r.status))
                .collect::<BTreeMap<_, _>>()
        };
        let r = settled(&negotiating(None, true));
        assert_eq!(r["link duplex"], Status::NotApplied, "{r:?}");
        assert_eq!(r["link autoneg"], Status::NotApplied, "{r:?}");
        assert_eq!(r["mtu"], Status::Restored, "{r:?}");
        // Left forced (autoneg off) and without a speed: not what it was.
        let r = settled(&negotiating(None, false));
        assert_eq!(r["link duplex"], Status::RestoreFailed, "{r:?}");
    }
}
