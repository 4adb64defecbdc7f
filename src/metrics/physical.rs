//! Whether a link's reported speed is a physical line rate. veth, bridges,
//! tun/tap and paravirtual NICs report a nominal figure (veth says 10000)
//! that says nothing about the wire.
//!
//! MERGE NOTE: issue 10 adds the shared function deciding this; this
//! minimal helper is the one place to point at it.

use crate::nic::model::Interface;

/// Drivers whose speed is nominal even when the device looks physical.
const VIRTUAL_DRIVERS: &[&str] = &[
    "veth",
    "virtio_net",
    "vmxnet3",
    "hv_netvsc",
    "xen_netfront",
    "tun",
    "bridge",
    "bonding",
    "team",
    "macvlan",
    "ipvlan",
    "dummy",
    "vxlan",
];

pub fn speed_is_physical(i: &Interface) -> bool {
    let virtual_driver = i
        .driver
        .as_deref()
        .is_some_and(|d| VIRTUAL_DRIVERS.contains(&d));
    i.physical && i.kind.is_none() && !virtual_driver
}
