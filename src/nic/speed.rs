//! Is this link speed physical? The ONE place that decides whether the speed
//! an interface reports can limit throughput (a NIC negotiated it on a wire)
//! or is a figure a virtual device reports (veth says 10 Gb/s, virtio_net says
//! whatever the hypervisor set). Doctor, tune, the reports and the limit
//! explanation ([`crate::path::limit`]) all ask [`link_speed`]; a nominal
//! speed is never "the limit".
//!
//! Rules, in order:
//! 1. a virtual device kind or driver (veth, tun/tap, bridge, dummy,
//!    macvlan/macvtap, ipvlan/ipvtap, vxlan, geneve, GRE/IPIP tunnels,
//!    wireguard, vrf) → [`SpeedKind::Nominal`];
//! 2. a bond or team → [`SpeedKind::Aggregate`] (the sum of the active ports:
//!    real, but one flow uses one port);
//! 3. a paravirtual NIC driver (virtio_net, vmxnet3, hv_netvsc, xen-netfront)
//!    → nominal;
//! 4. a VLAN → physical (it reports the device it sits on);
//! 5. a device with a bus parent (PCI, USB) → physical; anything else →
//!    nominal (no NIC behind it);
//! 6. and, once measured, a rate above the reported speed makes any speed
//!    nominal ([`LinkSpeed::against_measured`]).

use serde::{Deserialize, Serialize};

use super::model::Interface;

/// What a reported link speed says about the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum SpeedKind {
    /// Negotiated (or forced) by a NIC on a wire: it caps throughput.
    Physical,
    /// A bond's or team's speed: the sum of its active ports. Real, but a
    /// single flow uses one port.
    Aggregate,
    /// A figure a virtual or paravirtual device reports: it caps nothing.
    Nominal,
}

/// An interface's reported speed and what it is worth.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct LinkSpeed {
    pub(crate) mbps: u32,
    pub(crate) kind: SpeedKind,
    /// Why this kind, in words (`veth: a virtual device ...`).
    pub(crate) basis: String,
}

/// rtnetlink kinds (and their drivers' names) of devices without a wire.
const VIRTUAL: &[&str] = &[
    "veth",
    "tun",
    "tap",
    "bridge",
    "dummy",
    "macvlan",
    "macvtap",
    "ipvlan",
    "ipvtap",
    "vxlan",
    "geneve",
    "gre",
    "gretap",
    "ip6gre",
    "ip6gretap",
    "ipip",
    "ip6tnl",
    "sit",
    "vti",
    "vti6",
    "wireguard",
    "vrf",
    "nlmon",
    "ifb",
    "netdevsim",
];

/// Drivers of paravirtual NICs: the hypervisor sets the speed they report.
const PARAVIRTUAL: &[&str] = &[
    "virtio_net",
    "vmxnet3",
    "hv_netvsc",
    "netvsc",
    "xen-netfront",
    "vif",
];

const AGGREGATE: &[&str] = &["bond", "bonding", "team"];

/// Measured above the reported speed by more than this share: the speed is not real.
const MEASURED_MARGIN: f64 = 1.05;

impl SpeedKind {
    /// Physical or aggregate: the figure can cap throughput.
    pub(crate) fn is_physical(self) -> bool {
        !matches!(self, SpeedKind::Nominal)
    }
}

impl std::fmt::Display for SpeedKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            SpeedKind::Physical => "physical",
            SpeedKind::Aggregate => "aggregate",
            SpeedKind::Nominal => "nominal",
        })
    }
}

/// The kind of the speed `i` reports, and why (see the module rules).
pub(crate) fn speed_kind(i: &Interface) -> (SpeedKind, String) {
    let kind = i.kind.as_deref().unwrap_or("");
    let driver = i.driver.as_deref().unwrap_or("");
    let is = |list: &[&str], x: &str| !x.is_empty() && list.contains(&x);
    if is(VIRTUAL, kind) || is(VIRTUAL, driver) {
        let what = if kind.is_empty() { driver } else { kind };
        return (
            SpeedKind::Nominal,
            format!("{what} is a virtual device: its speed is a nominal figure, not a wire"),
        );
    }
    if is(AGGREGATE, kind) || is(AGGREGATE, driver) {
        return (
            SpeedKind::Aggregate,
            "the sum of the active ports' speeds: real, but one flow uses one port".into(),
        );
    }
    if is(PARAVIRTUAL, driver) {
        return (
            SpeedKind::Nominal,
            format!("{driver} is a paravirtual NIC: it reports whatever speed the hypervisor sets"),
        );
    }
    if kind == "vlan" {
        return (
            SpeedKind::Physical,
            "a VLAN reports the speed of the device it sits on".into(),
        );
    }
    if i.physical {
        (
            SpeedKind::Physical,
            format!(
                "negotiated by the NIC{}",
                if driver.is_empty() {
                    String::new()
                } else {
                    format!(" ({driver})")
                }
            ),
        )
    } else {
        (
            SpeedKind::Nominal,
            "no NIC behind this device: its speed is a nominal figure".into(),
        )
    }
}

