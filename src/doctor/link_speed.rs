//! The link's speed against the best this NIC supports (or, when the driver
//! reports the partner's modes, the best both ends advertise). Most drivers
//! report no partner modes while autonegotiation is off, many never do: the
//! NIC's own supported modes are enough to see a gigabit NIC at 100 Mb/s.
//! Only a physical speed is judged ([`crate::nic::speed`]).

use super::finding::{Finding, Outcome, Severity};
use super::inputs::Inputs;
use crate::nic::model::{Interface, LinkModes};
use crate::nic::shortfall::{Shortfall, best_mode, renegotiate_command, shortfall};
use crate::nic::speed::link_speed;
use crate::units::speed as mbit;

pub(crate) const BELOW_SUPPORTED: &str = "link-below-supported";
pub(crate) const BELOW_COMMON: &str = "link-below-common-mode";

pub(crate) fn check(i: &Interface, link: &LinkModes, out: &mut Outcome) {
    let n = Some(i.name.as_str());
    match link.detected {
        Some(true) => {}
        Some(false) => return out.skip("link-speed", n, "no carrier (link down)"),
        None => return out.skip("link-speed", n, "the driver does not report the link state"),
    }
    let Some(ls) = link_speed(i) else {
        return out.skip("link-speed", n, "speed unknown");
    };
    if !ls.is_physical() {
        return out.skip(
            "link-speed",
            n,
            format!("{} is {}: {}", mbit(ls.mbps), ls.kind, ls.basis),
        );
    }
    if link.supported_modes.is_empty() {
        return out.skip("link-speed", n, "the driver lists no supported link modes");
    }
    match shortfall(i) {
        Some(s) if s.slow() => out.find(finding(i, link, &s)),
        _ => out.pass(
            "link-speed",
            n,
            format!(
                "{} = the best mode {}",
                mbit(ls.mbps),
                if link.partner_modes.is_empty() {
                    "this NIC supports"
                } else {
                    "both ends advertise"
                }
            ),
        ),
    }
}

fn finding(i: &Interface, link: &LinkModes, s: &Shortfall) -> Finding {
    let name = i.name.as_str();
    let speed = s.speed_mbps;
    let best = s.target_mbps();
    let duplex = link.duplex.map_or("unknown".into(), |d| d.to_string());
    let (id, severity) = if s.both_ends_better() {
        (BELOW_COMMON, Severity::Critical)
    } else {
        (BELOW_SUPPORTED, Severity::Warning)
    };
    let title = format!("{name}: link at {}, {}", mbit(speed), s.best_phrase());
    let mut causes = Vec::new();
    if !link.autoneg {
        causes.push(format!(
            "a forced setting: autonegotiation is off and the link is forced to {} {duplex} duplex (ethtool -s {name} speed {speed} duplex {duplex} autoneg off, a .link/.network file or a driver option)",
            mbit(speed)
        ));
    }
    let best_mode_name = best_mode(link.supported_modes.iter()).map(|(_, m)| m);
    if link.autoneg
        && let Some(m) = &best_mode_name
        && !link.advertised_modes.contains(m)
    {
        causes.push(format!("this NIC does not advertise {m}"));
    }
    causes.push(
        "a damaged cable (one broken pair of the four forces 100 Mbit/s) or a Cat5 cable".into(),
    );
    causes.push(format!(
        "the switch port (a {} port, or one forced to {speed})",
        mbit(speed)
    ));
    let mut f = Finding::new(id, severity, Some(name), title)
        .evidence("speed", mbit(speed))
        .evidence("duplex", duplex)
        .evidence("autoneg", if link.autoneg { "on" } else { "off" })
        .evidence("this NIC supports", link.supported_modes.join(" "))
        .evidence(
            "advertised by this NIC",
            if link.advertised_modes.is_empty() {
                "(none)".to_string()
            } else {
                link.advertised_modes.join(" ")
            },
        )
        .evidence(
            "link partner advertises",
            if link.partner_modes.is_empty() {
                "(not reported by the driver)".to_string()
            } else {
                link.partner_modes.join(" ")
            },
        );
    f.why = format!(
        "every transfer over {name} is capped at {} instead of {}; likely causes: {}",
        mbit(speed),
        mbit(best),
        causes.join("; ")
    );
    if let Some(cmd) = renegotiate_command(name, link) {
        f = f.fix(cmd);
    }
    f.fix(format!(
        "# if it comes back at {}: replace the cable, try another switch port, check the port's speed setting on the switch",
        mbit(speed)
    ))
}

/// With `--peer`: add what was measured to the slow-link finding of the
/// interface towards the peer ("measured 94 Mbit/s = the 100 Mb/s link is
/// the limit", or why the figure is not the limit).
pub(crate) fn tie_to_measurement(inp: &Inputs, out: &mut Outcome) {
    let Some(iface) = inp.peer.as_ref().and_then(|p| p.interface.as_deref()) else {
        return;
    };
    let notes = super::path::limits(inp);
    for f in out.findings.iter_mut().filter(|f| {
        (f.id == BELOW_SUPPORTED || f.id == BELOW_COMMON) && f.interface.as_deref() == Some(iface)
    }) {
        for note in &notes {
            f.evidence.push(super::finding::Evidence {
                name: format!("measured {}", note.direction),
                value: note.text.clone(),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nic::model::Duplex;

    fn e1000e(speed: u32, autoneg: bool, partner: &[&str]) -> Interface {
        crate::nic::shortfall::e1000e_fixture(speed, Duplex::Full, autoneg, partner)
    }

    fn run(i: &Interface) -> Outcome {
        let mut out = Outcome::default();
        check(i, i.link.as_ref().unwrap(), &mut out);
        out
    }

    #[test]
    fn forced_hundred_without_partner_modes_is_a_warning_naming_the_setting() {
        let out = run(&e1000e(100, false, &[]));
        let f = &out.findings[0];
        assert_eq!(
            (f.id.as_str(), f.severity),
            (BELOW_SUPPORTED, Severity::Warning)
        );
        assert_eq!(
            f.title,
            "eth0: link at 100 Mbit/s, this NIC supports 1 Gbit/s"
        );
        assert!(
            f.why.contains("forced to 100 Mbit/s full duplex"),
            "{}",
            f.why
        );
        assert_eq!(
            f.fix[0],
            "hlctl set eth0 link autoneg on advertise 10baseT/Half 10baseT/Full 100baseT/Half 100baseT/Full 1000baseT/Full"
        );
        assert!(f.fix[1].contains("cable"));
    }

    #[test]
    fn both_ends_better_is_critical_and_the_best_common_mode_passes() {
        let out = run(&e1000e(100, true, &["100baseT/Full", "1000baseT/Full"]));
        assert_eq!(out.findings[0].id, BELOW_COMMON);
        assert_eq!(out.findings[0].severity, Severity::Critical);
        let out = run(&e1000e(100, true, &["100baseT/Full"]));
        assert!(out.findings.is_empty());
        assert!(out.passed[0].detail.contains("both ends advertise"));
    }

    #[test]
    fn a_nominal_speed_is_not_judged() {
        let mut i = e1000e(100, false, &[]);
        i.driver = Some("virtio_net".into());
        let out = run(&i);
        assert!(out.findings.is_empty());
        assert!(
            out.not_checked[0].detail.contains("nominal"),
            "{:?}",
            out.not_checked
        );
    }
}
