//! A persisted or tuned setting that is not in effect, where a network
//! manager's configuration explains why (it sets another value, and re-sets
//! it at times hlctl does not see: `ifreload -a`, a re-activation, a udev
//! "add", `netplan apply`).

use super::finding::{Finding, Outcome, Severity};
use super::inputs::{IfaceSample, Inputs};
use crate::nic::diff;
use crate::nic::managers::{Manager, Owner};
use crate::nic::registry::value_text;

pub(crate) fn check(inp: &Inputs, out: &mut Outcome) {
    for s in &inp.interfaces {
        let name = s.name();
        let Some(cs) = inp.persisted.get(name) else {
            continue;
        };
        let drift = diff::drifted(s.now(), cs);
        let mut explained = 0;
        for (setting, want, now) in &drift {
            if let Some(o) = s.now().owners.iter().find(|o| o.owns.contains(setting)) {
                out.find(finding(s, o, setting, &value_text(want), &value_text(now)));
                explained += 1;
            }
        }
        if explained == 0 {
            out.pass(
                "persisted-settings",
                Some(name),
                if drift.is_empty() {
                    "every persisted setting is in effect".to_string()
                } else {
                    format!(
                        "{} persisted setting(s) differ, none set by a network manager",
                        drift.len()
                    )
                },
            );
        }
    }
}

fn finding(s: &IfaceSample, o: &Owner, setting: &str, want: &str, now: &str) -> Finding {
    let name = s.name();
    let manager = o
        .manager
        .map_or("a network manager".to_string(), |m| m.to_string());
    let file = o.file.clone().unwrap_or_else(|| "its configuration".into());
    let mut f = Finding::new(
        "persisted-setting-overridden",
        Severity::Warning,
        Some(name),
        format!("{name}: persisted {setting} {want} is not in effect ({now}); {manager} sets it"),
    )
    .evidence(&format!("persisted {setting}"), want)
    .evidence(&format!("live {setting}"), now)
    .evidence("owner", o.describe())
    .why(&format!(
        "{manager} applies its own value from {file} whenever it (re)configures the link, so a value set only by hlctl is lost at a moment that has nothing to do with hlctl"
    ))
    .fix(format!("hlctl set {name} {setting} {want} --persist"));
    if let Some(y) = &o.netplan {
        f = f.fix(format!("# or set it in {y} (netplan renders {file})"));
    }
    if matches!(o.manager, Some(Manager::NetworkManager)) {
        f = f.fix(format!(
            "# or: nmcli connection modify \"{}\" … and re-activate it",
            o.name.clone().unwrap_or_default()
        ));
    }
    f
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nic::model::{ChangeSet, Interface};

    fn sample(mtu: u32, owners: Vec<Owner>) -> IfaceSample {
        IfaceSample {
            first: Interface {
                name: "vmbr0".into(),
                mtu,
                owners,
                ..Default::default()
            },
            second: None,
            interval_s: 1.0,
        }
    }

    fn ifupdown2() -> Owner {
        Owner {
            manager: Some(Manager::Ifupdown2),
            name: Some("iface vmbr0".into()),
            file: Some("/etc/network/interfaces".into()),
            netplan: None,
            owns: ["mtu".to_string()].into(),
        }
    }

    fn inputs(s: IfaceSample) -> Inputs {
        let mut inp = Inputs {
            interfaces: vec![s],
            ..Default::default()
        };
        inp.persisted.insert(
            "vmbr0".into(),
            ChangeSet {
                mtu: Some(9000),
                ..Default::default()
            },
        );
        inp
    }

    #[test]
    fn a_reset_mtu_that_ifupdown2_owns_is_a_finding_with_the_fix() {
        let mut out = Outcome::default();
        check(&inputs(sample(1500, vec![ifupdown2()])), &mut out);
        assert_eq!(out.findings.len(), 1);
        let f = &out.findings[0];
        assert_eq!(f.id, "persisted-setting-overridden");
        assert!(
            f.title
                .contains("persisted mtu 9000 is not in effect (1500); ifupdown2 sets it"),
            "{}",
            f.title
        );
        assert_eq!(f.fix[0], "hlctl set vmbr0 mtu 9000 --persist");
        assert!(f.why.contains("/etc/network/interfaces"));
    }

    #[test]
    fn in_effect_or_unexplained_is_no_finding() {
        let mut out = Outcome::default();
        check(&inputs(sample(9000, vec![ifupdown2()])), &mut out);
        check(&inputs(sample(1500, Vec::new())), &mut out);
        assert!(out.findings.is_empty());
        assert_eq!(out.passed.len(), 2);
    }
}
