//! Parse `hlctl set` words into a [`ChangeSet`].
//!
//! Groups, ethtool-like; several groups in one command form one change set:
//! `mtu N`, `txqueuelen N`, `ring rx N tx N [rx-mini N] [rx-jumbo N]`,
//! `pause [autoneg on|off] [rx on|off] [tx on|off]`, `feature NAME on|off ...`,
//! `link [speed N] [duplex half|full] [autoneg on|off] [advertise MODE...]`,
//! `channels [rx N] [tx N] [other N] [combined N]`,
//! `coalesce [rx-usecs N] [tx-usecs N] [rx-frames N] [tx-frames N] [adaptive-rx on|off] [adaptive-tx on|off]`.
//! Every syntax problem is collected; nothing stops at the first one.

use crate::nic::model::{ChangeSet, Duplex};
use crate::problem::Problem;

/// The words that start a group.
pub const GROUPS: &[&str] = &[
    "mtu",
    "txqueuelen",
    "ring",
    "pause",
    "feature",
    "features",
    "link",
    "channels",
    "coalesce",
];

const RING_KEYS: &[&str] = &["rx", "tx", "rx-mini", "rx-jumbo"];
const PAUSE_KEYS: &[&str] = &["autoneg", "rx", "tx"];
const LINK_KEYS: &[&str] = &["speed", "duplex", "autoneg", "advertise"];
const CHANNEL_KEYS: &[&str] = &["rx", "tx", "other", "combined"];
const COALESCE_KEYS: &[&str] = &[
    "rx-usecs",
    "tx-usecs",
    "rx-frames",
    "tx-frames",
    "adaptive-rx",
    "adaptive-tx",
];

fn is_group(w: &str) -> bool {
    GROUPS.contains(&w)
}

