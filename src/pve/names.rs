//! The names Proxmox gives a VM's links on the host: `tap101i0` (the VM's
//! net0), and with its firewall on `fwbr101i0` (the firewall bridge),
//! `fwpr101p0` and `fwln101i0` (the veth pair between it and the bridge
//! the VM is on).

use serde::{Deserialize, Serialize};

/// Which of a VM's links it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Role {
    Tap,
    FirewallBridge,
    FirewallPort,
    FirewallLink,
}

/// The VM and the `netM` a link belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct GuestNic {
    pub(crate) vmid: u32,
    pub(crate) net: u32,
    pub(crate) role: Role,
}

/// `tap101i0` → VM 101, net0, its tap; `None` for a name no guest link has.
pub(crate) fn parse(ifname: &str) -> Option<GuestNic> {
    const PREFIXES: [(&str, char, Role); 4] = [
        ("tap", 'i', Role::Tap),
        ("fwbr", 'i', Role::FirewallBridge),
        ("fwpr", 'p', Role::FirewallPort),
        ("fwln", 'i', Role::FirewallLink),
    ];
    PREFIXES.iter().find_map(|&(prefix, sep, role)| {
        let (vmid, net) = ifname.strip_prefix(prefix)?.split_once(sep)?;
        let number = |s: &str| {
            (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
                .then(|| s.parse::<u32>().ok())
                .flatten()
        };
        Some(GuestNic {
            vmid: number(vmid)?,
            net: number(net)?,
            role,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guest_links_and_others() {
        let p = |n: &str| parse(n).map(|g| (g.vmid, g.net, g.role));
        assert_eq!(p("tap101i0"), Some((101, 0, Role::Tap)));
        assert_eq!(p("fwbr102i1"), Some((102, 1, Role::FirewallBridge)));
        assert_eq!(p("fwpr102p1"), Some((102, 1, Role::FirewallPort)));
        assert_eq!(p("fwln102i1"), Some((102, 1, Role::FirewallLink)));
        for other in [
            "tap0",
            "tapi0",
            "tap101i",
            "tap101x0",
            "vmbr0",
            "fwpr102i1",
            "tap1a1i0",
            "eth0",
        ] {
            assert_eq!(parse(other), None, "{other}");
        }
    }
}
