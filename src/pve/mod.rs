//! Proxmox VE's guests behind this host's links: which VM a `tapNNNiM` (and
//! the firewall bridge's `fwbrNNNiM`, `fwprNNNpM`, `fwlnNNNiM`) belongs to,
//! and that VM's `netM:` line from `/etc/pve/qemu-server/NNN.conf` (model,
//! bridge, `queues=`, `mtu=`, `firewall=`) with its vCPU count. Read-only:
//! a VM's configuration is Proxmox's, and hlctl only says what to change.

pub(crate) mod conf;
pub(crate) mod names;

use std::path::Path;

use serde::{Deserialize, Serialize};

pub(crate) use conf::NetLine;
pub(crate) use names::{GuestNic, Role};

/// A link of this host that belongs to a VM, with what its config says.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Guest {
    pub(crate) ifname: String,
    #[serde(flatten)]
    pub(crate) nic: GuestNic,
    /// The VM's config; `None` with `config_error` saying why not.
    pub(crate) vm: Option<VmInfo>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) config_error: Option<String>,
}

/// What a VM's config says about it and about the link's `netM:` line.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct VmInfo {
    pub(crate) name: Option<String>,
    pub(crate) vcpus: u32,
    /// `None`: the config has no such `netM:` line.
    pub(crate) net: Option<NetLine>,
}

/// Where Proxmox keeps the VMs' configs, below `root` (`/` on a live host).
pub(crate) fn config_dir(root: &Path) -> std::path::PathBuf {
    root.join("etc/pve/qemu-server")
}

/// The links among `ifnames` that belong to a VM, each with its VM's config
/// read from below `root`. Nothing when none is named like a guest's.
/// Nothing on a host that is not a Proxmox node (no config directory).
pub(crate) fn guests<'a>(root: &Path, ifnames: impl IntoIterator<Item = &'a str>) -> Vec<Guest> {
    let dir = config_dir(root);
    if !dir.is_dir() {
        return Vec::new();
    }
    ifnames
        .into_iter()
        .filter_map(|ifname| {
            let nic = names::parse(ifname)?;
            let file = dir.join(format!("{}.conf", nic.vmid));
            let vm = std::fs::read_to_string(&file)
                .map_err(|e| format!("{}: {e}", file.display()))
                .map(|text| {
                    let c = conf::parse(&text);
                    VmInfo {
                        name: c.name.clone(),
                        vcpus: c.vcpus(),
                        net: c.nets.get(&nic.net).cloned(),
                    }
                });
            Some(Guest {
                ifname: ifname.to_string(),
                nic,
                config_error: vm.as_ref().err().cloned(),
                vm: vm.ok(),
            })
        })
        .collect()
}
