use super::*;

fn s(labels: &[(&str, &str)], value: f64) -> Sample {
    Sample::of(labels, value)
}

/// The files' series of [`series`]: pve1's SSH read of nas, its NFS
/// mount's write, its CIFS mount whose server resolved to nas's address,
/// with that read's share.
fn file_series() -> (Vec<Sample>, Vec<Sample>, Vec<Sample>) {
    let files = vec![
        s(
            &[
                ("host", "pve1"),
                ("instance", "10.71.0.2:9100"),
                ("place", "me@10.71.0.1:22:/srv"),
                ("protocol", "ssh"),
                ("direction", "read"),
            ],
            110e6,
        ),
        s(
            &[
                ("host", "pve1"),
                ("instance", "10.71.0.2:9100"),
                ("place", "/mnt/media"),
                ("protocol", "nfs"),
                ("direction", "write"),
            ],
            95e6,
        ),
        s(
            &[
                ("host", "pve1"),
                ("instance", "10.71.0.2:9100"),
                ("place", "/mnt/backup"),
                ("protocol", "cifs"),
                ("direction", "read"),
            ],
            95e6,
        ),
    ];
    let file_share = vec![s(
        &[
            ("host", "pve1"),
            ("instance", "10.71.0.2:9100"),
            ("place", "/mnt/backup"),
            ("protocol", "cifs"),
            ("direction", "read"),
        ],
        0.76,
    )];
    // The mount's server resolved to an address nas publishes.
    let file_server = vec![s(
        &[
            ("host", "pve1"),
            ("instance", "10.71.0.2:9100"),
            ("place", "/mnt/backup"),
            ("protocol", "cifs"),
            ("address", "192.168.1.10"),
        ],
        1.0,
    )];
    (files, file_share, file_server)
}

/// Two hosts of a lab measuring each other by address, one of them also a
/// peer outside the lab by name, an SSH place and a mount.
fn series() -> Series {
    let (files, file_share, file_server) = file_series();
    let tp = |host: &str, inst: &str, peer: &str, dir: &str, v: f64| {
        s(
            &[
                ("host", host),
                ("instance", inst),
                ("peer", peer),
                ("direction", dir),
            ],
            v,
        )
    };
    Series {
        throughput: vec![
            tp("nas", "10.71.0.1:9100", "10.71.0.2:5201", "upload", 198e6),
            tp("nas", "10.71.0.1:9100", "10.71.0.2:5201", "download", 190e6),
            tp("pve1", "10.71.0.2:9100", "10.71.0.1:5201", "upload", 195e6),
            tp("pve1", "10.71.0.2:9100", "nas.lan:5201", "download", 180e6),
            tp(
                "pve1",
                "10.71.0.2:9100",
                "backup.example:5201",
                "upload",
                50e6,
            ),
            tp("pve1", "10.71.0.2:9100", "gone:5201", "upload", f64::NAN),
        ],
        share: vec![s(
            &[
                ("host", "nas"),
                ("instance", "10.71.0.1:9100"),
                ("peer", "10.71.0.2:5201"),
                ("direction", "upload"),
            ],
            0.198,
        )],
        files,
        file_share,
        file_server,
        peer_address: vec![s(
            &[
                ("host", "pve1"),
                ("instance", "10.71.0.2:9100"),
                ("peer", "nas.lan:5201"),
                ("address", "192.168.1.10"),
            ],
            1.0,
        )],
        own_addresses: vec![s(
            &[
                ("host", "nas"),
                ("instance", "10.71.0.1:9100"),
                ("address", "192.168.1.10"),
                ("iface", "eth1"),
            ],
            1e9,
        )],
    }
}

fn find<'a>(m: &'a Matrix, from: &str, to: &str, protocol: &str) -> &'a Cell {
    m.cells
        .iter()
        .find(|c| c.from == from && c.to == to && c.protocol == protocol)
        .unwrap_or_else(|| panic!("no {from} → {to} {protocol} in {:#?}", m.cells))
}

