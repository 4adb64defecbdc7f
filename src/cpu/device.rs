//! What names a network device's interrupt vectors, read from sysfs: its
//! virtio device, its driver and the MSI IRQs of its PCI function.

use std::path::Path;

use super::interrupts::DeviceIds;

fn link_name(p: &Path) -> Option<String> {
    Some(
        std::fs::read_link(p)
            .ok()?
            .file_name()?
            .to_string_lossy()
            .into_owned(),
    )
}

fn msi_irqs(dir: &Path) -> Vec<u32> {
    let Ok(d) = std::fs::read_dir(dir.join("msi_irqs")) else {
        return Vec::new();
    };
    let mut v: Vec<u32> = d
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect();
    v.sort_unstable();
    v
}

/// The ids of `ifname` under `sys` (`/sys` on the host; a test's tree).
/// A virtual device (veth, bridge) has no `device` link: only its name.
pub(crate) fn ids_under(sys: &Path, ifname: &str) -> DeviceIds {
    let dev = sys.join("class/net").join(ifname).join("device");
    let own = link_name(&dev);
    let virtio = own.filter(|n| n.starts_with("virtio"));
    // A virtio NIC's vectors are its PCI parent's.
    let pci = if virtio.is_some() {
        dev.join("..")
    } else {
        dev.clone()
    };
    DeviceIds {
        ifname: ifname.to_string(),
        driver: link_name(&dev.join("driver")),
        msi_irqs: msi_irqs(&pci),
        virtio,
    }
}

pub(crate) fn ids(ifname: &str) -> DeviceIds {
    ids_under(Path::new("/sys"), ifname)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_hosts_devices_and_a_missing_one() {
        let lo = ids("lo");
        assert_eq!((lo.virtio, lo.driver, lo.msi_irqs.len()), (None, None, 0));
        let none = ids("hlctl-no-such-if");
        assert_eq!(none.ifname, "hlctl-no-such-if");
        // Whatever NIC this host has: a virtio one names its virtio device
        // and the IRQs of its PCI function, as sysfs links them.
        for e in std::fs::read_dir("/sys/class/net").unwrap() {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            let d = ids(&name);
            let link = std::fs::read_link(format!("/sys/class/net/{name}/device")).ok();
            let base = link
                .as_ref()
                .and_then(|l| l.file_name())
                .map(|f| f.to_string_lossy().into_owned());
            assert_eq!(
                d.virtio.is_some(),
                base.is_some_and(|b| b.starts_with("virtio")),
                "{name}"
            );
        }
    }
}
