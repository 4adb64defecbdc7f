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

/// The newest figure of each (place, protocol, direction) in `rows`
/// (`bench file` and check rows, newest first).
pub(super) fn files(f: &mut Families, rows: &[StoredResult]) {
    for t in newest(rows).iter().filter(|t| t.protocol != "tcp") {
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
