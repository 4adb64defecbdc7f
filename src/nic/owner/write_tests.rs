//! Persisting through the owners, end to end on files under a temp root:
//! [`super::write`] with [`super::edit_ifupdown`] and [`super::edit_networkd`].

mod ifupdown {
    use std::path::Path;

    use crate::nic::model::ChangeSet;
    use crate::nic::owner::{Roots, placed, write};

    const PVE: &str = "auto lo\niface lo inet loopback\n\niface enp1s0 inet manual\n\nauto vmbr0\niface vmbr0 inet static\n\taddress 192.168.1.10/24\n\tgateway 192.168.1.1\n\tbridge-ports enp1s0\n\tbridge-stp off\n\tbridge-fd 0\n\tgro-offload on\n\nsource /etc/network/interfaces.d/*\n";

    fn roots(dir: &Path) -> Roots {
        let r = Roots::new(&crate::paths::Paths::under(dir));
        std::fs::create_dir_all(r.at("/etc/network/interfaces.d")).unwrap();
        std::fs::create_dir_all(r.at("/usr/share/ifupdown2")).unwrap();
        std::fs::write(r.interfaces(), PVE).unwrap();
        r
    }

    fn cs(mtu: u32, gro: Option<bool>, ring: Option<u32>) -> ChangeSet {
        let mut c = ChangeSet {
            mtu: Some(mtu),
            ..Default::default()
        };
        if let Some(g) = gro {
            c.features.insert("rx-gro".into(), g);
        }
        if let Some(r) = ring {
            c.rings = Some(crate::nic::model::RingsSet {
                rx: Some(r),
                ..Default::default()
            });
        }
        c
    }

    #[test]
    fn mtu_goes_into_the_stanza_and_undo_restores_the_file_byte_for_byte() {
        let dir = tempfile::tempdir().unwrap();
        let r = roots(dir.path());
        let placed = write::persist(&r, "vmbr0", 7, &cs(9000, Some(false), Some(4096))).unwrap();
        let text = std::fs::read_to_string(r.interfaces()).unwrap();
        assert!(
            text.contains("\tgro-offload off\n\tmtu 9000\n\nsource"),
            "{text}"
        );
        assert!(
            !text.contains("ring"),
            "ifupdown2 has no ring option: {text}"
        );
        assert_eq!(placed.len(), 2);
        assert_eq!(placed[0].key, "mtu");
        assert_eq!(placed[0].before, None);
        assert_eq!(placed[1].before.as_deref(), Some("on"));
        assert_eq!(placed[1].file, "/etc/network/interfaces");
        // The port's stanza has no mtu line either: ifreload would reset it too.
        let port = write::persist(&r, "enp1s0", 6, &cs(9000, None, None)).unwrap();
        assert!(
            std::fs::read_to_string(r.interfaces())
                .unwrap()
                .contains("iface enp1s0 inet manual\n\tmtu 9000\n")
        );
        let backups = std::fs::read_dir(&r.backup_dir).unwrap().count();
        assert!(backups >= 1, "a copy of the file before the edit is kept");
        write::undo(&r, "enp1s0", &port).unwrap();
        write::undo(&r, "vmbr0", &placed).unwrap();
        assert_eq!(std::fs::read_to_string(r.interfaces()).unwrap(), PVE);
    }

    #[test]
    fn classic_ifupdown_gets_only_lines_it_already_has_and_others_are_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let r = roots(dir.path());
        std::fs::remove_dir(r.at("/usr/share/ifupdown2")).unwrap();
        assert!(
            write::persist(&r, "vmbr0", 7, &cs(9000, None, None))
                .unwrap()
                .is_empty()
        );
        assert_eq!(std::fs::read_to_string(r.interfaces()).unwrap(), PVE);
        assert!(
            write::persist(&r, "eth9", 9, &cs(9000, None, None))
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn writing_again_keeps_the_first_before_and_restore_goes_back_a_step() {
        let dir = tempfile::tempdir().unwrap();
        let r = roots(dir.path());
        let mut list = write::persist(&r, "vmbr0", 7, &cs(9000, None, None)).unwrap();
        let earlier = list.clone();
        let again = write::persist(&r, "vmbr0", 7, &cs(4000, None, None)).unwrap();
        assert_eq!(again[0].before.as_deref(), Some("9000"));
        placed::merge(&mut list, &again);
        assert_eq!(
            (list[0].value.as_str(), list[0].before.as_deref()),
            ("4000", None)
        );
        write::restore(&r, "vmbr0", &list, &earlier).unwrap();
        assert!(
            std::fs::read_to_string(r.interfaces())
                .unwrap()
                .contains("\tmtu 9000\n")
        );
        write::undo(&r, "vmbr0", &earlier).unwrap();
        assert_eq!(std::fs::read_to_string(r.interfaces()).unwrap(), PVE);
    }
}

mod networkd {
    use std::path::Path;

