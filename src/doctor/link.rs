//! Link checks: the speed against the NIC's best ([`super::link_speed`]),
//! half duplex, autonegotiation off, carrier flapping, a short transmit queue.

use super::finding::{Finding, Outcome, Severity};
use super::inputs::IfaceSample;
use super::link_speed as speed;
use crate::nic::model::{Duplex, Interface, LinkModes};
use crate::nic::shortfall::renegotiate_command;

pub(crate) fn check(s: &IfaceSample, out: &mut Outcome) {
    let i = s.now();
    let name = i.name.as_str();
    let Some(link) = &i.link else {
        out.skip("link", Some(name), "the driver reports no link settings");
        return;
    };
    speed::check(i, link, out);
    duplex(name, link, out);
    autoneg(name, link, out);
    carrier(s, name, out);
    txqueuelen(i, link, out);
}

/// The link speed as evidence.
fn speed_text(link: &LinkModes) -> String {
    link.speed_mbps
        .map_or("unknown".into(), crate::units::speed)
}

/// Half duplex is critical; full passes.
fn duplex(name: &str, link: &LinkModes, out: &mut Outcome) {
    let n = Some(name);
    if link.duplex == Some(Duplex::Half) {
        out.find(
            Finding::new(
                "link-half-duplex",
                Severity::Critical,
                n,
                format!("{name}: half duplex"),
            )
            .evidence("duplex", "half")
            .evidence("speed", speed_text(link))
            .evidence("autoneg", if link.autoneg { "on" } else { "off" })
            .why("half duplex sends or receives, never both: collisions and late collisions; against a full-duplex switch port it is a duplex mismatch that collapses throughput")
            .fix(if let Some(cmd) = renegotiate_command(name, link) {
                cmd
            } else if link.capabilities.iter().any(|c| c == "Autoneg") {
                format!("hlctl set {name} link autoneg on")
            } else {
                format!(
                    "hlctl set {name} link speed {} duplex full",
                    link.speed_mbps.unwrap_or(1000)
                )
            }),
        );
    } else if link.duplex == Some(Duplex::Full) {
        out.pass("duplex", n, "full");
    }
}

/// Autonegotiation off on a device that can negotiate.
fn autoneg(name: &str, link: &LinkModes, out: &mut Outcome) {
    let n = Some(name);
    if link.capabilities.iter().any(|c| c == "Autoneg") {
        if link.autoneg {
            out.pass("autoneg", n, "on");
        } else {
            out.find(
                Finding::new("link-autoneg-off", Severity::Warning, n, format!("{name}: autonegotiation off"))
                    .evidence("autoneg", "off")
                    .evidence("speed", speed_text(link))
                    .evidence("duplex", link.duplex.map_or("unknown".into(), |d| d.to_string()))
                    .why("with one end forced and the other negotiating, the negotiating end falls back to half duplex: a duplex mismatch")
                    // A forced link may advertise only its forced mode: name them all.
                    .fix(renegotiate_command(name, link).unwrap_or_else(|| format!("hlctl set {name} link autoneg on"))),
            );
        }
    } else {
        out.skip(
            "autoneg",
            n,
            "the device does not negotiate (no Autoneg capability)",
        );
    }
}

/// Carrier changes between the two samples.
fn carrier(s: &IfaceSample, name: &str, out: &mut Outcome) {
    let n = Some(name);
    if let (Some(a), Some(b)) = (
        s.first.carrier_changes,
        s.second.as_ref().and_then(|x| x.carrier_changes),
    ) {
        if b > a {
            out.find(
                Finding::new("link-flapping", Severity::Critical, n, format!("{name}: carrier went down and up {} times in {:.0} s", b - a, s.interval_s))
                    .evidence("carrier changes", format!("{a} → {b}"))
                    .why("a flapping link drops every connection and renegotiates each time")
                    .fix("# check the cable, the transceiver and the switch port; watch with: hlctl show ".to_string() + name),
            );
        } else {
            out.pass(
                "carrier",
                n,
                format!("stable ({b} changes since the device appeared)"),
            );
        }
    }
}

/// A short transmit queue; 0 means noqueue by design (bridges, tunnels).
fn txqueuelen(i: &Interface, link: &LinkModes, out: &mut Outcome) {
    let name = i.name.as_str();
    let n = Some(name);
    if i.txqueuelen > 0 && i.txqueuelen < 1000 {
        out.find(
            Finding::new("txqueuelen-short", Severity::Warning, n, format!("{name}: transmit queue of {} packets", i.txqueuelen))
                .evidence("txqueuelen", i.txqueuelen)
                .evidence("speed", speed_text(link))
                .why("a short queue drops packets of bursts the NIC cannot send at once; TCP reads the drops as congestion and slows down")
                .fix(format!("hlctl set {name} txqueuelen 1000")),
        );
    } else if i.txqueuelen > 0 {
        out.pass("txqueuelen", n, i.txqueuelen.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nic::model::{Interface, LinkModes};

    fn sample(link: LinkModes) -> IfaceSample {
        IfaceSample {
            first: Interface {
                name: "eth0".into(),
                driver: Some("e1000e".into()),
                physical: true,
                txqueuelen: 1000,
                carrier_changes: Some(2),
                link: Some(link),
                ..Default::default()
            },
            second: None,
            interval_s: 1.0,
        }
    }

    fn modes(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn hundred_instead_of_gigabit_is_found() {
        let mut out = Outcome::default();
        check(
            &sample(LinkModes {
                speed_mbps: Some(100),
                duplex: Some(Duplex::Full),
                autoneg: true,
                supported_modes: modes(&["10baseT/Full", "100baseT/Full", "1000baseT/Full"]),
                advertised_modes: modes(&["10baseT/Full", "100baseT/Full", "1000baseT/Full"]),
                partner_modes: modes(&["100baseT/Full", "1000baseT/Full"]),
                capabilities: modes(&["Autoneg", "TP"]),
                detected: Some(true),
                ..Default::default()
            }),
            &mut out,
        );
        let ids: Vec<&str> = out.findings.iter().map(|f| f.id.as_str()).collect();
        assert_eq!(ids, ["link-below-common-mode"]);
        assert!(out.findings[0].title.contains("1 Gbit/s"));
        assert!(out.findings[0].fix[1].contains("cable"));
    }

    #[test]
    fn a_virtual_link_at_full_duplex_is_clean() {
        let mut out = Outcome::default();
        let mut s = sample(LinkModes {
            speed_mbps: Some(10000),
            duplex: Some(Duplex::Full),
            detected: Some(true),
            ..Default::default()
        });
        s.first.kind = Some("veth".into());
        s.first.physical = false;
        check(&s, &mut out);
        assert!(out.findings.is_empty(), "{:?}", out.findings);
        assert!(
            out.not_checked
                .iter()
                .any(|c| c.check == "link-speed" && c.detail.contains("nominal"))
        );
    }

    #[test]
    fn half_duplex_forced_and_short_queue() {
        let mut s = sample(LinkModes {
            speed_mbps: Some(1000),
            duplex: Some(Duplex::Half),
            autoneg: false,
            capabilities: modes(&["Autoneg"]),
            detected: Some(true),
            ..Default::default()
        });
        s.first.txqueuelen = 100;
        let mut out = Outcome::default();
        check(&s, &mut out);
        let mut ids: Vec<&str> = out.findings.iter().map(|f| f.id.as_str()).collect();
        ids.sort();
        assert_eq!(
            ids,
            ["link-autoneg-off", "link-half-duplex", "txqueuelen-short"]
        );
    }
}
