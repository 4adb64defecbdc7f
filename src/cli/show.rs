//! `hlctl show`: every NIC's settings, like a tidy `ethtool` + `ip -s link`.

use clap::Args;
use serde::Serialize;

use super::global::Global;
use super::output::{print_json, wrap};
use crate::units::bytes;
use serde_json::Value;

use crate::nic::model::Interface;
use crate::nic::registry::{self, Check, Setting};

/// Show interfaces: identity, MTU, GSO size, link, rings, pause, features,
/// channels, coalescing, queues and interrupts, and counters.
///
/// With no interface named, every interface is shown, physical NICs first;
/// `lo` only when named. A section the driver does not support reads "not
/// supported by driver" (JSON: null). Lines starting with `!` deserve a look:
/// a link slower than the best supported mode, half duplex, rings below their
/// maximum.
///
/// JSON: {"interfaces":[{"name","ifindex","mac","driver","mtu","mtu_min","mtu_max",
/// "txqueuelen","gso_max_size","tso_max_size","link":{"speed_mbps","duplex","autoneg","supported_modes",
/// "advertised_modes","partner_modes","detected",...},"rings":{"rx","tx","rx_max",
/// "tx_max",...},"pause":{"autoneg","rx","tx"},"features":{"<kernel name>":{"active",
/// "requested","fixed"}},"channels":{...},"coalesce":{...},"counters":{...},
/// "driver_stats":{...},"stack":null|{"top","members":[{"name","kind","master",
/// "master_kind","lowers","bond_mode","active_slave","port_state","mtu"}]},
/// "owners":[{"manager","name","file","netplan","owns":["mtu","ring rx",...]}],
/// "queues":{"rx":[{"index","rps_cpus","rps_flow_cnt"}],"tx":[{"index","xps_cpus"}],
/// "rps_sock_flow_entries","numa_node","local_cpulist","vectors":[{"irq","name",
/// "smp_affinity_list","effective_affinity_list"}],"physical_cores","irqbalance_pid",
/// "rss":null|{"hash_function","indirection":[queue,...],"hash_key"}},
/// "rps":{"cpus","flow_cnt"},"xps":null|{"cpus":"0/1","queues"},
/// "irq_affinity":null|{"cpus":"0/0/1/1","vectors"}}]}
///
/// The queue block: receive and transmit queues against the channels and
/// their maxima and the physical cores; RPS and XPS CPUs per queue (the
/// JSON keeps sysfs' masks); RSS's hash function, indirection table and
/// key where the driver gives them (ethtool netlink, Linux 6.2+; the ioctl before); each
/// queue vector's IRQ and the CPUs it may and does run on; whether
/// irqbalance runs (it owns IRQ affinity).
///
/// `owner` lines name the network managers that set the link's settings
/// from their own configuration (NetworkManager, systemd-networkd, a udev
/// `.link` file, ifupdown2/ifupdown, and netplan when it generated their
/// files), and which settings each one sets: a change hlctl makes to those
/// is undone by the manager unless it is persisted through it (`set --persist`).
///
/// A bridge or bond and its ports form a stack: naming any member shows the
/// whole stack (`eth2: port of vmbr0`; `bond0: active-backup, slaves eth2
/// eth3, active eth2`).
#[derive(Debug, Args)]
pub(crate) struct ShowArgs {
    /// Interfaces to show (default: all but lo).
    #[arg(value_name = "IFACE")]
    pub(crate) interfaces: Vec<String>,
}

#[derive(Serialize)]
struct ShowJson<'a> {
    interfaces: &'a [Interface],
}

pub(crate) fn run(global: &Global, args: ShowArgs) -> i32 {
    let mut backend = match super::backend::Backend::select(global, super::backend::Need::Nothing) {
        Ok(b) => b,
        Err(e) => return e.report(),
    };
    match backend.show(&args.interfaces) {
        Ok(list) => {
            if global.json {
                print_json(&ShowJson { interfaces: &list });
            } else {
                let text: Vec<String> = list.iter().map(render).collect();
                print!("{}", text.join("\n"));
            }
            super::exit::OK
        }
        Err(e) => e.report(),
    }
}

const NS: &str = "not supported by driver";

fn onoff(b: bool) -> &'static str {
    if b { "on" } else { "off" }
}

fn num(v: Option<u32>) -> String {
    v.map_or("n/a".into(), |n| n.to_string())
}

/// Things worth a look, as `!` lines.
pub(crate) fn highlights(i: &Interface) -> Vec<String> {
    let mut h: Vec<String> = i.conflicts.clone();
    if let Some(l) = &i.link {
        if let Some(s) = crate::nic::shortfall::shortfall(i)
            && s.slow()
        {
            h.push(format!(
                "link runs at {} but {}: check the cable, the switch port and autonegotiation",
                crate::units::speed(s.speed_mbps),
                s.best_phrase()
            ));
        }
        if l.duplex == Some(crate::nic::model::Duplex::Half) {
            h.push(
                "half duplex: collisions and low throughput; check autonegotiation on both ends"
                    .into(),
            );
        }
    }
    if let Some(r) = &i.rings {
        for (name, cur, max) in [("rx", r.rx, r.rx_max), ("tx", r.tx, r.tx_max)] {
            if let (Some(c), Some(m)) = (cur, max)
                && c < m
            {
                h.push(format!("{name} ring {c} is below its maximum {m}"));
            }
        }
    }
    h
}

