//! `bench file`'s figures as gauges: per place (`user@host:port:/dir` or a
//! mount's directory), protocol (`ssh`, `nfs`, `cifs`) and direction, the
//! newest one the history holds, and when it was measured. With the check's
//! `hlctl_net_throughput_bps{peer,direction}` (raw TCP) this is this host's
//! row of the host × host × protocol matrix; Prometheus's `instance` is the
//! host.

use super::Families;
use crate::history::StoredResult;
use crate::history::transfers::newest;

/// How many `bench file` rows are read (newest first) for the gauges.
pub(crate) const ROWS: u32 = 200;

/// Help of `hlctl_file_local_link_speed_bps`.
const LOCAL_SPEED_HELP: &str = "Physical speed (bit/s) of this host's link toward the file's server \
     (none when the speed is nominal or the row did not record the interface)";
/// Help of `hlctl_file_server_address`.
const SERVER_ADDRESS_HELP: &str = "Always 1: the address the file's server resolved to, which \
     joins the place to the server's own link (hlctl_address_link_speed_bps)";

/// The newest figure of each (place, protocol, direction) in `rows`
/// (`bench file` and check rows, newest first), with the physical speed of
/// this host's link toward the server (`link_bps` of an interface) and the
/// server's address: the matrix's share of the slower end's link.
pub(super) fn files(
    f: &mut Families,
    rows: &[StoredResult],
    link_bps: &dyn Fn(&str) -> Option<f64>,
) {
    for t in newest(rows).iter().filter(|t| t.protocol != "tcp") {
        let at = [
            ("place", t.subject.as_str()),
            ("protocol", t.protocol.as_str()),
        ];
        if let Some(bps) = t.interface.as_deref().and_then(link_bps) {
            f.set(
                "hlctl_file_local_link_speed_bps",
                LOCAL_SPEED_HELP,
                &at,
                bps,
            );
        }
        if let Some(a) = &t.address {
            let l = [at[0], at[1], ("address", a.as_str())];
            f.set("hlctl_file_server_address", SERVER_ADDRESS_HELP, &l, 1.0);
        }
        let l = [
            ("place", t.subject.as_str()),
            ("protocol", t.protocol.as_str()),
            ("direction", t.direction.as_str()),
        ];
        f.set(
            "hlctl_file_transfer_bytes_per_second",
            "Newest file figure (`hlctl bench file`, or a check's `[check] files`): a file read or written over the protocol, bytes/s",
            &l,
            t.value,
        );
        f.set(
            "hlctl_file_transfer_timestamp_seconds",
            "When that figure was measured (Unix seconds)",
            &l,
            t.ts as f64,
        );
    }
}

#[cfg(test)]
mod tests {
    use crate::history::store::{Metric, file_metric_name};
    use crate::history::transfers::tests::row as file_row;
    use crate::metrics::{Inputs, encode};

    fn row(ts: i64, metrics: Vec<Metric>) -> crate::history::StoredResult {
        file_row(ts, "file", metrics)
    }

    /// Each place, protocol and direction once, from the newest row that
    /// has it; other metrics of the rows give no series.
    #[test]
    fn the_newest_figure_of_each_place_protocol_and_direction() {
        let ssh = "me@nas:22:/srv";
        let m = |name: String, place: &str, v: f64| Metric::new(&name, place, v, "B/s");
        let inp = Inputs {
            files: vec![
                row(300, vec![m(file_metric_name("ssh", "read"), ssh, 110e6)]),
                row(
                    200,
                    vec![
                        m(file_metric_name("ssh", "read"), ssh, 90e6),
                        m(file_metric_name("ssh", "write"), ssh, 60e6),
                        m(file_metric_name("nfs", "read"), "/mnt/media", 117e6),
                        m("disk seq-read".into(), "/mnt/media", 500e6),
                    ],
                ),
            ],
            ..Default::default()
        };
        let text = encode(&inp);
        let mut lines: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with("hlctl_file_transfer_bytes_per_second{"))
            .collect();
        lines.sort();
        assert_eq!(
            lines,
            [
                "hlctl_file_transfer_bytes_per_second{place=\"/mnt/media\",protocol=\"nfs\",direction=\"read\"} 117000000.0",
                "hlctl_file_transfer_bytes_per_second{place=\"me@nas:22:/srv\",protocol=\"ssh\",direction=\"read\"} 110000000.0",
                "hlctl_file_transfer_bytes_per_second{place=\"me@nas:22:/srv\",protocol=\"ssh\",direction=\"write\"} 60000000.0",
            ],
            "{text}"
        );
        assert!(text.contains(
            "hlctl_file_transfer_timestamp_seconds{place=\"me@nas:22:/srv\",protocol=\"ssh\",direction=\"read\"} 300.0"
        ));
    }

    /// A row that recorded its server's address and this host's interface
    /// toward it gives the link's physical speed and the address; one
    /// over a link with no physical speed gives the address only.
    #[test]
    fn a_files_link_speed_and_servers_address_beside_its_figures() {
        let m = |name: String, place: &str| Metric::new(&name, place, 95e6, "B/s");
        let mut cifs = row(300, vec![m(file_metric_name("cifs", "read"), "/mnt/media")]);
        cifs.result = serde_json::json!({"file": {"place": "/mnt/media"},
            "interface": "eth0", "address": "192.168.1.10"});
        let mut ssh = row(
            200,
            vec![m(file_metric_name("ssh", "write"), "me@pve:22:/srv")],
        );
        ssh.result = serde_json::json!({"file": {"place": "me@pve:22:/srv"},
            "interface": "veth0", "address": "10.0.0.2"});
        let mut f = crate::metrics::Families::new();
        super::files(&mut f, &[cifs, ssh], &|i| (i == "eth0").then_some(1e9));
        let text = f.text();
        assert!(
            text.contains("hlctl_file_local_link_speed_bps{place=\"/mnt/media\",protocol=\"cifs\"} 1000000000.0"),
            "{text}"
        );
        assert_eq!(
            text.matches("hlctl_file_local_link_speed_bps{").count(),
            1,
            "{text}"
        );
        assert!(text.contains(
            "hlctl_file_server_address{place=\"/mnt/media\",protocol=\"cifs\",address=\"192.168.1.10\"} 1.0"
        ), "{text}");
        assert!(text.contains(
            "hlctl_file_server_address{place=\"me@pve:22:/srv\",protocol=\"ssh\",address=\"10.0.0.2\"} 1.0"
        ), "{text}");
    }

    #[test]
    fn file_metric_names_round_trip_and_nothing_else_parses() {
        use crate::history::store::parse_file_metric;
        assert_eq!(
            parse_file_metric(&file_metric_name("cifs", "write")),
            Some(("cifs", "write"))
        );
        for other in ["file ssh", "file  read", "net upload", "file ssh sideways"] {
            assert_eq!(parse_file_metric(other), None, "{other}");
        }
    }
}
