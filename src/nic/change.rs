//! Parse `hlctl set` words into a [`ChangeSet`].
//!
//! Groups, ethtool-like, from the settings table ([`crate::nic::registry`]);
//! several groups in one command form one change set: a group that is one
//! setting takes one value (`mtu 9000`), the others take `KEY VALUE` pairs
//! (`ring rx 4096 tx 4096`, `link advertise MODE...`), and `feature NAME on|off ...`.
//! Every syntax problem is collected; nothing stops at the first one.

use serde_json::{Value, json};

use crate::nic::model::ChangeSet;
use crate::nic::registry::{self, FEATURE, Kind, Setting, SettingValue};
use crate::problem::Problem;

fn is_group(w: &str) -> bool {
    registry::group(w).is_some()
}

fn parse_u32(setting: &str, v: &str, problems: &mut Vec<Problem>) -> Option<u32> {
    match v.parse::<u32>() {
        Ok(n) => Some(n),
        Err(_) => {
            problems.push(Problem::new(
                setting,
                Some(v),
                "not a number: expected a whole number 0 to 4294967295",
            ));
            None
        }
    }
}

fn parse_bool(setting: &str, v: &str, problems: &mut Vec<Problem>) -> Option<bool> {
    match v {
        "on" => Some(true),
        "off" => Some(false),
        _ => {
            problems.push(Problem::new(setting, Some(v), "expected on or off"));
            None
        }
    }
}

/// The words of one value as the setting's kind, or a problem.
fn parse_value(s: &Setting, raw: &[String], p: &mut Vec<Problem>) -> Option<Value> {
    let name = s.name();
    let one = raw[0].as_str();
    match s.kind {
        Kind::U32 => parse_u32(&name, one, p).map(|n| json!(n)),
        Kind::Bool => parse_bool(&name, one, p).map(|b| b.to_value()),
        Kind::Duplex => match one {
            "half" | "full" => Some(json!(one)),
            _ => {
                p.push(Problem::new(&name, Some(one), "expected half or full"));
                None
            }
        },
        Kind::Modes => Some(json!(raw)),
        Kind::Cpus => match crate::cpu::cpulist::canonical(one) {
            Some(list) => Some(json!(list)),
            None => {
                p.push(Problem::new(
                    &name,
                    Some(one),
                    "expected a CPU list such as 0-3,6, or none",
                ));
                None
            }
        },
        Kind::CpuMap => match crate::cpu::cpulist::canonical_map(one) {
            Some(map) => Some(json!(map)),
            None => {
                p.push(Problem::new(
                    &name,
                    Some(one),
                    "expected one CPU list per queue separated by /, such as 0/1 or 0-1/2-3, or none",
                ));
                None
            }
        },
    }
}

/// The words that form `s`'s value from `i`: one word, or for a list of modes
/// every word up to the next group word or key of the same group.
fn value_words(s: &Setting, words: &[String], mut i: usize) -> (Vec<String>, usize) {
    let ends =
        |w: &str| is_group(w) || (s.kind == Kind::Modes && registry::find(s.group, w).is_some());
    let mut raw = Vec::new();
    while i < words.len() && !ends(&words[i]) {
        raw.push(words[i].clone());
        i += 1;
        if s.kind != Kind::Modes {
            break;
        }
    }
    (raw, i)
}

/// Parse `s`'s value from `words[i..]` into `cs`; returns the index after it.
fn parse_setting(
    s: &Setting,
    words: &[String],
    i: usize,
    cs: &mut ChangeSet,
    p: &mut Vec<Problem>,
) -> usize {
    let (raw, next) = value_words(s, words, i);
    if raw.is_empty() {
        let why = if s.kind == Kind::Modes {
            "missing link modes, e.g. advertise 1000baseT/Full 100baseT/Full"
        } else {
            "missing value"
        };
        p.push(Problem::new(s.name(), None, why));
        return next;
    }
    if let Some(v) = parse_value(s, &raw, p) {
        if (s.get)(cs).is_some() {
            p.push(Problem::new(s.name(), None, "given twice"));
        }
        (s.put)(cs, &v);
    }
    next
}

/// `GROUP KEY VALUE...` up to the next group word; returns the index after it.
fn parse_keyed(
    group: &str,
    words: &[String],
    mut i: usize,
    cs: &mut ChangeSet,
    p: &mut Vec<Problem>,
) -> usize {
    let start = i;
    while i < words.len() && !is_group(&words[i]) {
        let key = words[i].as_str();
        i += 1;
        match registry::find(group, key) {
            Some(s) => i = parse_setting(s, words, i, cs, p),
            None => {
                let keys: Vec<&str> = registry::in_group(group).map(|s| s.key).collect();
                p.push(Problem::new(
                    format!("{group} {key}"),
                    None,
                    format!("unknown {group} setting: allowed {}", keys.join(", ")),
                ));
                // Skip its value too.
                if words.get(i).is_some_and(|w| !is_group(w)) {
                    i += 1;
                }
            }
        }
    }
    if i == start {
        p.push(Problem::new(
            group,
            None,
            "nothing to set after the group word",
        ));
    }
    i
}

/// `feature NAME on|off ...` up to the next group word; returns the index after it.
fn parse_features(
    words: &[String],
    mut i: usize,
    cs: &mut ChangeSet,
    p: &mut Vec<Problem>,
) -> usize {
    let start = i;
    while i < words.len() && !is_group(&words[i]) {
        let setting = format!("{FEATURE} {}", words[i]);
        let name = words[i].clone();
        i += 1;
        let Some(v) = words.get(i).filter(|w| !is_group(w)) else {
            p.push(Problem::new(setting, None, "missing value"));
            continue;
        };
        i += 1;
        if let Some(b) = parse_bool(&setting, v, p)
            && cs.features.insert(name, b).is_some()
        {
            p.push(Problem::new(setting, None, "given twice"));
        }
    }
    if i == start {
        p.push(Problem::new(
            FEATURE,
            None,
            "nothing to set after the group word",
        ));
    }
    i
}

