//! The typed D-Bus form of a link's settings groups: one property per group
//! of the NIC model ([`crate::nic::model`]), so a client reads a ring size or
//! an offload flag without a JSON parser.
//!
//! A dictionary holds the keys the driver reports; a group the driver does
//! not support at all is an empty dictionary (and `Pause` is all false). The
//! key names and types are listed once here ([`RING_KEYS`], ...) and
//! documented in `dbus/org.hlctl.Daemon1.xml`.

use std::collections::HashMap;

use zbus::{OwnedVariant, Variant};

use crate::nic::model::{Channels, Coalesce, Counters, Feature, Interface, LinkModes, Rings};

/// Any value as an owned variant (the values here hold no file descriptors).
pub(crate) fn owned<'a>(v: impl Into<Variant<'a>>) -> OwnedVariant {
    v.into()
        .try_into_owned()
        .expect("a variant without file descriptors")
}

/// The value of key `k` of a reply's summary dictionary, typed; an error
/// naming the key when it is missing or of another type.
pub(crate) fn get<T>(m: &HashMap<String, OwnedVariant>, k: &str) -> Result<T, String>
where
    T: TryFrom<OwnedVariant>,
{
    let v = m
        .get(k)
        .ok_or_else(|| format!("the summary has no `{k}`"))?;
    let v = v.try_clone().map_err(|e| e.to_string())?;
    T::try_from(v).map_err(|_| format!("the summary's `{k}` has the wrong type"))
}

/// "" (the wire's "none") back into `None`.
pub(crate) fn non_empty(s: String) -> Option<String> {
    (!s.is_empty()).then_some(s)
}

