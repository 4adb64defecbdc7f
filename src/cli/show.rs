//! `hlctl show`: every NIC's settings, like a tidy `ethtool` + `ip -s link`.

use clap::Args;
use serde::Serialize;

use super::args::Global;
use super::output::{bytes, print_json, wrap};
use crate::nic::model::Interface;

/// Show interfaces: identity, MTU, link, rings, pause, features, channels,
/// coalescing and counters.
///
/// With no interface named, every interface is shown, physical NICs first;
/// `lo` only when named. A section the driver does not support reads "not
/// supported by driver" (JSON: null). Lines starting with `!` deserve a look:
/// a link slower than the best supported mode, half duplex, rings below their
/// maximum.
///
/// JSON: {"interfaces":[{"name","ifindex","mac","driver","mtu","mtu_min","mtu_max",
/// "txqueuelen","link":{"speed_mbps","duplex","autoneg","supported_modes",
/// "advertised_modes","partner_modes","detected",...},"rings":{"rx","tx","rx_max",
/// "tx_max",...},"pause":{"autoneg","rx","tx"},"features":{"<kernel name>":{"active",
/// "requested","fixed"}},"channels":{...},"coalesce":{...},"counters":{...},
/// "driver_stats":{...},"stack":null|{"top","members":[{"name","kind","master",
/// "master_kind","lowers","bond_mode","active_slave","port_state","mtu"}]}}]}
///
/// A bridge or bond and its ports form a stack: naming any member shows the
/// whole stack (`eth2: port of vmbr0`; `bond0: active-backup, slaves eth2
/// eth3, active eth2`).
#[derive(Debug, Args)]
pub struct ShowArgs {
    /// Interfaces to show (default: all but lo).
    #[arg(value_name = "IFACE")]
    pub interfaces: Vec<String>,
}

#[derive(Serialize)]
struct ShowJson<'a> {
    interfaces: &'a [Interface],
}

