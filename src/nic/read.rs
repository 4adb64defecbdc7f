//! Snapshot interfaces: rtnetlink for identity, MTU and counters, ethtool
//! netlink for the rest (the SIOCETHTOOL ioctl on kernels without it, behind
//! the same [`Netlink`] methods), the ioctl for driver info and stats.
//! A section the driver does not support stays `None`.

use crate::nic::error::NicError;
use crate::nic::model::{Interface, LinkModes};
use crate::nic::netlink::{Netlink, RtLink};
use crate::nic::validate::mode_speed_duplex;
use crate::nic::{ioctl, stack, stack_find};

fn from_rtlink(l: RtLink) -> Interface {
    Interface {
        name: l.name,
        ifindex: l.ifindex,
        mac: l.mac,
        kind: l.kind,
        physical: l.physical,
        oper_state: l.oper_state,
        admin_up: l.admin_up,
        carrier_changes: l.carrier_changes,
        mtu: l.mtu,
        mtu_min: l.mtu_min,
        mtu_max: l.mtu_max,
        txqueuelen: l.txqueuelen,
        gso_max_size: l.gso_max_size,
        tso_max_size: l.tso_max_size,
        counters: l.counters,
        ..Default::default()
    }
}

/// The kernel's link-mode bitsets mix speeds (`1000baseT/Full`) with
/// capability bits (`Autoneg`, `TP`, `Pause`): keep speeds in the mode lists
/// and move the rest to `capabilities`, as `ethtool` shows them.
fn split_capabilities(mut l: LinkModes) -> LinkModes {
    let is_mode = |m: &String| mode_speed_duplex(m).is_some();
    l.capabilities = l
        .supported_modes
        .iter()
        .filter(|m| !is_mode(m))
        .cloned()
        .collect();
    l.supported_modes.retain(is_mode);
    l.advertised_modes.retain(is_mode);
    l.partner_modes.retain(is_mode);
    l
}

/// Fill the ethtool sections of `iface`.
fn fill(nl: &mut Netlink, iface: &mut Interface) -> Result<(), NicError> {
    let name = iface.name.clone();
    let e = |source| NicError::netlink(&name, source);
    iface.link = nl.link_modes(&name).map_err(e)?.map(split_capabilities);
    iface.rings = nl.rings(&name).map_err(e)?;
    iface.pause = nl.pause(&name).map_err(e)?;
    iface.features = nl.features(&name).map_err(e)?;
    iface.channels = nl.channels(&name).map_err(e)?;
    iface.coalesce = nl.coalesce(&name).map_err(e)?;
    iface.rps = crate::nic::rps::read(&name);
    iface.xps = crate::nic::xps::read(&name);
    iface.irq_affinity = crate::nic::irq_affinity::read(&name);
    let io = |op, source| NicError::Ioctl {
        iface: name.clone(),
        op,
        source,
    };
    if let Some(d) = ioctl::driver_info(&name).map_err(|s| io("driver info", s))? {
        let non_empty = |s: String| (!s.is_empty()).then_some(s);
        iface.driver = non_empty(d.driver);
        iface.driver_version = non_empty(d.version);
        iface.firmware_version = non_empty(d.firmware_version);
        iface.bus_info = non_empty(d.bus_info);
    }
    iface.driver_stats = ioctl::driver_stats(&name).map_err(|s| io("driver statistics", s))?;
    Ok(())
}

/// Everything about one interface.
pub(crate) fn interface(nl: &mut Netlink, name: &str) -> Result<Interface, NicError> {
    let link = nl.link(name).map_err(|e| NicError::netlink(name, e))?;
    let stacked =
        link.relations.master.is_some() || matches!(link.kind.as_deref(), Some("bridge" | "bond"));
    let mut iface = from_rtlink(link);
    fill(nl, &mut iface)?;
    if stacked {
        let all = nl.links().map_err(NicError::Connect)?;
        iface.stack = stack_find::find(&all, name);
    }
    Ok(iface)
}

/// The named interfaces in the order given, or every interface when `names`
/// is empty: physical NICs first, then the rest by ifindex; `lo` only when named.
pub(crate) fn interfaces(nl: &mut Netlink, names: &[String]) -> Result<Vec<Interface>, NicError> {
    if !names.is_empty() {
        return names.iter().map(|n| interface(nl, n)).collect();
    }
    let mut links = nl.links().map_err(NicError::Connect)?;
    links.retain(|l| l.name != "lo");
    let stacks: Vec<(String, Option<stack::Stack>)> = links
        .iter()
        .map(|l| (l.name.clone(), stack_find::find(&links, &l.name)))
        .collect();
    links.sort_by_key(|l| (!l.physical, l.ifindex));
    let mut out = Vec::with_capacity(links.len());
    for l in links {
        let mut iface = from_rtlink(l);
        iface.stack = stacks
            .iter()
            .find(|(n, _)| *n == iface.name)
            .and_then(|(_, s)| s.clone());
        match fill(nl, &mut iface) {
            // It vanished between the dump and the query: skip it.
            Err(NicError::NoSuchInterface { .. }) => continue,
            r => r?,
        }
        out.push(iface);
    }
    Ok(out)
}
