//! A Proxmox node's VMs, seen from the host: what a guest cannot see about
//! its own NIC. A virtio NIC with fewer queues than the VM's vCPUs (one
//! queue means one vCPU does the guest's receive work), a tap whose MTU is
//! below its bridge's, the firewall bridge's extra hop. The fixes are
//! Proxmox's (`qm set`): hlctl never writes a VM's config.

use super::finding::{Finding, Outcome, Severity};
use super::inputs::{GuestLink, Inputs};
use crate::pve::{NetLine, Role, VmInfo};

/// Proxmox's limit on `queues=`.
const MAX_QUEUES: u32 = 64;

fn who(g: &GuestLink, vm: &VmInfo) -> String {
    let n = &g.guest.nic;
    match &vm.name {
        Some(name) => format!("VM {} ({name}) net{}", n.vmid, n.net),
        None => format!("VM {} net{}", n.vmid, n.net),
    }
}

fn qm_set(g: &GuestLink, line: String) -> String {
    format!(
        "# qm set {} --net{} {line}",
        g.guest.nic.vmid, g.guest.nic.net
    )
}

/// The queues the running VM opened on its tap (host side), when one runs.
fn running_queues(g: &GuestLink) -> Option<u32> {
    g.tap_queues.filter(|&n| n > 0)
}

fn queues(g: &GuestLink, vm: &VmInfo, net: &NetLine) -> Option<Finding> {
    let have = net.queues.unwrap_or(1).max(1);
    let want = vm.vcpus.min(MAX_QUEUES);
    (net.model.as_deref() == Some("virtio") && have < want).then(|| {
        let f = Finding::new(
            "vm-nic-queues",
            Severity::Warning,
            Some(&g.guest.ifname),
            format!("{}: its virtio NIC has {have} queue(s) for {} vCPUs", who(g, vm), vm.vcpus),
        )
        .evidence("netM line", &net.line)
        .evidence("vCPUs", vm.vcpus);
        match running_queues(g) {
            Some(n) => f.evidence("queues the tap carries (host side)", n),
            None => f,
        }
        .why("one queue means one vCPU does all of the guest's receive work; with a queue per vCPU they share it (and the guest's RSS spreads the flows)")
        .fix(qm_set(g, net.with("queues", &want.to_string())))
    })
}

/// The guest uses another number of queues than its config gives: qemu
/// opens them all on the tap, but a queue the guest's driver has not
/// enabled stays detached there, so the host's tap carries only the ones
/// in use (or the VM runs with the config it was started with).
fn queues_in_effect(g: &GuestLink, vm: &VmInfo, net: &NetLine) -> Option<Finding> {
    let conf = net.queues.unwrap_or(1).max(1);
    let running = running_queues(g)?;
    (net.model.as_deref() == Some("virtio") && running != conf).then(|| {
        Finding::new(
            "vm-nic-queues-not-in-effect",
            Severity::Info,
            Some(&g.guest.ifname),
            format!(
                "{}: its config gives {conf} queue(s), the guest uses {running}",
                who(g, vm)
            ),
        )
        .evidence("netM line", &net.line)
        .evidence("queues the tap carries (host side)", running)
        .why("a queue the guest has not enabled does no work: a Linux guest enables up to its vCPUs at boot; a VM started before the config changed runs with the old count until it restarts")
        .fix(format!(
            "# in VM {}: ethtool -L <its NIC> combined {conf}; or, if net{} changed since it started: qm reboot {}",
            g.guest.nic.vmid, g.guest.nic.net, g.guest.nic.vmid
        ))
    })
}

fn mtu(g: &GuestLink, vm: &VmInfo, net: &NetLine) -> Option<Finding> {
    let (Some(tap), Some((bridge, bmtu))) = (g.mtu, g.bridge.as_ref()) else {
        return None;
    };
    (tap < *bmtu).then(|| {
        let f = Finding::new(
            "vm-tap-mtu-below-bridge",
            Severity::Warning,
            Some(&g.guest.ifname),
            format!("{}: tap MTU {tap} below {bridge}'s {bmtu}", who(g, vm)),
        )
        .evidence("tap mtu", tap)
        .evidence(&format!("{bridge} mtu"), bmtu)
        .why("the guest's packets are cut to the tap's MTU: the bridge's jumbo frames stop at this VM");
        if net.model.as_deref() == Some("virtio") {
            f.fix(qm_set(g, net.with("mtu", "1")) + "   (mtu=1: the bridge's MTU)")
        } else {
            f.fix(format!(
                "# give VM {} a virtio NIC on net{}: only virtio takes the bridge's MTU (mtu=1)",
                g.guest.nic.vmid, g.guest.nic.net
            ))
        }
    })
}

fn firewall(g: &GuestLink, vm: &VmInfo, net: &NetLine) -> Option<Finding> {
    let n = &g.guest.nic;
    net.firewall.then(|| {
        Finding::new(
            "vm-firewall-hop",
            Severity::Info,
            Some(&g.guest.ifname),
            format!("{}: the firewall bridge adds a hop to this VM's path", who(g, vm)),
        )
        .evidence(
            "path",
            format!(
                "tap{v}i{m} → fwbr{v}i{m} → fwpr{v}p{m}/fwln{v}i{m} → {}",
                net.bridge.as_deref().unwrap_or("?"),
                v = n.vmid,
                m = n.net
            ),
        )
        .why("every packet crosses one more bridge and a veth pair, and is filtered: a cost on a CPU-bound host")
        .fix(qm_set(g, net.with("firewall", "0")) + "   (only when the VM needs no Proxmox firewall)")
    })
}

pub(crate) fn check(inp: &Inputs, out: &mut Outcome) {
    for g in inp.guests.iter().filter(|g| g.guest.nic.role == Role::Tap) {
        let iface = Some(g.guest.ifname.as_str());
        let Some(vm) = &g.guest.vm else {
            let why = g.guest.config_error.clone().unwrap_or_default();
            out.skip("vm-nic", iface, why);
            continue;
        };
        let Some(net) = &vm.net else {
            out.skip(
                "vm-nic",
                iface,
                format!("{} has no such line in its config", who(g, vm)),
            );
            continue;
        };
        let found: Vec<Finding> = [
            queues(g, vm, net),
            queues_in_effect(g, vm, net),
            mtu(g, vm, net),
            firewall(g, vm, net),
        ]
        .into_iter()
        .flatten()
        .collect();
        if found.is_empty() {
            out.pass(
                "vm-nic",
                iface,
                format!(
                    "{}: {}, {} queue(s) for {} vCPUs, MTU as its bridge",
                    who(g, vm),
                    net.model.as_deref().unwrap_or("?"),
                    net.queues.unwrap_or(1),
                    vm.vcpus
                ),
            );
        }
        out.findings.extend(found);
    }
}