pub fn run(global: &Global, args: ShowArgs) -> i32 {
    let mut backend = match super::backend::Backend::select(global) {
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
pub fn highlights(i: &Interface) -> Vec<String> {
    let mut h = Vec::new();
    if let Some(l) = &i.link {
        if let Some(s) = crate::nic::shortfall::shortfall(i)
            && s.slow()
        {
            h.push(format!(
                "link runs at {} Mb/s but {}: check the cable, the switch port and autonegotiation",
                s.speed_mbps,
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
pub fn stack_lines(i: &Interface) -> Vec<String> {
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
pub fn render(i: &Interface) -> String {
    let mut o = String::new();
    let mut line = |s: String| {
        o.push_str(&s);
        o.push('\n');
    };
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
    line(format!("{}: {}", i.name, id.join(", ")));
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
    line(state);
    line(format!(
        "  mtu       {} (device allows {}..{}), txqueuelen {}",
        i.mtu,
        num(i.mtu_min),
        num(i.mtu_max),
        i.txqueuelen
    ));
    for l in stack_lines(i) {
        line(l);
    }
    match &i.link {
        None => line(format!("  link      {NS}")),
        Some(l) => {
            let speed = l
                .speed_mbps
                .map_or("unknown speed".to_string(), |s| format!("{s} Mb/s"));
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
            line(s);
            if let Some(ls) = crate::nic::speed::link_speed(i)
                && !ls.is_physical()
            {
                line(format!("            speed is nominal: {}", ls.basis));
            }
            for (what, modes) in [
                ("supported", &l.supported_modes),
                ("advertised", &l.advertised_modes),
                ("partner", &l.partner_modes),
            ] {
                if !modes.is_empty() {
                    line(format!("            {what}: {}", modes.join(" ")));
                }
            }
        }
    }
    match &i.rings {
        None => line(format!("  rings     {NS}")),
        Some(r) => {
            let mut parts = vec![
                format!("rx {}/{}", num(r.rx), num(r.rx_max)),
                format!("tx {}/{}", num(r.tx), num(r.tx_max)),
            ];
            if r.rx_mini_max.unwrap_or(0) > 0 {
                parts.push(format!("rx-mini {}/{}", num(r.rx_mini), num(r.rx_mini_max)));
            }
            if r.rx_jumbo_max.unwrap_or(0) > 0 {
                parts.push(format!(
                    "rx-jumbo {}/{}",
                    num(r.rx_jumbo),
                    num(r.rx_jumbo_max)
                ));
            }
            line(format!("  rings     {} (current/max)", parts.join(", ")));
        }
    }
    match &i.pause {
        None => line(format!("  pause     {NS}")),
        Some(p) => line(format!(
            "  pause     autoneg {}, rx {}, tx {}",
            onoff(p.autoneg),
            onoff(p.rx),
            onoff(p.tx)
        )),
    }
    match &i.channels {
        None => line(format!("  channels  {NS}")),
        Some(c) => {
            let parts: Vec<String> = [
                ("rx", c.rx, c.rx_max),
                ("tx", c.tx, c.tx_max),
                ("other", c.other, c.other_max),
                ("combined", c.combined, c.combined_max),
            ]
            .iter()
            .filter(|(_, _, m)| m.unwrap_or(0) > 0)
            .map(|(n, v, m)| format!("{n} {}/{}", num(*v), num(*m)))
            .collect();
            line(format!(
                "  channels  {} (current/max)",
                if parts.is_empty() {
                    "none".into()
                } else {
                    parts.join(", ")
                }
            ));
        }
    }
    match &i.coalesce {
        None => line(format!("  coalesce  {NS}")),
        Some(c) => {
            let mut parts = Vec::new();
            for (n, v) in [
                ("rx-usecs", c.rx_usecs),
                ("tx-usecs", c.tx_usecs),
                ("rx-frames", c.rx_frames),
                ("tx-frames", c.tx_frames),
            ] {
                if let Some(v) = v {
                    parts.push(format!("{n} {v}"));
                }
            }
            for (n, v) in [
                ("adaptive-rx", c.adaptive_rx),
                ("adaptive-tx", c.adaptive_tx),
            ] {
                if let Some(v) = v {
                    parts.push(format!("{n} {}", onoff(v)));
                }
            }
            line(format!(
                "  coalesce  {}",
                if parts.is_empty() {
                    "no parameters reported".into()
                } else {
                    parts.join(", ")
                }
            ));
        }
    }
    match &i.features {
        None => line(format!("  features  {NS}")),
        Some(f) => {
            let list = |active: bool| -> Vec<String> {
                f.iter()
                    .filter(|(_, x)| x.active == active)
                    .map(|(n, x)| {
                        if x.fixed {
                            format!("{n}[fixed]")
                        } else {
                            n.clone()
                        }
                    })
                    .collect()
            };
            line(wrap("  features  on: ", &list(true), 100));
            line(wrap("            off: ", &list(false), 100));
        }
    }
    let c = &i.counters;
    line(format!(
        "  rx        {} packets, {}, errors {}, dropped {}, crc {}, frame {}, missed {}, fifo {}",
        c.rx_packets,
        bytes(c.rx_bytes),
        c.rx_errors,
        c.rx_dropped,
        c.rx_crc_errors,
        c.rx_frame_errors,
        c.rx_missed_errors,
        c.rx_fifo_errors
    ));
    line(format!(
        "  tx        {} packets, {}, errors {}, dropped {}, carrier {}, collisions {}",
        c.tx_packets,
        bytes(c.tx_bytes),
        c.tx_errors,
        c.tx_dropped,
        c.tx_carrier_errors,
        c.collisions
    ));
    match &i.driver_stats {
        None => line(format!("  driver statistics {NS}")),
        Some(s) => {
            let nonzero: Vec<String> = s
                .iter()
                .filter(|(_, v)| **v != 0)
                .map(|(k, v)| format!("{k} {v}"))
                .collect();
            line(format!(
                "  driver statistics: {} counters, {} non-zero{}",
                s.len(),
                nonzero.len(),
                if nonzero.is_empty() {
                    String::new()
                } else {
                    format!(": {}", nonzero.join(", "))
                }
            ));
        }
    }
    for h in highlights(i) {
        line(format!("  ! {h}"));
    }
    o
}
