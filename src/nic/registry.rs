//! The one table of NIC settings. Every layer reads it: `hlctl set` parsing
//! ([`crate::nic::change`]), validation, the before → after diff, apply's change
//! sets and their undo, the systemd `.link` export, the D-Bus `a{sv}` keys and
//! `show`. Adding a setting is one [`Setting`] row here (plus its model field
//! and its netlink encoder); the layers pick it up from the row.
//!
//! A setting is named by its group word and its key (`ring` `rx`): as the user
//! writes it, `ring rx`; on D-Bus, `ring.rx`. A group without keys (`mtu`)
//! is a setting of its own. Values travel between the layers as JSON values,
//! the way `set` shows them: numbers, `"on"`/`"off"`, `"half"`/`"full"`, and
//! link-mode lists (sorted). Features are a family of their own (any kernel
//! feature name), so they are not rows; their group is in [`GROUPS`].

use serde_json::{Value, json};

use crate::nic::model::{ChangeSet, Duplex, Interface};
use crate::nic::netlink::{Netlink, NetlinkError};

/// The type of a setting's value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A whole number 0..=4294967295.
    U32,
    /// `on` or `off`.
    Bool,
    /// `half` or `full`.
    Duplex,
    /// One or more link-mode names (`1000baseT/Full`).
    Modes,
    /// A CPU list (`0-3,6`, `none`), as [`crate::cpu::cpulist`] spells it.
    Cpus,
    /// A per-queue map, one CPU list per queue (`0/1`, `none`;
    /// [`crate::cpu::cpulist::parse_map`]).
    CpuMap,
}

impl Kind {
    /// The D-Bus signature of a value of this kind.
    pub(crate) fn dbus_type(self) -> &'static str {
        match self {
            Kind::U32 => "u",
            Kind::Bool => "b",
            Kind::Duplex => "s",
            Kind::Modes => "as",
            Kind::Cpus | Kind::CpuMap => "s",
        }
    }
}

/// How a value is written in a systemd `.link` file.
#[derive(Clone, Copy, Debug)]
pub(crate) enum LinkFormat {
    /// The number as it is.
    Plain,
    /// `yes` / `no`.
    YesNo,
    /// The number with a unit (`1000M`, `50us`).
    Suffix(&'static str),
    /// `half` / `full`.
    Duplex,
    /// systemd's mode names, space separated (`1000baset-full`).
    Modes,
}

/// What validation checks for a requested value, before anything is touched.
#[derive(Clone, Copy)]
pub(crate) enum Check {
    /// Nothing beyond the type.
    None,
    /// Within the device's MTU range.
    Mtu,
    /// At most the maximum the device reports; 0 only when `zero_ok`. `what`
    /// names the resource in "this device has no {what}".
    Max {
        max: fn(&Interface) -> Option<u32>,
        what: &'static str,
        zero_ok: bool,
    },
    /// The driver reports this value (coalescing parameters).
    Reported,
    /// A speed that one of the supported link modes has.
    Speed,
    /// Every mode is one the device supports.
    Modes,
    /// A per-queue map names as many queues as the device has (or is `none`).
    Queues {
        count: fn(&Interface) -> Option<u32>,
        what: &'static str,
    },
}

/// One NIC setting.
pub(crate) struct Setting {
    /// The group word (`ring`).
    pub(crate) group: &'static str,
    /// The key within the group (`rx`); empty for a group that is one setting (`mtu`).
    pub(crate) key: &'static str,
    pub(crate) kind: Kind,
    /// The systemd `.link` key, where systemd has one.
    pub(crate) link_key: Option<(&'static str, LinkFormat)>,
    pub(crate) check: Check,
    /// The value the interface holds (null when the driver does not report it).
    pub(crate) read: fn(&Interface) -> Value,
    /// The value a change set requests (`None`: not requested).
    pub(crate) get: fn(&ChangeSet) -> Option<Value>,
    /// Put a value of this setting's kind (as [`Setting::get`] returns it) into a change set.
    pub(crate) put: fn(&mut ChangeSet, &Value),
}

impl Setting {
    /// As the user names it: `mtu`, `ring rx`.
    pub(crate) fn name(&self) -> String {
        if self.key.is_empty() {
            self.group.to_string()
        } else {
            format!("{} {}", self.group, self.key)
        }
    }