fn parse_u32(setting: &str, v: &str, problems: &mut Vec<Problem>) -> Option<u32> {
    match v.parse::<u32>() {
        Ok(n) => Some(n),
        Err(_) => {
            problems.push(Problem::new(
                setting,
                Some(v),
                "not a number: expected a whole number 0..=4294967295",
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

/// Split the words of one group into `key value` pairs until the next group word.
/// Returns the pairs and the index after the group.
fn pairs<'a>(
    group: &str,
    words: &'a [String],
    mut i: usize,
    problems: &mut Vec<Problem>,
) -> (Vec<(&'a str, &'a str)>, usize) {
    let mut out = Vec::new();
    while i < words.len() && !is_group(&words[i]) {
        let key = words[i].as_str();
        match words.get(i + 1) {
            Some(v) if !is_group(v) => {
                out.push((key, v.as_str()));
                i += 2;
            }
            _ => {
                problems.push(Problem::new(
                    format!("{group} {key}"),
                    None,
                    "missing value",
                ));
                i += 1;
            }
        }
    }
    if out.is_empty() && problems.iter().all(|p| !p.setting.starts_with(group)) {
        problems.push(Problem::new(
            group,
            None,
            "nothing to set after the group word",
        ));
    }
    (out, i)
}

fn unknown(group: &str, key: &str, allowed: &[&str], problems: &mut Vec<Problem>) {
    problems.push(Problem::new(
        format!("{group} {key}"),
        None,
        format!("unknown {group} setting: allowed {}", allowed.join(", ")),
    ));
}

fn set_once<T>(slot: &mut Option<T>, value: Option<T>, setting: &str, problems: &mut Vec<Problem>) {
    if let Some(v) = value {
        if slot.is_some() {
            problems.push(Problem::new(setting, None, "given twice"));
        }
        *slot = Some(v);
    }
}

/// Parse the words after the interface name.
pub fn parse(words: &[String]) -> Result<ChangeSet, Vec<Problem>> {
    let mut cs = ChangeSet::default();
    let mut p = Vec::new();
    let mut i = 0;
    if words.is_empty() {
        p.push(Problem::new(
            "settings",
            None,
            format!("nothing to set: give one or more of {}", GROUPS.join(", ")),
        ));
    }
    while i < words.len() {
        let group = words[i].as_str();
        i += 1;
        match group {
            "mtu" | "txqueuelen" => {
                let Some(v) = words.get(i).filter(|w| !is_group(w)) else {
                    p.push(Problem::new(group, None, "missing value"));
                    continue;
                };
                i += 1;
                let n = parse_u32(group, v, &mut p);
                let slot = if group == "mtu" {
                    &mut cs.mtu
                } else {
                    &mut cs.txqueuelen
                };
                set_once(slot, n, group, &mut p);
            }
            "ring" => {
                let (kv, next) = pairs(group, words, i, &mut p);
                i = next;
                let r = cs.rings.get_or_insert_with(Default::default);
                for (k, v) in kv {
                    let s = format!("ring {k}");
                    let slot = match k {
                        "rx" => &mut r.rx,
                        "tx" => &mut r.tx,
                        "rx-mini" => &mut r.rx_mini,
                        "rx-jumbo" => &mut r.rx_jumbo,
                        _ => {
                            unknown(group, k, RING_KEYS, &mut p);
                            continue;
                        }
                    };
                    set_once(slot, parse_u32(&s, v, &mut p), &s, &mut p);
                }
            }
            "pause" => {
                let (kv, next) = pairs(group, words, i, &mut p);
                i = next;
                let r = cs.pause.get_or_insert_with(Default::default);
                for (k, v) in kv {
                    let s = format!("pause {k}");
                    let slot = match k {
                        "autoneg" => &mut r.autoneg,
                        "rx" => &mut r.rx,
                        "tx" => &mut r.tx,
                        _ => {
                            unknown(group, k, PAUSE_KEYS, &mut p);
                            continue;
                        }
                    };
                    set_once(slot, parse_bool(&s, v, &mut p), &s, &mut p);
                }
            }
            "feature" | "features" => {
                let (kv, next) = pairs("feature", words, i, &mut p);
                i = next;
                for (k, v) in kv {
                    let s = format!("feature {k}");
                    if let Some(b) = parse_bool(&s, v, &mut p)
                        && cs.features.insert(k.to_string(), b).is_some()
                    {
                        p.push(Problem::new(s, None, "given twice"));
                    }
                }
            }
            "link" => {
                let l = cs.link.get_or_insert_with(Default::default);
                let start = i;
                while i < words.len() && !is_group(&words[i]) {
                    let k = words[i].as_str();
                    let s = format!("link {k}");
                    i += 1;
                    if k == "advertise" {
                        let mut modes = Vec::new();
                        while i < words.len()
                            && !is_group(&words[i])
                            && !LINK_KEYS.contains(&words[i].as_str())
                        {
                            modes.push(words[i].clone());
                            i += 1;
                        }
                        if modes.is_empty() {
                            p.push(Problem::new(
                                s,
                                None,
                                "missing link modes, e.g. advertise 1000baseT/Full 100baseT/Full",
                            ));
                        } else {
                            set_once(&mut l.advertise, Some(modes), &s, &mut p);
                        }
                        continue;
                    }
                    let Some(v) = words.get(i).filter(|w| !is_group(w)) else {
                        if LINK_KEYS.contains(&k) {
                            p.push(Problem::new(s, None, "missing value"));
                        } else {
                            unknown("link", k, LINK_KEYS, &mut p);
                        }
                        continue;
                    };
                    i += 1;
                    match k {
                        "speed" => {
                            set_once(&mut l.speed_mbps, parse_u32(&s, v, &mut p), &s, &mut p)
                        }
                        "autoneg" => {
                            set_once(&mut l.autoneg, parse_bool(&s, v, &mut p), &s, &mut p)
                        }
                        "duplex" => {
                            let d = match v.as_str() {
                                "half" => Some(Duplex::Half),
                                "full" => Some(Duplex::Full),
                                _ => {
                                    p.push(Problem::new(&s, Some(v), "expected half or full"));
                                    None
                                }
                            };
                            set_once(&mut l.duplex, d, &s, &mut p);
                        }
                        _ => unknown("link", k, LINK_KEYS, &mut p),
                    }
                }
                if i == start {
                    p.push(Problem::new(
                        "link",
                        None,
                        "nothing to set after the group word",
                    ));
                }
            }
            "channels" => {
                let (kv, next) = pairs(group, words, i, &mut p);
                i = next;
                let c = cs.channels.get_or_insert_with(Default::default);
                for (k, v) in kv {
                    let s = format!("channels {k}");
                    let slot = match k {
                        "rx" => &mut c.rx,
                        "tx" => &mut c.tx,
                        "other" => &mut c.other,
                        "combined" => &mut c.combined,
                        _ => {
                            unknown(group, k, CHANNEL_KEYS, &mut p);
                            continue;
                        }
                    };
                    set_once(slot, parse_u32(&s, v, &mut p), &s, &mut p);
                }
            }
            "coalesce" => {
                let (kv, next) = pairs(group, words, i, &mut p);
                i = next;
                let c = cs.coalesce.get_or_insert_with(Default::default);
                for (k, v) in kv {
                    let s = format!("coalesce {k}");
                    match k {
                        "rx-usecs" => {
                            set_once(&mut c.rx_usecs, parse_u32(&s, v, &mut p), &s, &mut p)
                        }
                        "tx-usecs" => {
                            set_once(&mut c.tx_usecs, parse_u32(&s, v, &mut p), &s, &mut p)
                        }
                        "rx-frames" => {
                            set_once(&mut c.rx_frames, parse_u32(&s, v, &mut p), &s, &mut p)
                        }
                        "tx-frames" => {
                            set_once(&mut c.tx_frames, parse_u32(&s, v, &mut p), &s, &mut p)
                        }
                        "adaptive-rx" => {
                            set_once(&mut c.adaptive_rx, parse_bool(&s, v, &mut p), &s, &mut p)
                        }
                        "adaptive-tx" => {
                            set_once(&mut c.adaptive_tx, parse_bool(&s, v, &mut p), &s, &mut p)
                        }
                        _ => unknown(group, k, COALESCE_KEYS, &mut p),
                    }
                }
            }
            other => p.push(Problem::new(
                other,
                None,
                format!("unknown setting group: allowed {}", GROUPS.join(", ")),
            )),
        }
    }
    if p.is_empty() { Ok(cs) } else { Err(p) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn every_group_form_parses() {
        let cs = parse(&w("mtu 9000 txqueuelen 5000 ring rx 4096 tx 512 rx-mini 1 rx-jumbo 2 \
            pause autoneg off rx on tx off feature gro off rx-gro-hw on \
            link speed 1000 duplex full autoneg on advertise 1000baseT/Full 100baseT/Full \
            channels rx 1 tx 2 other 1 combined 4 \
            coalesce rx-usecs 50 tx-usecs 60 rx-frames 7 tx-frames 8 adaptive-rx on adaptive-tx off")).unwrap();
        assert_eq!(cs.mtu, Some(9000));
        assert_eq!(cs.txqueuelen, Some(5000));
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