#[test]
fn ends_join_hosts_by_instance_address_published_address_and_resolved_address() {
    let m = join("http://p", &series(), "host");
    assert_eq!(m.hosts, ["nas", "pve1"]);
    // By the instance's address, both directions in one cell, with the share.
    let c = find(&m, "nas", "pve1", "tcp");
    assert_eq!(
        (c.write, c.read, c.unit),
        (Some(198e6), Some(190e6), "bit/s")
    );
    assert_eq!((c.write_share, c.read_share), (Some(0.198), None));
    assert!(c.to_is_host);
    // By the address the peer's name resolved to, which nas publishes.
    let c = find(&m, "pve1", "nas", "tcp");
    assert_eq!(c.read, Some(180e6));
    // pve1 → nas over tcp came from two peers' names (10.71.0.1 and
    // nas.lan): one cell, the first subject kept, both figures in it.
    assert_eq!(c.write, Some(195e6));
    // The SSH place's host is nas by address.
    let c = find(&m, "pve1", "nas", "ssh");
    assert_eq!(
        (c.read, c.unit, c.subject.as_str()),
        (Some(110e6), "B/s", "me@10.71.0.1:22:/srv")
    );
    // Outside the lab and a mount keep their own names; NaN is no figure.
    let c = find(&m, "pve1", "backup.example:5201", "tcp");
    assert!(!c.to_is_host && c.write == Some(50e6));
    assert!(!find(&m, "pve1", "/mnt/media", "nfs").to_is_host);
    assert!(m.cells.iter().all(|c| c.to != "gone:5201"));
    // A mount whose server resolved to nas's address is nas's column, with
    // its share of the link.
    let c = find(&m, "pve1", "nas", "cifs");
    assert_eq!(
        (c.read, c.read_share, c.subject.as_str()),
        (Some(95e6), Some(0.76), "/mnt/backup")
    );
    assert_eq!(m.cells.len(), 6);
}

#[test]
fn without_the_host_label_rows_are_instances() {
    let m = join("http://p", &series(), "node");
    assert_eq!(m.hosts, ["10.71.0.1:9100", "10.71.0.2:9100"]);
    assert_eq!(
        find(&m, "10.71.0.1:9100", "10.71.0.2:9100", "tcp").write,
        Some(198e6)
    );
}

#[test]
fn hosts_of_peers_and_places() {
    assert_eq!(end_host("10.0.0.2:5201"), "10.0.0.2");
    assert_eq!(end_host("nas"), "nas");
    assert_eq!(end_host("me@nas:22:/srv/media"), "nas");
    assert_eq!(end_host("me@[fd00::2]:22:/srv"), "fd00::2");
    assert_eq!(end_host("[fd00::2]:5201"), "fd00::2");
    assert_eq!(end_host("fd00::2"), "fd00::2");
}

/// The query B (the share) of the shipped dashboard's panel whose title
/// starts with `title`.
fn dashboard_share(title: &str) -> String {
    let d: serde_json::Value =
        serde_json::from_str(include_str!("../../packaging/fleet/hlctl-dashboard.json")).unwrap();
    let panel = d["panels"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["title"].as_str().unwrap_or("").starts_with(title))
        .unwrap_or_else(|| panic!("no panel {title}"));
    panel["targets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["refId"] == "B")
        .unwrap()["expr"]
        .as_str()
        .unwrap()
        .to_string()
}

/// The colour of the shipped dashboard's matrix and file panels and the
/// CLI's shares are one expression each (the matrix panel's for uploads
/// only, the file panel's for the chosen instances).
#[test]
fn the_shares_are_the_dashboards_colours() {
    assert_eq!(
        dashboard_share("Lab transfer matrix").replacen("{direction=\"upload\"}", "", 1),
        SHARE,
        "the dashboard's share and matrix::SHARE differ"
    );
    assert_eq!(
        dashboard_share("File transfers").replacen("{instance=~\"$instance\"}", "", 1),
        FILE_SHARE,
        "the dashboard's file share and matrix::FILE_SHARE differ"
    );
}