    /// Its D-Bus key: `mtu`, `ring.rx`.
    pub(crate) fn dbus_key(&self) -> String {
        if self.key.is_empty() {
            self.group.to_string()
        } else {
            format!("{}.{}", self.group, self.key)
        }
    }

    /// The maximum the device reports, for a setting checked against one.
    pub(crate) fn max(&self, iface: &Interface) -> Option<u32> {
        match self.check {
            Check::Max { max, .. } => max(iface),
            _ => None,
        }
    }
}

/// A group of settings the kernel takes in one request.
pub(crate) struct Group {
    /// The word that starts the group on the command line.
    pub(crate) word: &'static str,
    /// The order requests are sent in: settings that never interrupt traffic
    /// first, those that may reset the device later, the link itself last.
    pub(crate) apply_rank: u8,
    /// The driver reports this group (else: "not supported by driver").
    pub(crate) supported: fn(&Interface) -> bool,
    /// Send the group's values in a change set to the kernel.
    pub(crate) send: fn(&mut Netlink, &Interface, &ChangeSet) -> Result<(), NetlinkError>,
}

/// The word of the feature family (`feature NAME on|off`).
pub(crate) const FEATURE: &str = "feature";

/// Every group, in display order (the order `set` lists its results in).
pub(crate) static GROUPS: &[Group] = &[
    Group {
        word: "mtu",
        apply_rank: 6,
        supported: |_| true,
        send: |nl, i, cs| {
            cs.mtu.map_or(Ok(()), |v| {
                nl.set_mtu(i.ifindex, v).map_err(|e| e.on(&i.name))
            })
        },
    },
    Group {
        word: "txqueuelen",
        apply_rank: 0,
        supported: |_| true,
        send: |nl, i, cs| {
            cs.txqueuelen.map_or(Ok(()), |v| {
                nl.set_txqueuelen(i.ifindex, v).map_err(|e| e.on(&i.name))
            })
        },
    },
    Group {
        word: "gso-max-size",
        apply_rank: 1,
        supported: |i| i.gso_max_size.is_some(),
        send: |nl, i, cs| {
            cs.gso_max_size.map_or(Ok(()), |v| {
                nl.set_gso_max_size(i.ifindex, v).map_err(|e| e.on(&i.name))
            })
        },
    },
    Group {
        word: "ring",
        apply_rank: 5,
        supported: |i| i.rings.is_some(),
        send: |nl, i, cs| {
            cs.rings
                .as_ref()
                .map_or(Ok(()), |r| nl.set_rings(&i.name, r))
        },
    },
    Group {
        word: "pause",
        apply_rank: 3,
        supported: |i| i.pause.is_some(),
        send: |nl, i, cs| {
            cs.pause
                .as_ref()
                .map_or(Ok(()), |p| nl.set_pause(&i.name, p))
        },
    },
    Group {
        word: FEATURE,
        apply_rank: 1,
        supported: |i| i.features.is_some(),
        send: |nl, i, cs| {
            nl.set_features(&i.name, &cs.features)?;
            let now = nl.features(&i.name)?.unwrap_or_default();
            crate::nic::features_kept::check(&i.name, &cs.features, &now)
        },
    },
    Group {
        word: "channels",
        apply_rank: 4,
        supported: |i| i.channels.is_some(),
        send: |nl, i, cs| {
            cs.channels
                .as_ref()
                .map_or(Ok(()), |c| nl.set_channels(&i.name, c))
        },
    },
    Group {
        word: "coalesce",
        apply_rank: 2,
        supported: |i| i.coalesce.is_some(),
        send: |nl, i, cs| {
            cs.coalesce
                .as_ref()
                .map_or(Ok(()), |c| nl.set_coalesce(&i.name, c))
        },
    },
    Group {
        word: "rps",
        apply_rank: 0,
        supported: |i| i.rps.is_some(),
        send: |_, i, cs| {
            cs.rps
                .as_ref()
                .map_or(Ok(()), |r| crate::nic::rps::write(&i.name, r))
        },
    },
    Group {
        word: "xps",
        apply_rank: 0,
        supported: |i| i.xps.is_some(),
        send: |_, i, cs| {
            cs.xps
                .as_ref()
                .map_or(Ok(()), |x| crate::nic::xps::write(&i.name, x))
        },
    },
    Group {
        word: "irq-affinity",
        apply_rank: 0,
        supported: |i| i.irq_affinity.is_some(),
        send: |_, i, cs| {
            cs.irq_affinity
                .as_ref()
                .map_or(Ok(()), |a| crate::nic::irq_affinity::write(&i.name, a))
        },
    },
    Group {
        word: "link",
        apply_rank: 7,
        supported: |i| i.link.is_some(),
        send: |nl, i, cs| {
            cs.link
                .as_ref()
                .map_or(Ok(()), |l| nl.set_link_modes(&i.name, l))
        },
    },
];

/// A value as the table carries it.
pub(crate) trait SettingValue: Sized {
    fn to_value(&self) -> Value;
    fn from_value(v: &Value) -> Option<Self>;
}

impl SettingValue for u32 {
    fn to_value(&self) -> Value {
        json!(self)
    }
    fn from_value(v: &Value) -> Option<u32> {
        v.as_u64().and_then(|n| u32::try_from(n).ok())
    }
}

impl SettingValue for bool {
    fn to_value(&self) -> Value {
        json!(if *self { "on" } else { "off" })
    }
    fn from_value(v: &Value) -> Option<bool> {
        match v.as_str()? {
            "on" => Some(true),
            "off" => Some(false),
            _ => None,
        }
    }
}

impl SettingValue for Duplex {
    fn to_value(&self) -> Value {
        json!(self.to_string())
    }
    fn from_value(v: &Value) -> Option<Duplex> {
        match v.as_str()? {
            "half" => Some(Duplex::Half),
            "full" => Some(Duplex::Full),
            _ => None,
        }
    }
}

impl SettingValue for String {
    fn to_value(&self) -> Value {
        json!(self)
    }
    fn from_value(v: &Value) -> Option<String> {
        v.as_str().map(str::to_string)
    }
}

impl SettingValue for Vec<String> {
    fn to_value(&self) -> Value {
        let mut m = self.clone();
        m.sort();
        json!(m)
    }
    fn from_value(v: &Value) -> Option<Vec<String>> {
        v.as_array()?
            .iter()
            .map(|s| s.as_str().map(str::to_string))
            .collect()
    }
}

fn opt<T: SettingValue>(v: &Option<T>) -> Value {
    v.as_ref().map_or(Value::Null, T::to_value)
}

/// A row for a setting that is a field of a group's section: `read` maps the
/// interface's section (when the driver reports it) to a value; the change
/// set's field is `$set.$field`.
macro_rules! row {
    ($group:literal, $key:literal, $kind:ident, $set:ident . $field:ident,
     read $section:ident => $read:expr, link $link:expr, check $check:expr) => {
        Setting {
            group: $group,
            key: $key,
            kind: Kind::$kind,
            link_key: $link,
            check: $check,
            read: |i| i.$section.as_ref().map_or(Value::Null, $read),
            get: |cs| {
                cs.$set
                    .as_ref()
                    .and_then(|s| s.$field.as_ref())
                    .map(SettingValue::to_value)
            },
            put: |cs, v| {
                cs.$set.get_or_insert_with(Default::default).$field = SettingValue::from_value(v)
            },
        }
    };
}

/// A row for a group that is one setting (`mtu`): `cs.$field`, read by `$read`.
macro_rules! single {
    ($group:literal, $field:ident, read $read:expr, link $link:expr, check $check:expr) => {
        Setting {
            group: $group,
            key: "",
            kind: Kind::U32,
            link_key: $link,
            check: $check,
            read: $read,
            get: |cs| cs.$field.as_ref().map(SettingValue::to_value),
            put: |cs, v| cs.$field = SettingValue::from_value(v),
        }
    };
}

use LinkFormat::{Plain, Suffix, YesNo};

/// Every setting, grouped as in [`GROUPS`], in display order within its group.
pub(crate) static SETTINGS: &[Setting] = &[
    single!("mtu", mtu, read |i| json!(i.mtu),
        link Some(("MTUBytes", Plain)), check Check::Mtu),
    single!("txqueuelen", txqueuelen, read |i| json!(i.txqueuelen),
        link Some(("TransmitQueueLength", Plain)), check Check::None),
    single!("gso-max-size", gso_max_size, read |i| opt(&i.gso_max_size),
        link Some(("GenericSegmentOffloadMaxBytes", Plain)),
        check Check::Max { max: |i| i.tso_max_size, what: "TSO size limit", zero_ok: false }),
    row!("ring", "rx", U32, rings.rx, read rings => |r| opt(&r.rx),
        link Some(("RxBufferSize", Plain)),
        check Check::Max { max: |i| i.rings.as_ref()?.rx_max, what: "rx ring", zero_ok: false }),
    row!("ring", "tx", U32, rings.tx, read rings => |r| opt(&r.tx),
        link Some(("TxBufferSize", Plain)),
        check Check::Max { max: |i| i.rings.as_ref()?.tx_max, what: "tx ring", zero_ok: false }),
    row!("ring", "rx-mini", U32, rings.rx_mini, read rings => |r| opt(&r.rx_mini),
        link Some(("RxMiniBufferSize", Plain)),
        check Check::Max { max: |i| i.rings.as_ref()?.rx_mini_max, what: "rx-mini ring", zero_ok: false }),
    row!("ring", "rx-jumbo", U32, rings.rx_jumbo, read rings => |r| opt(&r.rx_jumbo),
        link Some(("RxJumboBufferSize", Plain)),
        check Check::Max { max: |i| i.rings.as_ref()?.rx_jumbo_max, what: "rx-jumbo ring", zero_ok: false }),
    row!("pause", "autoneg", Bool, pause.autoneg, read pause => |p| p.autoneg.to_value(),
        link Some(("AutoNegotiationFlowControl", YesNo)), check Check::None),
    row!("pause", "rx", Bool, pause.rx, read pause => |p| p.rx.to_value(),
        link Some(("RxFlowControl", YesNo)), check Check::None),
    row!("pause", "tx", Bool, pause.tx, read pause => |p| p.tx.to_value(),
        link Some(("TxFlowControl", YesNo)), check Check::None),
    row!("channels", "rx", U32, channels.rx, read channels => |c| opt(&c.rx),
        link Some(("RxChannels", Plain)),
        check Check::Max { max: |i| i.channels.as_ref()?.rx_max, what: "rx channels", zero_ok: true }),
    row!("channels", "tx", U32, channels.tx, read channels => |c| opt(&c.tx),
        link Some(("TxChannels", Plain)),
        check Check::Max { max: |i| i.channels.as_ref()?.tx_max, what: "tx channels", zero_ok: true }),
    row!("channels", "other", U32, channels.other, read channels => |c| opt(&c.other),
        link Some(("OtherChannels", Plain)),
        check Check::Max { max: |i| i.channels.as_ref()?.other_max, what: "other channels", zero_ok: true }),
    row!("channels", "combined", U32, channels.combined, read channels => |c| opt(&c.combined),
        link Some(("CombinedChannels", Plain)),
        check Check::Max { max: |i| i.channels.as_ref()?.combined_max, what: "combined channels", zero_ok: true }),
    row!("coalesce", "rx-usecs", U32, coalesce.rx_usecs, read coalesce => |c| opt(&c.rx_usecs),
        link Some(("RxCoalesceSec", Suffix("us"))), check Check::Reported),
    row!("coalesce", "tx-usecs", U32, coalesce.tx_usecs, read coalesce => |c| opt(&c.tx_usecs),
        link Some(("TxCoalesceSec", Suffix("us"))), check Check::Reported),
    row!("coalesce", "rx-frames", U32, coalesce.rx_frames, read coalesce => |c| opt(&c.rx_frames),
        link Some(("RxMaxCoalescedFrames", Plain)), check Check::Reported),
    row!("coalesce", "tx-frames", U32, coalesce.tx_frames, read coalesce => |c| opt(&c.tx_frames),
        link Some(("TxMaxCoalescedFrames", Plain)), check Check::Reported),
    row!("coalesce", "adaptive-rx", Bool, coalesce.adaptive_rx, read coalesce => |c| opt(&c.adaptive_rx),
        link Some(("UseAdaptiveRxCoalesce", YesNo)), check Check::Reported),
    row!("coalesce", "adaptive-tx", Bool, coalesce.adaptive_tx, read coalesce => |c| opt(&c.adaptive_tx),
        link Some(("UseAdaptiveTxCoalesce", YesNo)), check Check::Reported),
    row!("rps", "cpus", Cpus, rps.cpus, read rps => |r| r.cpus.to_value(),
        link None, check Check::None),
    row!("rps", "flow-cnt", U32, rps.flow_cnt, read rps => |r| opt(&r.flow_cnt),
        link None, check Check::None),
    row!("xps", "cpus", CpuMap, xps.cpus, read xps => |x| x.cpus.to_value(),
        link None, check Check::Queues { count: |i| i.xps.as_ref().map(|x| x.queues), what: "transmit queues" }),
    row!("irq-affinity", "cpus", CpuMap, irq_affinity.cpus, read irq_affinity => |a| a.cpus.to_value(),
        link None, check Check::Queues { count: |i| i.irq_affinity.as_ref().map(|a| a.vectors), what: "queue vectors" }),
    row!("link", "speed", U32, link.speed_mbps, read link => |l| opt(&l.speed_mbps),
        link Some(("BitsPerSecond", Suffix("M"))), check Check::Speed),
    row!("link", "duplex", Duplex, link.duplex, read link => |l| opt(&l.duplex),
        link Some(("Duplex", LinkFormat::Duplex)), check Check::None),
    row!("link", "autoneg", Bool, link.autoneg, read link => |l| l.autoneg.to_value(),
        link Some(("AutoNegotiation", YesNo)), check Check::None),
    row!("link", "advertise", Modes, link.advertise, read link => |l| l.advertised_modes.to_value(),
        link Some(("Advertise", LinkFormat::Modes)), check Check::Modes),
];

/// A value as one line of text, the way `set` and `compare` print it: a
/// number in decimal, `on`/`off`, `half`/`full`, link modes separated by one
/// space, "" for none.
pub(crate) fn value_text(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        Value::Array(a) => a.iter().map(value_text).collect::<Vec<_>>().join(" "),
        other => other.to_string(),
    }
}

/// The name of the setting `key` of `group` (`ring rx`), for labels that
/// name a setting outside the layers that take it row by row.
pub(crate) fn name(group: &str, key: &str) -> String {
    find(group, key).map_or_else(|| format!("{group} {key}"), Setting::name)
}

/// The group a word starts (`features` is `feature`).
pub(crate) fn group(word: &str) -> Option<&'static Group> {
    let word = if word == "features" { FEATURE } else { word };
    GROUPS.iter().find(|g| g.word == word)
}