/// The speed `i` reports and its kind; `None` when no speed is reported.
pub(crate) fn link_speed(i: &Interface) -> Option<LinkSpeed> {
    let mbps = i.link.as_ref()?.speed_mbps.filter(|s| *s > 0)?;
    let (kind, basis) = speed_kind(i);
    Some(LinkSpeed { mbps, kind, basis })
}

impl LinkSpeed {
    pub(crate) fn bps(&self) -> f64 {
        self.mbps as f64 * 1e6
    }

    pub(crate) fn is_physical(&self) -> bool {
        self.kind.is_physical()
    }

    /// A measured rate above the reported speed proves the figure nominal.
    pub(crate) fn against_measured(self, measured_bps: f64) -> LinkSpeed {
        if measured_bps > self.bps() * MEASURED_MARGIN && self.kind != SpeedKind::Nominal {
            LinkSpeed {
                basis: format!(
                    "measured {:.0} Mbit/s exceeds the reported {}: the figure is nominal (an emulated NIC?)",
                    measured_bps / 1e6,
                    crate::units::speed(self.mbps)
                ),
                kind: SpeedKind::Nominal,
                ..self
            }
        } else {
            self
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nic::model::LinkModes;

    fn iface(kind: Option<&str>, driver: Option<&str>, physical: bool) -> Interface {
        Interface {
            name: "x".into(),
            kind: kind.map(str::to_string),
            driver: driver.map(str::to_string),
            physical,
            link: Some(LinkModes {
                speed_mbps: Some(10_000),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    #[test]
    fn virtual_and_paravirtual_speeds_are_nominal() {
        for (kind, driver, phys) in [
            (Some("veth"), Some("veth"), false),
            (Some("tun"), Some("tun"), false),
            (Some("bridge"), Some("bridge"), false),
            (Some("dummy"), None, false),
            (Some("macvlan"), None, false),
            (Some("ipvlan"), None, false),
            (Some("vxlan"), None, false),
            (Some("wireguard"), None, false),
            (None, Some("virtio_net"), true),
            (None, Some("vmxnet3"), true),
            (None, None, false),
        ] {
            let s = link_speed(&iface(kind, driver, phys)).unwrap();
            assert_eq!(s.kind, SpeedKind::Nominal, "{kind:?} {driver:?}");
            assert!(!s.is_physical());
        }
    }

    #[test]
    fn a_pci_nic_is_physical_until_it_measures_faster() {
        let s = link_speed(&iface(None, Some("e1000e"), true)).unwrap();
        assert_eq!(s.kind, SpeedKind::Physical);
        // 9.4 Gbit/s on a 10 Gb/s link: still physical.
        assert_eq!(s.clone().against_measured(9.4e9).kind, SpeedKind::Physical);
        let mut i = iface(None, Some("e1000e"), true);
        i.link.as_mut().unwrap().speed_mbps = Some(100);
        let s = link_speed(&i).unwrap().against_measured(1.3e9);
        assert_eq!(s.kind, SpeedKind::Nominal);
        assert!(
            s.basis.contains("exceeds the reported 100 Mbit/s"),
            "{}",
            s.basis
        );
    }

    #[test]
    fn bonds_are_aggregate_and_unknown_speed_is_none() {
        let s = link_speed(&iface(Some("bond"), Some("bonding"), false)).unwrap();
        assert_eq!(s.kind, SpeedKind::Aggregate);
        assert!(s.is_physical());
        let mut i = iface(None, Some("e1000e"), true);
        i.link.as_mut().unwrap().speed_mbps = None;
        assert_eq!(link_speed(&i), None);
    }
}
