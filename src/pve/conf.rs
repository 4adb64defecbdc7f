//! A VM's config as Proxmox writes it (`/etc/pve/qemu-server/NNN.conf`):
//! `key: value` lines of the current config, then `[snapshot]` sections
//! (ignored here); `#` lines are the VM's description.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The NIC models Proxmox offers (`qm set --netN MODEL=MAC,...`).
const MODELS: &[&str] = &[
    "virtio",
    "e1000",
    "e1000e",
    "e1000-82540em",
    "e1000-82544gc",
    "e1000-82545em",
    "i82551",
    "i82557b",
    "i82559er",
    "ne2k_isa",
    "ne2k_pci",
    "pcnet",
    "rtl8139",
    "vmxnet3",
];

/// One `netM:` line.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct NetLine {
    /// The line as written, for the `qm set` command that changes it.
    pub(crate) line: String,
    pub(crate) model: Option<String>,
    pub(crate) mac: Option<String>,
    pub(crate) bridge: Option<String>,
    pub(crate) queues: Option<u32>,
    /// `mtu=1` is "the bridge's MTU" (virtio only).
    pub(crate) mtu: Option<u32>,
    pub(crate) firewall: bool,
}

impl NetLine {
    fn parse(line: &str) -> NetLine {
        let mut n = NetLine {
            line: line.to_string(),
            ..Default::default()
        };
        for part in line.split(',') {
            let (k, v) = part.split_once('=').unwrap_or((part, ""));
            match k.trim() {
                "model" => n.model = Some(v.to_string()),
                "macaddr" => n.mac = Some(v.to_string()),
                "bridge" => n.bridge = Some(v.to_string()),
                "queues" => n.queues = v.parse().ok(),
                "mtu" => n.mtu = v.parse().ok(),
                "firewall" => n.firewall = v == "1",
                m if MODELS.contains(&m) => {
                    n.model = Some(m.to_string());
                    if !v.is_empty() {
                        n.mac = Some(v.to_string());
                    }
                }
                _ => {}
            }
        }
        n
    }

    /// The line with `key=value` set (replaced where it is, else appended).
    pub(crate) fn with(&self, key: &str, value: &str) -> String {
        let mut parts: Vec<String> = self.line.split(',').map(str::to_string).collect();
        let new = format!("{key}={value}");
        match parts.iter_mut().find(|p| p.split('=').next() == Some(key)) {
            Some(p) => *p = new,
            None => parts.push(new),
        }
        parts.join(",")
    }
}

/// The current config of a VM (its snapshots aside).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct VmConf {
    pub(crate) name: Option<String>,
    pub(crate) cores: Option<u32>,
    pub(crate) sockets: Option<u32>,
    /// Hot-plugged vCPUs in use, when fewer than cores × sockets.
    pub(crate) vcpus_limit: Option<u32>,
    pub(crate) nets: BTreeMap<u32, NetLine>,
}

impl VmConf {
    /// The vCPUs the VM runs: `vcpus` when set, else cores × sockets
    /// (Proxmox's defaults: one each).
    pub(crate) fn vcpus(&self) -> u32 {
        let all = self.cores.unwrap_or(1).max(1) * self.sockets.unwrap_or(1).max(1);
        self.vcpus_limit
            .filter(|&v| v > 0)
            .map_or(all, |v| v.min(all))
    }
}

pub(crate) fn parse(text: &str) -> VmConf {
    let mut c = VmConf::default();
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            break;
        }
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        match key.trim() {
            "name" => c.name = Some(value.to_string()),
            "cores" => c.cores = value.parse().ok(),
            "sockets" => c.sockets = value.parse().ok(),
            "vcpus" => c.vcpus_limit = value.parse().ok(),
            k => {
                if let Some(n) = k.strip_prefix("net").and_then(|n| n.parse::<u32>().ok()) {
                    c.nets.insert(n, NetLine::parse(value));
                }
            }
        }
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONF: &str = "\
#Plex, transcoding
boot: order=scsi0;net0
cores: 4
memory: 8192
name: plex
net0: virtio=BC:24:11:5E:2A:01,bridge=vmbr0,firewall=1
net1: model=e1000,macaddr=BC:24:11:5E:2A:02,bridge=vmbr1,queues=2,mtu=9000
sockets: 2
vcpus: 6

[before-upgrade]
cores: 1
net0: virtio=BC:24:11:5E:2A:09,bridge=vmbr9
";

    #[test]
    fn the_current_config_and_not_its_snapshots() {
        let c = parse(CONF);
        assert_eq!(c.name.as_deref(), Some("plex"));
        assert_eq!(c.vcpus(), 6);
        let n0 = &c.nets[&0];
        assert_eq!(n0.model.as_deref(), Some("virtio"));
        assert_eq!(n0.mac.as_deref(), Some("BC:24:11:5E:2A:01"));
        assert_eq!(n0.bridge.as_deref(), Some("vmbr0"));
        assert!(n0.firewall);
        assert_eq!(n0.queues, None);
        let n1 = &c.nets[&1];
        assert_eq!(n1.model.as_deref(), Some("e1000"));
        assert_eq!(
            (n1.queues, n1.mtu, n1.firewall),
            (Some(2), Some(9000), false)
        );
        assert_eq!(c.nets.len(), 2);
    }

    #[test]
    fn vcpus_default_to_cores_times_sockets() {
        assert_eq!(parse("cores: 4\nsockets: 2\n").vcpus(), 8);
        assert_eq!(parse("memory: 512\n").vcpus(), 1);
        // vcpus above cores × sockets is not what runs.
        assert_eq!(parse("cores: 2\nvcpus: 8\n").vcpus(), 2);
    }

    #[test]
    fn a_key_is_set_where_it_is_or_appended() {
        let n = NetLine::parse("virtio=BC:24:11:5E:2A:01,bridge=vmbr0,queues=1");
        assert_eq!(
            n.with("queues", "4"),
            "virtio=BC:24:11:5E:2A:01,bridge=vmbr0,queues=4"
        );
        assert_eq!(
            n.with("mtu", "1"),
            "virtio=BC:24:11:5E:2A:01,bridge=vmbr0,queues=1,mtu=1"
        );
    }
}