/// The group words, for help and error messages.
pub(crate) fn group_words() -> Vec<&'static str> {
    GROUPS.iter().map(|g| g.word).collect()
}

/// The settings of one group, in table order.
pub(crate) fn in_group(word: &str) -> impl Iterator<Item = &'static Setting> + '_ {
    SETTINGS.iter().filter(move |s| s.group == word)
}

/// A setting by group and key (`"ring"`, `"rx"`; `"mtu"`, `""`).
pub(crate) fn find(group: &str, key: &str) -> Option<&'static Setting> {
    SETTINGS.iter().find(|s| s.group == group && s.key == key)
}

/// A setting by the name the user gives it (`ring rx`, `mtu`).
pub(crate) fn by_name(name: &str) -> Option<&'static Setting> {
    let (group, key) = name.split_once(' ').unwrap_or((name, ""));
    find(group, key)
}

/// A setting by its D-Bus key (`ring.rx`, `mtu`).
pub(crate) fn by_dbus_key(key: &str) -> Option<&'static Setting> {
    let (group, key) = key.split_once('.').unwrap_or((key, ""));
    find(group, key)
}

/// A setting as the user names it (`ring rx`, `feature rx-gro`, `mtu`) under
/// its D-Bus key (`ring.rx`, `feature.rx-gro`, `mtu`): the one spelling the
/// bus reads and writes, so a key a client reads (a reply's row, an owner's
/// settings) is the key `ApplyChanges` takes. A group word holds no space
/// and a key no dot (the kernel's feature names neither), so
/// [`name_of_dbus_key`] gives the name back.
pub(crate) fn dbus_key_of(name: &str) -> String {
    name.replacen(' ', ".", 1)
}