/// A dictionary key and how to read its value from a model group.
pub(crate) type Key<G, V> = (&'static str, fn(&G) -> V);

/// `Rings a{su}` keys, each with how to read it.
pub(crate) const RING_KEYS: &[Key<Rings, Option<u32>>] = &[
    ("rx", |r| r.rx),
    ("tx", |r| r.tx),
    ("rx_mini", |r| r.rx_mini),
    ("rx_jumbo", |r| r.rx_jumbo),
    ("rx_max", |r| r.rx_max),
    ("tx_max", |r| r.tx_max),
    ("rx_mini_max", |r| r.rx_mini_max),
    ("rx_jumbo_max", |r| r.rx_jumbo_max),
];

/// `Channels a{su}` keys.
pub(crate) const CHANNEL_KEYS: &[Key<Channels, Option<u32>>] = &[
    ("rx", |c| c.rx),
    ("tx", |c| c.tx),
    ("other", |c| c.other),
    ("combined", |c| c.combined),
    ("rx_max", |c| c.rx_max),
    ("tx_max", |c| c.tx_max),
    ("other_max", |c| c.other_max),
    ("combined_max", |c| c.combined_max),
];

/// `Coalesce a{sv}` keys: `u` ones...
pub(crate) const COALESCE_U32_KEYS: &[Key<Coalesce, Option<u32>>] = &[
    ("rx_usecs", |c| c.rx_usecs),
    ("tx_usecs", |c| c.tx_usecs),
    ("rx_frames", |c| c.rx_frames),
    ("tx_frames", |c| c.tx_frames),
];

/// ...and `b` ones.
pub(crate) const COALESCE_BOOL_KEYS: &[Key<Coalesce, Option<bool>>] = &[
    ("adaptive_rx", |c| c.adaptive_rx),
    ("adaptive_tx", |c| c.adaptive_tx),
];

/// `Counters a{st}` keys.
pub(crate) const COUNTER_KEYS: &[Key<Counters, u64>] = &[
    ("rx_packets", |c| c.rx_packets),
    ("tx_packets", |c| c.tx_packets),
    ("rx_bytes", |c| c.rx_bytes),
    ("tx_bytes", |c| c.tx_bytes),
    ("rx_errors", |c| c.rx_errors),
    ("tx_errors", |c| c.tx_errors),
    ("rx_dropped", |c| c.rx_dropped),
    ("tx_dropped", |c| c.tx_dropped),
    ("rx_crc_errors", |c| c.rx_crc_errors),
    ("rx_frame_errors", |c| c.rx_frame_errors),
    ("rx_missed_errors", |c| c.rx_missed_errors),
    ("rx_fifo_errors", |c| c.rx_fifo_errors),
    ("rx_over_errors", |c| c.rx_over_errors),
    ("tx_fifo_errors", |c| c.tx_fifo_errors),
    ("tx_carrier_errors", |c| c.tx_carrier_errors),
    ("collisions", |c| c.collisions),
];

fn present<T, V>(group: Option<&T>, keys: &[Key<T, Option<V>>]) -> HashMap<String, V> {
    let Some(g) = group else {
        return HashMap::new();
    };
    keys.iter()
        .filter_map(|(k, get)| get(g).map(|v| (k.to_string(), v)))
        .collect()
}

/// `Rings`: current sizes and pre-set maxima the driver reports.
pub(crate) fn rings(i: &Interface) -> HashMap<String, u32> {
    present(i.rings.as_ref(), RING_KEYS)
}

/// `Channels`: queue counts and maxima the driver reports.
pub(crate) fn channels(i: &Interface) -> HashMap<String, u32> {
    present(i.channels.as_ref(), CHANNEL_KEYS)
}

/// `Pause`: (autoneg, rx, tx); all false when the driver has no pause settings.
pub(crate) fn pause(i: &Interface) -> (bool, bool, bool) {
    i.pause
        .map_or((false, false, false), |p| (p.autoneg, p.rx, p.tx))
}

/// `Features`: kernel name → (active, requested, fixed).
pub(crate) fn features(i: &Interface) -> HashMap<String, (bool, bool, bool)> {
    i.features
        .iter()
        .flatten()
        .map(|(k, f): (&String, &Feature)| (k.clone(), (f.active, f.requested, f.fixed)))
        .collect()
}

/// `Coalesce`: the values the driver reports.
pub(crate) fn coalesce(i: &Interface) -> HashMap<String, OwnedVariant> {
    let mut m: HashMap<String, OwnedVariant> = present(i.coalesce.as_ref(), COALESCE_U32_KEYS)
        .into_iter()
        .map(|(k, v)| (k, owned(v)))
        .collect();
    m.extend(
        present(i.coalesce.as_ref(), COALESCE_BOOL_KEYS)
            .into_iter()
            .map(|(k, v)| (k, owned(v))),
    );
    m
}

/// `Counters`: every counter of the model.
pub(crate) fn counters(i: &Interface) -> HashMap<String, u64> {
    COUNTER_KEYS
        .iter()
        .map(|(k, get)| (k.to_string(), get(&i.counters)))
        .collect()
}

/// `LinkModes`: speed, duplex and the mode lists; keys the driver does not
/// report (speed without a link, lanes, port) are left out.
pub(crate) fn link_modes(i: &Interface) -> HashMap<String, OwnedVariant> {
    let Some(l): Option<&LinkModes> = i.link.as_ref() else {
        return HashMap::new();
    };
    let mut m = HashMap::new();
    let mut put = |k: &str, v: OwnedVariant| {
        m.insert(k.to_string(), v);
    };
    if let Some(s) = l.speed_mbps {
        put("speed", owned(s));
    }
    if let Some(d) = l.duplex {
        put("duplex", owned(d.to_string()));
    }
    put("autoneg", owned(l.autoneg));
    if let Some(p) = &l.port {
        put("port", owned(p.clone()));
    }
    if let Some(n) = l.lanes {
        put("lanes", owned(n));
    }
    put("supported", owned(l.supported_modes.clone()));
    put("advertised", owned(l.advertised_modes.clone()));
    put("partner", owned(l.partner_modes.clone()));
    put("capabilities", owned(l.capabilities.clone()));
    if let Some(d) = l.detected {
        put("detected", owned(d));
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nic::model::{Duplex, Pause};

    /// What the real e1000e reports (tests/vm): rings with maxima, pause on.
    fn e1000e() -> Interface {
        Interface {
            name: "eth0".into(),
            rings: Some(Rings {
                rx: Some(256),
                tx: Some(256),
                rx_max: Some(4096),
                tx_max: Some(4096),
                ..Default::default()
            }),
            pause: Some(Pause {
                autoneg: true,
                rx: true,
                tx: false,
            }),
            link: Some(LinkModes {
                speed_mbps: Some(1000),
                duplex: Some(Duplex::Full),
                autoneg: true,
                supported_modes: vec!["1000baseT/Full".into()],
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    #[test]
    fn a_group_holds_what_the_driver_reports_and_nothing_else() {
        let i = e1000e();
        let r = rings(&i);
        assert_eq!(r.len(), 4, "{r:?}");
        assert_eq!((r["rx"], r["rx_max"]), (256, 4096));
        assert!(!r.contains_key("rx_jumbo"));
        assert_eq!(pause(&i), (true, true, false));
        assert!(channels(&i).is_empty());
        assert!(coalesce(&i).is_empty());
        let l = link_modes(&i);
        assert_eq!(u32::try_from(&l["speed"]).unwrap(), 1000);
        assert_eq!(<&str>::try_from(&l["duplex"]).unwrap(), "full");
        assert!(!l.contains_key("lanes"));
        assert_eq!(counters(&i).len(), COUNTER_KEYS.len());
        let none = Interface::default();
        assert_eq!(pause(&none), (false, false, false));
        assert!(rings(&none).is_empty() && link_modes(&none).is_empty());
    }
}