/// Parse the words after the interface name.
pub(crate) fn parse(words: &[String]) -> Result<ChangeSet, Vec<Problem>> {
    let mut cs = ChangeSet::default();
    let mut p = Vec::new();
    let groups = registry::group_words().join(", ");
    if words.is_empty() {
        p.push(Problem::new(
            "settings",
            None,
            format!("nothing to set: give one or more of {groups}"),
        ));
    }
    let mut i = 0;
    while i < words.len() {
        let word = words[i].as_str();
        i += 1;
        i = match registry::group(word) {
            None => {
                p.push(Problem::new(
                    word,
                    None,
                    format!("unknown setting group: allowed {groups}"),
                ));
                i
            }
            Some(g) if g.word == FEATURE => parse_features(words, i, &mut cs, &mut p),
            Some(g) => match registry::find(g.word, "") {
                Some(single) => parse_setting(single, words, i, &mut cs, &mut p),
                None => parse_keyed(g.word, words, i, &mut cs, &mut p),
            },
        };
    }
    if p.is_empty() { Ok(cs) } else { Err(p) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nic::model::Duplex;

    fn w(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn every_group_form_parses() {
        let cs = parse(&w("mtu 9000 txqueuelen 5000 gso-max-size 65536 ring rx 4096 tx 512 rx-mini 1 rx-jumbo 2 \
            pause autoneg off rx on tx off feature gro off rx-gro-hw on \
            link speed 1000 duplex full autoneg on advertise 1000baseT/Full 100baseT/Full \
            channels rx 1 tx 2 other 1 combined 4 \
            coalesce rx-usecs 50 tx-usecs 60 rx-frames 7 tx-frames 8 adaptive-rx on adaptive-tx off")).unwrap();
        assert_eq!(cs.mtu, Some(9000));
        assert_eq!(cs.txqueuelen, Some(5000));
        assert_eq!(cs.gso_max_size, Some(65536));
        let r = cs.rings.unwrap();
        assert_eq!(
            (r.rx, r.tx, r.rx_mini, r.rx_jumbo),
            (Some(4096), Some(512), Some(1), Some(2))
        );
        let pz = cs.pause.unwrap();
        assert_eq!(
            (pz.autoneg, pz.rx, pz.tx),
            (Some(false), Some(true), Some(false))
        );
        assert_eq!(cs.features.get("gro"), Some(&false));
        assert_eq!(cs.features.get("rx-gro-hw"), Some(&true));
        let l = cs.link.unwrap();
        assert_eq!(
            (l.speed_mbps, l.duplex, l.autoneg),
            (Some(1000), Some(Duplex::Full), Some(true))
        );
        assert_eq!(
            l.advertise.unwrap(),
            vec!["1000baseT/Full", "100baseT/Full"]
        );
        let c = cs.channels.unwrap();
        assert_eq!(
            (c.rx, c.tx, c.other, c.combined),
            (Some(1), Some(2), Some(1), Some(4))
        );
        let co = cs.coalesce.unwrap();
        assert_eq!(
            (co.rx_usecs, co.tx_usecs, co.rx_frames, co.tx_frames),
            (Some(50), Some(60), Some(7), Some(8))
        );
        assert_eq!((co.adaptive_rx, co.adaptive_tx), (Some(true), Some(false)));
    }

    #[test]
    fn advertise_stops_at_the_next_link_word() {
        let l = parse(&w("link advertise 100baseT/Full autoneg on"))
            .unwrap()
            .link
            .unwrap();
        assert_eq!(l.advertise.unwrap(), vec!["100baseT/Full"]);
        assert_eq!(l.autoneg, Some(true));
    }

    #[test]
    fn all_problems_are_reported_at_once() {
        let e = parse(&w(
            "mtu big ring rx -1 foo 3 pause rx maybe link duplex double colour blue channels",
        ))
        .unwrap_err();
        let settings: Vec<&str> = e.iter().map(|p| p.setting.as_str()).collect();
        assert_eq!(
            settings,
            vec![
                "mtu",
                "ring rx",
                "ring foo",
                "pause rx",
                "link duplex",
                "link colour",
                "channels"
            ],
            "{e:?}"
        );
        assert!(e[0].message.contains("whole number"));
        assert!(e[2].message.contains("allowed rx, tx, rx-mini, rx-jumbo"));
        assert!(e[3].message.contains("on or off"));
        assert!(e[4].message.contains("half or full"));
    }

    #[test]
    fn missing_values_duplicates_and_unknown_groups() {
        let e = parse(&w("mtu")).unwrap_err();
        assert_eq!(e[0].message, "missing value");
        let e = parse(&w("mtu 1500 mtu 9000")).unwrap_err();
        assert_eq!(e[0].message, "given twice");
        let e = parse(&w("speed 100")).unwrap_err();
        assert!(e[0].message.contains("unknown setting group"), "{e:?}");
        let e = parse(&w("ring rx")).unwrap_err();
        assert_eq!(
            (e[0].setting.as_str(), e[0].message.as_str()),
            ("ring rx", "missing value")
        );
        let e = parse(&[]).unwrap_err();
        assert!(e[0].message.contains("nothing to set"));
        let e = parse(&w("feature gro on gro off")).unwrap_err();
        assert_eq!(e[0].message, "given twice");
    }
}