/// The bridge/bond stack `i` belongs to, this interface's line first:
/// `eth2: port of vmbr0 (forwarding)`, `bond0: active-backup, slaves eth2
/// eth3, active eth2`.
pub(crate) fn stack_lines(i: &Interface) -> Vec<String> {
    let Some(s) = &i.stack else {
        return Vec::new();
    };
    let mut own: Vec<&crate::nic::stack::StackMember> = s.members.iter().collect();
    own.sort_by_key(|m| m.name != i.name);
    let mut out: Vec<String> = own
        .iter()
        .enumerate()
        .map(|(k, m)| {
            let head = if k == 0 {
                "  stack     "
            } else {
                "            "
            };
            format!("{head}{}", m.describe())
        })
        .collect();
    for b in s
        .uppers()
        .iter()
        .filter(|m| m.kind.as_deref() == Some("bond"))
    {
        out.push(format!(
            "            the speed {} reports is the sum of its active slaves' links (real, but one TCP stream rides one slave)",
            b.name
        ));
    }
    out
}

/// One interface as a text block.
pub(crate) fn render(i: &Interface) -> String {
    let mut lines = vec![identity_line(i), state_line(i)];
    lines.extend(owner_lines(i));
    lines.push(mtu_line(i));
    lines.extend(stack_lines(i));
    lines.extend(link_lines(i));
    lines.extend(settings_lines(i));
    lines.extend(super::show_queues::queue_lines(i));
    lines.extend(feature_lines(i));
    lines.extend(counter_lines(i));
    lines.push(driver_stats_line(i));
    lines.extend(highlights(i).iter().map(|h| format!("  ! {h}")));
    let mut o = lines.join("\n");
    o.push('\n');
    o
}

/// `eth0: ifindex 2, driver e1000e 6.1, firmware ..., bus ..., kind ...`.
fn identity_line(i: &Interface) -> String {
    let mut id = vec![format!("ifindex {}", i.ifindex)];
    if let Some(d) = &i.driver {
        let mut s = format!("driver {d}");
        if let Some(v) = &i.driver_version {
            s += &format!(" {v}");
        }
        id.push(s);
    }
    if let Some(f) = &i.firmware_version {
        id.push(format!("firmware {f}"));
    }
    if let Some(b) = &i.bus_info {
        id.push(format!("bus {b}"));
    }
    if let Some(k) = &i.kind {
        id.push(format!("kind {k}"));
    }
    format!("{}: {}", i.name, id.join(", "))
}

fn state_line(i: &Interface) -> String {
    let mut state = format!(
        "  state     {}{}",
        i.oper_state,
        if i.admin_up { "" } else { " (admin down)" }
    );
    if let Some(c) = i.carrier_changes {
        state += &format!(", carrier changes {c}");
    }
    if let Some(m) = &i.mac {
        state += &format!(", mac {m}");
    }
    state
}

/// `  owner     managed by ifupdown2 (iface vmbr0, /etc/network/interfaces): owns mtu`.
pub(crate) fn owner_lines(i: &Interface) -> Vec<String> {
    i.owners
        .iter()
        .enumerate()
        .map(|(k, o)| {
            let head = if k == 0 {
                "  owner     "
            } else {
                "            "
            };
            format!("{head}{}", o.describe())
        })
        .collect()
}

fn mtu_line(i: &Interface) -> String {
    format!(
        "  mtu       {} (device allows {}..{}), txqueuelen {}",
        i.mtu,
        num(i.mtu_min),
        num(i.mtu_max),
        i.txqueuelen
    )
}

/// Speed, duplex, autoneg, port, lanes, carrier, and the mode lists.
fn link_lines(i: &Interface) -> Vec<String> {
    let Some(l) = &i.link else {
        return vec![format!("  link      {NS}")];
    };
    let speed = l
        .speed_mbps
        .map_or("unknown speed".to_string(), crate::units::speed);
    let duplex = l.duplex.map_or("unknown".to_string(), |d| d.to_string());
    let mut s = format!(
        "  link      {speed}, {duplex} duplex, autoneg {}",
        onoff(l.autoneg)
    );
    if let Some(p) = &l.port {
        s += &format!(", port {p}");
    }
    if let Some(n) = l.lanes {
        s += &format!(", {n} lanes");
    }
    if let Some(d) = l.detected {
        s += if d { ", link detected" } else { ", no link" };
    }
    let mut out = vec![s];
    if let Some(ls) = crate::nic::speed::link_speed(i)
        && !ls.is_physical()
    {
        out.push(format!("            speed is nominal: {}", ls.basis));
    }
    for (what, modes) in [
        ("supported", &l.supported_modes),
        ("advertised", &l.advertised_modes),
        ("partner", &l.partner_modes),
    ] {
        if !modes.is_empty() {
            out.push(format!("            {what}: {}", modes.join(" ")));
        }
    }
    out
}

