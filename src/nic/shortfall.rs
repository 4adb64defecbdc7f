//! Is a link running below what it can do? The link's speed against the best
//! mode this NIC supports (or, when the driver reports the partner's modes,
//! the best mode both ends advertise), and half duplex. Doctor turns a
//! shortfall into a finding, tune into its first candidate (renegotiate).
//! Only physical speeds are judged ([`super::speed`]).

use serde::{Deserialize, Serialize};

use super::model::{Duplex, Interface, LinkModes, LinkSet};
use super::speed::link_speed;
use super::validate::mode_speed_duplex;

/// A link below its best, with what it could be.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Shortfall {
    pub(crate) speed_mbps: u32,
    pub(crate) duplex: Option<Duplex>,
    /// The fastest mode this NIC supports, Mb/s.
    pub(crate) best_supported_mbps: Option<u32>,
    /// The fastest mode both ends advertise (only when the partner's modes
    /// are known), Mb/s, and its name.
    pub(crate) best_common: Option<(u32, String)>,
}

impl Shortfall {
    /// The speed the link should reach: the best common mode when the
    /// partner is known, else the best this NIC supports.
    pub(crate) fn target_mbps(&self) -> u32 {
        self.best_common
            .as_ref()
            .map(|(s, _)| *s)
            .or(self.best_supported_mbps)
            .unwrap_or(self.speed_mbps)
    }

    /// Running below the target speed.
    pub(crate) fn slow(&self) -> bool {
        self.target_mbps() > self.speed_mbps
    }

    /// `this NIC supports 1 Gbit/s` or `both ends can do 1 Gbit/s`.
    pub(crate) fn best_phrase(&self) -> String {
        format!(
            "{} {}",
            if self.best_common.is_some() {
                "both ends can do"
            } else {
                "this NIC supports"
            },
            crate::units::speed(self.target_mbps())
        )
    }

    pub(crate) fn half_duplex(&self) -> bool {
        self.duplex == Some(Duplex::Half)
    }

    /// Both ends are known to do better (the partner's modes say so).
    pub(crate) fn both_ends_better(&self) -> bool {
        self.best_common
            .as_ref()
            .is_some_and(|(s, _)| *s > self.speed_mbps)
    }
}

/// The fastest mode of `modes` (full duplex preferred at equal speed).
pub(crate) fn best_mode<'a>(modes: impl Iterator<Item = &'a String>) -> Option<(u32, String)> {
    modes
        .filter_map(|m| mode_speed_duplex(m).map(|(s, d)| (s, d == "Full", m.clone())))
        .max_by_key(|(s, full, _)| (*s, *full))
        .map(|(s, _, m)| (s, m))
}

/// The link of `i` when it is up with a physical speed below its best or at
/// half duplex; `None` when it is as good as it gets, down, or its speed is
/// nominal.
pub(crate) fn shortfall(i: &Interface) -> Option<Shortfall> {
    let link = i.link.as_ref()?;
    if link.detected != Some(true) {
        return None;
    }
    let speed = link_speed(i).filter(|s| s.is_physical())?;
    let best_common = if link.partner_modes.is_empty() {
        None
    } else {
        best_mode(
            link.supported_modes
                .iter()
                .filter(|m| link.partner_modes.contains(m)),
        )
    };
    let s = Shortfall {
        speed_mbps: speed.mbps,
        duplex: link.duplex,
        best_supported_mbps: best_mode(link.supported_modes.iter()).map(|(s, _)| s),
        best_common,
    };
    (s.slow() || s.half_duplex()).then_some(s)
}

/// Renegotiate: autonegotiation on, advertising every supported mode. `None`
/// when the device cannot negotiate or lists no modes.
pub(crate) fn renegotiate(link: &LinkModes) -> Option<LinkSet> {
    let negotiates = link.capabilities.iter().any(|c| c == "Autoneg");
    (negotiates && !link.supported_modes.is_empty()).then(|| LinkSet {
        autoneg: Some(true),
        advertise: Some(link.supported_modes.clone()),
        ..Default::default()
    })
}

/// `hlctl set IFACE link autoneg on advertise MODE...` for [`renegotiate`].
pub(crate) fn renegotiate_command(iface: &str, link: &LinkModes) -> Option<String> {
    renegotiate(link).map(|l| {
        format!(
            "hlctl set {iface} link autoneg on advertise {}",
            l.advertise.unwrap_or_default().join(" ")
        )
    })
}

/// A forced e1000e as the VM's emulated NIC reports it, for unit tests.
#[cfg(test)]
pub(crate) fn e1000e_fixture(
    speed: u32,
    duplex: Duplex,
    autoneg: bool,
    partner: &[&str],
) -> Interface {
    let modes = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let all = [
        "10baseT/Half",
        "10baseT/Full",
        "100baseT/Half",
        "100baseT/Full",
        "1000baseT/Full",
    ];
    Interface {
        name: "eth0".into(),
        driver: Some("e1000e".into()),
        physical: true,
        link: Some(LinkModes {
            speed_mbps: Some(speed),
            duplex: Some(duplex),
            autoneg,
            supported_modes: modes(&all),
            advertised_modes: if autoneg { modes(&all) } else { Vec::new() },
            partner_modes: modes(partner),
            capabilities: modes(&["Autoneg", "TP"]),
            detected: Some(true),
            ..Default::default()
        }),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e1000e(speed: u32, duplex: Duplex, partner: &[&str]) -> Interface {
        e1000e_fixture(speed, duplex, false, partner)
    }

    #[test]
    fn forced_hundred_falls_short_of_the_nic() {
        let s = shortfall(&e1000e(100, Duplex::Full, &[])).unwrap();
        assert_eq!((s.speed_mbps, s.target_mbps()), (100, 1000));
        assert!(s.slow() && !s.half_duplex() && !s.both_ends_better());
        let l = renegotiate(e1000e(100, Duplex::Full, &[]).link.as_ref().unwrap()).unwrap();
        assert_eq!(l.autoneg, Some(true));
        assert_eq!(l.advertise.unwrap().len(), 5);
    }

    #[test]
    fn the_partner_bounds_the_target() {
        let s = shortfall(&e1000e(
            100,
            Duplex::Full,
            &["10baseT/Full", "100baseT/Full"],
        ));
        assert_eq!(s, None, "100 is the best both ends can do");
        let s = shortfall(&e1000e(100, Duplex::Full, &["1000baseT/Full"])).unwrap();
        assert!(s.both_ends_better());
        // At the top but half duplex.
        let s = shortfall(&e1000e(1000, Duplex::Half, &[])).unwrap();
        assert!(s.half_duplex() && !s.slow());
        assert_eq!(shortfall(&e1000e(1000, Duplex::Full, &[])), None);
    }

    #[test]
    fn nominal_or_down_links_have_no_shortfall() {
        let mut i = e1000e(100, Duplex::Full, &[]);
        i.driver = Some("virtio_net".into());
        assert_eq!(shortfall(&i), None);
        let mut i = e1000e(100, Duplex::Full, &[]);
        i.link.as_mut().unwrap().detected = Some(false);
        assert_eq!(shortfall(&i), None);
    }
}
