//! The typed D-Bus form of a link's settings groups: one property per group
//! of the NIC model ([`crate::nic::model`]), so a client reads a ring size or
//! an offload flag without a JSON parser.
//!
//! A dictionary holds the keys the driver reports; a group the driver does
//! not support at all is an empty dictionary (and `Pause` is all false).
//!
//! One spelling of every key, for reading and writing: a setting's key is
//! the registry's ([`crate::nic::registry`]) exactly, the key `ApplyChanges`
//! takes after its group (`Coalesce["rx-usecs"]` is written as
//! `coalesce.rx-usecs`); the maximum the device reports for a setting is
//! `KEY-max` (`rx-jumbo-max`); a key that is not a setting (a counter, a
//! link mode list only the device has) is spelled the same way: lower case,
//! words joined by `-` (`rx-packets`, `supported`). `Rings`, `Channels`,
//! `Coalesce` and the settings of `LinkModes` are read through the registry,
//! so a setting added there appears here; the other keys are listed here.
//! All are documented in `dbus/org.hlctl.Daemon1.xml`.

use std::collections::HashMap;

use zbus::{OwnedVariant, Variant};

use super::settings;
use crate::nic::model::{Counters, Feature, Interface, LinkModes};
use crate::nic::registry;

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

/// `Counters a{st}` keys.
pub(crate) const COUNTER_KEYS: &[Key<Counters, u64>] = &[
    ("rx-packets", |c| c.rx_packets),
    ("tx-packets", |c| c.tx_packets),
    ("rx-bytes", |c| c.rx_bytes),
    ("tx-bytes", |c| c.tx_bytes),
    ("rx-errors", |c| c.rx_errors),
    ("tx-errors", |c| c.tx_errors),
    ("rx-dropped", |c| c.rx_dropped),
    ("tx-dropped", |c| c.tx_dropped),
    ("rx-crc-errors", |c| c.rx_crc_errors),
    ("rx-frame-errors", |c| c.rx_frame_errors),
    ("rx-missed-errors", |c| c.rx_missed_errors),
    ("rx-fifo-errors", |c| c.rx_fifo_errors),
    ("rx-over-errors", |c| c.rx_over_errors),
    ("tx-fifo-errors", |c| c.tx_fifo_errors),
    ("tx-carrier-errors", |c| c.tx_carrier_errors),
    ("collisions", |c| c.collisions),
];

/// The key of the maximum the device reports for the setting `key`.
pub(crate) fn max_key(key: &str) -> String {
    format!("{key}-max")
}

/// A settings group of the registry ([`registry::SETTINGS`]) as a
/// dictionary: each setting the driver reports under its registry key
/// (`rx-jumbo`), and beside it the maximum the device reports for it
/// ([`max_key`]: `rx-jumbo-max`). A group the driver does not report is empty.
fn group_dict(i: &Interface, group: &str) -> HashMap<String, OwnedVariant> {
    let mut m = HashMap::new();
    for s in registry::SETTINGS.iter().filter(|s| s.group == group) {
        if let Some(v) = settings::to_variant(s.kind, &(s.read)(i)) {
            m.insert(s.key.to_string(), owned(v));
        }
        if let Some(max) = s.max(i) {
            m.insert(max_key(s.key), owned(max));
        }
    }
    m
}

/// A dictionary of whole numbers only (`a{su}`).
fn u32_dict(m: HashMap<String, OwnedVariant>) -> HashMap<String, u32> {
    m.into_iter()
        .filter_map(|(k, v)| u32::try_from(v).ok().map(|n| (k, n)))
        .collect()
}

/// `Rings`: current sizes and pre-set maxima the driver reports.
pub(crate) fn rings(i: &Interface) -> HashMap<String, u32> {
    u32_dict(group_dict(i, "ring"))
}

/// `Channels`: queue counts and maxima the driver reports.
pub(crate) fn channels(i: &Interface) -> HashMap<String, u32> {
    u32_dict(group_dict(i, "channels"))
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
    group_dict(i, "coalesce")
}

/// `Counters`: every counter of the model.
pub(crate) fn counters(i: &Interface) -> HashMap<String, u64> {
    COUNTER_KEYS
        .iter()
        .map(|(k, get)| (k.to_string(), get(&i.counters)))
        .collect()
}