/// The user's name of a setting from its D-Bus key (`ring.rx` → `ring rx`).
pub(crate) fn name_of_dbus_key(key: &str) -> String {
    key.replacen('.', " ", 1)
}

/// The values `iface` holds for the settings `cs` requests (features: the
/// requested state the kernel holds): the change set that puts them back.
/// A value the interface does not report is left out.
pub(crate) fn held(iface: &Interface, cs: &ChangeSet) -> ChangeSet {
    let mut back = ChangeSet::default();
    for s in SETTINGS {
        if (s.get)(cs).is_some() {
            let v = (s.read)(iface);
            if !v.is_null() {
                (s.put)(&mut back, &v);
            }
        }
    }
    if let Some(f) = &iface.features {
        back.features = cs
            .features
            .keys()
            .filter_map(|k| f.get(k).map(|x| (k.clone(), x.requested)))
            .collect();
    }
    back
}

impl ChangeSet {
    /// True when nothing is requested.
    pub(crate) fn is_empty(&self) -> bool {
        *self == ChangeSet::default()
    }

    /// Lay `newer` over `self`: every value `newer` sets wins, the rest stays.
    pub(crate) fn merge(&mut self, newer: &ChangeSet) {
        for s in SETTINGS {
            if let Some(v) = (s.get)(newer) {
                (s.put)(self, &v);
            }
        }
        for (k, v) in &newer.features {
            self.features.insert(k.clone(), *v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_dbus_keys_are_unique_and_every_row_has_a_group() {
        let mut names: Vec<String> = SETTINGS.iter().map(Setting::name).collect();
        names.sort();
        let n = names.len();
        names.dedup();
        assert_eq!(n, names.len(), "duplicate setting names");
        for s in SETTINGS {
            assert!(group(s.group).is_some(), "{} has no group", s.name());
            assert_eq!(
                by_dbus_key(&s.dbus_key()).map(Setting::name),
                Some(s.name())
            );
            assert_eq!(
                by_name(&s.name()).map(Setting::dbus_key),
                Some(s.dbus_key())
            );
        }
    }

    #[test]
    fn a_name_and_its_dbus_key_turn_into_each_other() {
        for s in SETTINGS {
            assert_eq!(dbus_key_of(&s.name()), s.dbus_key());
            assert_eq!(name_of_dbus_key(&s.dbus_key()), s.name());
            assert!(
                !s.group.contains(' ') && !s.key.contains('.'),
                "{}",
                s.name()
            );
        }
        let f = format!("{FEATURE} tx-udp_tnl-segmentation");
        assert_eq!(dbus_key_of(&f), "feature.tx-udp_tnl-segmentation");
        assert_eq!(name_of_dbus_key(&dbus_key_of(&f)), f);
    }

    #[test]
    fn every_setting_puts_what_it_gets_and_merge_keeps_older_values() {
        let sample = |k: Kind| match k {
            Kind::U32 => json!(7),
            Kind::Bool => json!("on"),
            Kind::Duplex => json!("full"),
            Kind::Modes => json!(["1000baseT/Full"]),
            Kind::Cpus => json!("0-1"),
            Kind::CpuMap => json!("0/1"),
        };
        let mut all = ChangeSet::default();
        for s in SETTINGS {
            let mut one = ChangeSet::default();
            (s.put)(&mut one, &sample(s.kind));
            assert_eq!((s.get)(&one), Some(sample(s.kind)), "{}", s.name());
            all.merge(&one);
        }
        for s in SETTINGS {
            assert_eq!((s.get)(&all), Some(sample(s.kind)), "{}", s.name());
        }
    }
}
