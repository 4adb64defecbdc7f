//! Offloads that are normally on but were turned off, and flow control.

use super::finding::{Finding, Outcome, Severity};
use super::inputs::IfaceSample;
use crate::nic::aliases::FEATURE_ALIASES;
use crate::nic::registry;

/// (kernel feature, short name, what it does). GRO counts only for real NICs:
/// virtual devices such as veth leave it off by design.
const NORMALLY_ON: &[(&str, &str, &str)] = &[
    (
        "tx-scatter-gather",
        "sg",
        "scatter-gather (needed by TSO/GSO)",
    ),
    ("tx-tcp-segmentation", "tso", "TCP segmentation offload"),
    (
        "tx-tcp6-segmentation",
        "tso",
        "TCP segmentation offload (IPv6)",
    ),
    (
        "tx-generic-segmentation",
        "gso",
        "generic segmentation offload",
    ),
    ("rx-checksum", "rx", "receive checksum offload"),
    ("tx-checksum-ip-generic", "tx", "transmit checksum offload"),
    ("tx-checksum-ipv4", "tx", "transmit checksum offload (IPv4)"),
    ("tx-checksum-ipv6", "tx", "transmit checksum offload (IPv6)"),
    ("rx-gro", "gro", "generic receive offload"),
];

pub(crate) fn check_offloads(s: &IfaceSample, out: &mut Outcome) {
    let i = s.now();
    let name = i.name.as_str();
    let n = Some(name);
    let Some(feats) = &i.features else {
        out.skip("offloads", n, "the driver reports no features");
        return;
    };
    let mut off = Vec::new();
    let mut short: Vec<&str> = Vec::new();
    for (k, sh, _) in NORMALLY_ON {
        if *k == "rx-gro" && !i.physical {
            continue;
        }
        if let Some(f) = feats.get(*k)
            && !f.fixed
            && !f.requested
        {
            off.push(*k);
            if !short.contains(sh) {
                short.push(sh);
            }
        }
    }
    if off.is_empty() {
        out.pass(
            "offloads",
            n,
            "segmentation, scatter-gather and checksum offloads on (or fixed by the driver)",
        );
        return;
    }
    // ethtool's short names in its order, so the fix reads like `ethtool -K`.
    short.sort_by_key(|s| FEATURE_ALIASES.iter().position(|(a, _)| a == s));
    let mut f = Finding::new(
        "offload-off",
        Severity::Warning,
        n,
        format!("{name}: offloads turned off: {}", short.join(", ")),
    );
    for k in &off {
        f = f.evidence(k, "off (changeable)");
    }
    let words: Vec<String> = short.iter().map(|s| format!("{s} on")).collect();
    out.find(
        f.why("without segmentation and checksum offloads the CPU cuts and checksums every packet itself: throughput becomes CPU-bound")
            .fix(format!("hlctl set {name} feature {}", words.join(" "))),
    );
}

pub(crate) fn check_pause(s: &IfaceSample, out: &mut Outcome) {
    let i = s.now();
    let name = i.name.as_str();
    let n = Some(name);
    let Some(p) = &i.pause else {
        out.skip(
            "pause",
            n,
            "the driver does not support flow control (pause frames)",
        );
        return;
    };
    let supports = i.link.as_ref().is_some_and(|l| {
        l.capabilities
            .iter()
            .any(|c| c == "Pause" || c == "Asym_Pause")
    });
    if p.rx && p.tx {
        out.pass(
            "pause",
            n,
            format!(
                "rx on, tx on (autoneg {})",
                if p.autoneg { "on" } else { "off" }
            ),
        );
    } else if !supports {
        out.skip("pause", n, "the NIC does not advertise pause-frame support");
    } else {
        let onoff = |b: bool| if b { "on" } else { "off" };
        out.find(
            Finding::new("pause-off", Severity::Info, n, format!("{name}: flow control partly or fully off"))
                .evidence(&registry::name("pause", "rx"), onoff(p.rx))
                .evidence(&registry::name("pause", "tx"), onoff(p.tx))
                .evidence(&registry::name("pause", "autoneg"), onoff(p.autoneg))
                .why("without pause frames a fast sender overruns a slower receiver's buffers and frames are dropped instead of held (on switches that honour pause)")
                .fix(format!("hlctl set {name} pause rx on tx on")),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nic::model::{Feature, Interface};

    fn feat(requested: bool, fixed: bool) -> Feature {
        Feature {
            active: requested,
            requested,
            fixed,
        }
    }

    #[test]
    fn only_changeable_features_the_user_turned_off() {
        let mut i = Interface {
            name: "va".into(),
            ..Default::default()
        };
        let mut m = std::collections::BTreeMap::new();
        m.insert("tx-generic-segmentation".to_string(), feat(false, false));
        m.insert("tx-tcp-segmentation".to_string(), feat(false, false));
        m.insert("tx-scatter-gather".to_string(), feat(true, false));
        m.insert("tx-checksum-ipv4".to_string(), feat(false, true)); // fixed: not ours to fix
        m.insert("rx-gro".to_string(), feat(false, false)); // virtual: off by design
        // Active off but requested on (a dependency, e.g. tap): not flagged.
        m.insert(
            "tx-tcp6-segmentation".to_string(),
            Feature {
                active: false,
                requested: true,
                fixed: false,
            },
        );
        i.features = Some(m);
        let s = IfaceSample {
            first: i,
            second: None,
            interval_s: 1.0,
        };
        let mut out = Outcome::default();
        check_offloads(&s, &mut out);
        assert_eq!(out.findings.len(), 1);
        assert_eq!(out.findings[0].fix, ["hlctl set va feature tso on gso on"]);
    }
}