/// `LinkModes`: the `link` settings of the registry (speed, duplex, autoneg,
/// advertise) and what only the device has (port, lanes, the supported and
/// partner modes, capabilities, detected); keys the driver does not report
/// (speed without a link, lanes, port) are left out.
pub(crate) fn link_modes(i: &Interface) -> HashMap<String, OwnedVariant> {
    let Some(l): Option<&LinkModes> = i.link.as_ref() else {
        return HashMap::new();
    };
    let mut m = group_dict(i, "link");
    let mut put = |k: &str, v: OwnedVariant| {
        m.insert(k.to_string(), v);
    };
    if let Some(p) = &l.port {
        put("port", owned(p.clone()));
    }
    if let Some(n) = l.lanes {
        put("lanes", owned(n));
    }
    put("supported", owned(l.supported_modes.clone()));
    put("partner", owned(l.partner_modes.clone()));
    put("capabilities", owned(l.capabilities.clone()));
    if let Some(d) = l.detected {
        put("detected", owned(d));
    }
    m
}

/// One owner of a link as the `Owners` property carries it:
/// (manager, name, file, netplan, owns), "" for none; each setting it owns
/// by the key `ApplyChanges` takes (`ring.rx`, `feature.rx-gro`).
pub(crate) fn owner(o: crate::nic::owner::Owner) -> (String, String, String, String, Vec<String>) {
    let manager = o
        .manager
        .and_then(|m| serde_json::to_value(m).ok())
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    (
        manager,
        o.name.unwrap_or_default(),
        o.file.unwrap_or_default(),
        o.netplan.unwrap_or_default(),
        o.owns.iter().map(|n| registry::dbus_key_of(n)).collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nic::model::{Coalesce, Duplex, Pause, Rings};

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
        assert_eq!((r["rx"], r["rx-max"]), (256, 4096));
        assert!(!r.contains_key("rx-jumbo"));
        assert_eq!(pause(&i), (true, true, false));
        assert!(channels(&i).is_empty());
        assert!(coalesce(&i).is_empty());
        // Coalesce keeps each value's type: `u` numbers, `b` flags.
        let mut j = e1000e();
        j.coalesce = Some(Coalesce {
            rx_usecs: Some(3),
            adaptive_rx: Some(true),
            ..Default::default()
        });
        let c = coalesce(&j);
        assert_eq!(c.len(), 2, "{c:?}");
        assert_eq!(u32::try_from(&c["rx-usecs"]).unwrap(), 3);
        assert!(bool::try_from(&c["adaptive-rx"]).unwrap());
        let l = link_modes(&i);
        assert_eq!(u32::try_from(&l["speed"]).unwrap(), 1000);
        assert_eq!(<&str>::try_from(&l["duplex"]).unwrap(), "full");
        assert!(bool::try_from(&l["autoneg"]).unwrap());
        assert_eq!(
            <Vec<String>>::try_from(l["advertise"].try_clone().unwrap()).unwrap(),
            Vec::<String>::new()
        );
        assert!(!l.contains_key("lanes"));
        assert_eq!(counters(&i).len(), COUNTER_KEYS.len());
        let none = Interface::default();
        assert_eq!(pause(&none), (false, false, false));
        assert!(rings(&none).is_empty() && link_modes(&none).is_empty());
    }

    #[test]
    fn an_owner_names_each_setting_by_the_key_apply_changes_takes() {
        let o = crate::nic::owner::Owner {
            manager: Some(crate::nic::managers::Manager::NetworkManager),
            owns: ["mtu", "ring rx", "feature rx-gro"]
                .iter()
                .map(|s| s.to_string())
                .collect(),
            ..Default::default()
        };
        let (manager, .., owns) = owner(o);
        assert_eq!(manager, "network-manager");
        assert_eq!(owns, ["feature.rx-gro", "mtu", "ring.rx"]);
        // Each is a key ApplyChanges decodes.
        let on = |k: &str| match registry::by_dbus_key(k) {
            Some(_) => owned(1500u32),
            None => owned(true),
        };
        let m: HashMap<String, OwnedVariant> = owns.iter().map(|k| (k.clone(), on(k))).collect();
        let cs = settings::decode_changes(&m).unwrap();
        assert_eq!(
            (cs.mtu, cs.rings.and_then(|r| r.rx)),
            (Some(1500), Some(1500))
        );
        assert_eq!(cs.features.get("rx-gro"), Some(&true));
    }
}