    use crate::nic::model::{ChangeSet, RingsSet};
    use crate::nic::owner::{Roots, networkd, write};

    fn roots(dir: &Path) -> Roots {
        Roots {
            root: dir.to_path_buf(),
            backup_dir: dir.join("backup"),
            tools: false,
            managed_ns: true,
        }
    }

    fn write_file(r: &Roots, path: &str, text: &str) {
        let p = r.at(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    /// A link netplan rendered for networkd with `mtu: 9000` and
    /// `tcp-segmentation-offload: true` (netplan 0.106's output, trimmed).
    fn netplan_link(r: &Roots, link_match: &str) {
        write_file(
            r,
            "/run/systemd/netif/links/2",
            "ADMIN_STATE=configured\nNETWORK_FILE=/run/systemd/network/10-netplan-eth0.network\n",
        );
        write_file(
            r,
            "/run/udev/data/n2",
            "E:ID_NET_LINK_FILE=/run/systemd/network/10-netplan-eth0.link\n",
        );
        write_file(
            r,
            "/run/systemd/network/10-netplan-eth0.network",
            "[Match]\nName=eth0\n\n[Link]\nMTUBytes=9000\n\n[Network]\nDHCP=ipv4\n",
        );
        write_file(
            r,
            "/run/systemd/network/10-netplan-eth0.link",
            &format!(
                "[Match]\n{link_match}\n\n[Link]\nWakeOnLan=off\nTCPSegmentationOffload=true\nMTUBytes=9000\n"
            ),
        );
    }

    fn cs() -> ChangeSet {
        let mut c = ChangeSet {
            mtu: Some(1400),
            rings: Some(RingsSet {
                rx: Some(512),
                ..Default::default()
            }),
            ..Default::default()
        };
        for f in ["tx-tcp-segmentation", "tx-tcp6-segmentation"] {
            c.features.insert(f.into(), false);
        }
        c
    }

    #[test]
    fn owned_settings_go_into_dropins_and_undo_removes_them() {
        let dir = tempfile::tempdir().unwrap();
        let r = roots(dir.path());
        netplan_link(&r, "OriginalName=eth0");
        let placed = write::persist(&r, "eth0", 2, &cs()).unwrap();
        let net = std::fs::read_to_string(
            r.at("/etc/systemd/network/10-netplan-eth0.network.d/90-hlctl.conf"),
        )
        .unwrap();
        assert!(net.ends_with("[Link]\nMTUBytes=1400\n"), "{net}");
        let link = std::fs::read_to_string(
            r.at("/etc/systemd/network/10-netplan-eth0.link.d/90-hlctl.conf"),
        )
        .unwrap();
        assert!(
            link.ends_with("[Link]\nMTUBytes=1400\nTCPSegmentationOffload=no\n"),
            "{link}"
        );
        assert!(
            !link.contains("RxBufferSize"),
            "the .link file sets no ring: hlctl keeps it"
        );
        assert_eq!(placed.len(), 3);
        // What networkd reads now is the drop-in's value.
        assert_eq!(
            networkd::link_keys(&r, "/run/systemd/network/10-netplan-eth0.link")["MTUBytes"],
            "1400"
        );
        write::undo(&r, "eth0", &placed).unwrap();
        assert!(!r.at("/etc/systemd/network/10-netplan-eth0.link.d").exists());
        assert!(
            !r.at("/etc/systemd/network/10-netplan-eth0.network.d")
                .exists()
        );
    }

    #[test]
    fn a_file_for_many_devices_is_refused_and_nothing_is_left_behind() {
        let dir = tempfile::tempdir().unwrap();
        let r = roots(dir.path());
        netplan_link(&r, "OriginalName=*");
        let e = write::persist(&r, "eth0", 2, &cs())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("10-netplan-eth0.link: matches more than one device"),
            "{e}"
        );
        assert!(e.contains("MTUBytes=1400 TCPSegmentationOffload=no"), "{e}");
        assert!(
            !r.at("/etc/systemd/network/10-netplan-eth0.network.d/90-hlctl.conf")
                .exists(),
            "the .network drop-in written first was undone"
        );
    }
}

/// Issue 38: four copies of set_back (and two of undo) dispatched by a match
/// in `write::restore`; one [`crate::nic::owner::writer::Writer`] per
/// manager now, and every manager's keys go back through exactly one.
mod writers {
    use crate::nic::owner::{Manager, write};

    #[test]
    fn every_manager_has_exactly_one_writer() {
        use Manager::*;
        let all = [
            NetworkManager,
            Networkd,
            LinkFile,
            Ifupdown2,
            Ifupdown,
            Netplan,
        ];
        for m in all {
            // A new manager fails to compile here until it is listed.
            match m {
                NetworkManager | Networkd | LinkFile | Ifupdown2 | Ifupdown | Netplan => {}
            }
            assert_eq!(write::writers_of(m), 1, "{m:?}");
        }
    }
}