/// The sections `show` lists from the settings table: label, group (empty:
/// the groups that are one setting, beyond mtu and txqueuelen), and what an
/// empty section reads.
const SECTIONS: &[(&str, &str, &str)] = &[
    ("sizes", "", ""),
    ("rings", "ring", "none"),
    ("pause", "pause", "none"),
    ("channels", "channels", "none"),
    ("coalesce", "coalesce", "no parameters reported"),
];

/// One line per section of [`SECTIONS`]: `key value` or, for a setting with
/// a device maximum, `key current/max`.
fn settings_lines(i: &Interface) -> Vec<String> {
    SECTIONS
        .iter()
        .filter_map(|(label, group, empty)| {
            let rows: Vec<&Setting> = if group.is_empty() {
                registry::SETTINGS
                    .iter()
                    .filter(|s| s.key.is_empty() && !matches!(s.group, "mtu" | "txqueuelen"))
                    .collect()
            } else {
                if !registry::group(group).is_some_and(|g| (g.supported)(i)) {
                    return Some(format!("  {label:<9} {NS}"));
                }
                registry::in_group(group).collect()
            };
            let parts: Vec<String> = rows.iter().filter_map(|s| setting_part(i, s)).collect();
            let with_max = rows.iter().any(|s| matches!(s.check, Check::Max { .. }));
            match (parts.is_empty(), group.is_empty()) {
                (true, true) => None,
                (true, false) => Some(format!("  {label:<9} {empty}")),
                (false, _) => Some(format!(
                    "  {label:<9} {}{}",
                    parts.join(", "),
                    if with_max { " (current/max)" } else { "" }
                )),
            }
        })
        .collect()
}

/// `rx 256/4096`, `autoneg on`; `None` when the device does not report it.
fn setting_part(i: &Interface, s: &Setting) -> Option<String> {
    let text = |v: Value| v.as_str().map_or_else(|| v.to_string(), str::to_string);
    let name = if s.key.is_empty() { s.group } else { s.key };
    match s.check {
        Check::Max { .. } => {
            let m = s.max(i).filter(|m| *m > 0)?;
            let v = (s.read)(i);
            let v = if v.is_null() { "n/a".into() } else { text(v) };
            Some(format!("{name} {v}/{m}"))
        }
        _ => Some((s.read)(i))
            .filter(|v| !v.is_null())
            .map(|v| format!("{name} {}", text(v))),
    }
}

fn feature_lines(i: &Interface) -> Vec<String> {
    let Some(f) = &i.features else {
        return vec![format!("  features  {NS}")];
    };
    let list = |active: bool| -> Vec<String> {
        f.iter()
            .filter(|(_, x)| x.active == active)
            .map(|(n, x)| match (x.fixed, x.requested != x.active) {
                (true, _) => format!("{n}[fixed]"),
                // As `ethtool -k` says `off [requested on]`: the kernel
                // holds it off because a feature it needs is off.
                (false, true) => {
                    format!("{n}[requested {}]", if x.requested { "on" } else { "off" })
                }
                (false, false) => n.clone(),
            })
            .collect()
    };
    vec![
        wrap("  features  on: ", &list(true), 100),
        wrap("            off: ", &list(false), 100),
    ]
}

fn counter_lines(i: &Interface) -> Vec<String> {
    let c = &i.counters;
    vec![
        format!(
            "  rx        {} packets, {}, errors {}, dropped {}, crc {}, frame {}, missed {}, fifo {}",
            c.rx_packets,
            bytes(c.rx_bytes),
            c.rx_errors,
            c.rx_dropped,
            c.rx_crc_errors,
            c.rx_frame_errors,
            c.rx_missed_errors,
            c.rx_fifo_errors
        ),
        format!(
            "  tx        {} packets, {}, errors {}, dropped {}, carrier {}, collisions {}",
            c.tx_packets,
            bytes(c.tx_bytes),
            c.tx_errors,
            c.tx_dropped,
            c.tx_carrier_errors,
            c.collisions
        ),
    ]
}

fn driver_stats_line(i: &Interface) -> String {
    let Some(s) = &i.driver_stats else {
        return format!("  driver statistics {NS}");
    };
    let nonzero: Vec<String> = s
        .iter()
        .filter(|(_, v)| **v != 0)
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    format!(
        "  driver statistics: {} counters, {} non-zero{}",
        s.len(),
        nonzero.len(),
        if nonzero.is_empty() {
            String::new()
        } else {
            format!(": {}", nonzero.join(", "))
        }
    )
}
