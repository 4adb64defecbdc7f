//! `hlctl matrix`: the whole lab's host × host × protocol matrix, from the
//! fleet's Prometheus.

use clap::Args;

use super::exit;
use super::global::Global;
use super::output::{print_json, table};
use crate::matrix::{Cell, Matrix, Server};

/// Print every host's transfers to every other, per protocol, from Prometheus.
///
/// Each host publishes its own row of the matrix in hlctl.prom ([metrics]
/// textfile_dir in hlctl.toml): the last `hlctl check`'s raw TCP to each
/// peer (hlctl_net_throughput_bps) and `hlctl bench file`'s newest SSH, NFS
/// and SMB figures (hlctl_file_transfer_bytes_per_second). node_exporter's
/// textfile collector serves it and Prometheus scrapes every host; this
/// command asks Prometheus's HTTP API (an instant query per series, plain
/// HTTP) and joins the rows: a peer, SSH place or mount whose address or
/// name (a mount: the address its server resolved to) is one of the lab's
/// hosts is shown as that host; anything else (a peer outside the lab, a
/// mount whose server did not resolve) as the row's host names it.
///
/// "read" is toward the row's host (TCP: the peer sends; a file read),
/// "write" away from it. A figure's share of the slower end's physical
/// link speed (a file's in bits) follows it in parentheses, as the shipped
/// Grafana dashboard colours its matrix and file panels.
///
/// Example: hlctl matrix --prometheus http://prometheus.lab:9090
///
/// Exit codes: 0 the matrix was printed; 1 Prometheus could not be read, or
/// holds no hlctl figures; 2 invalid input (a URL that is not http://).
#[derive(Debug, Args)]
pub(crate) struct MatrixArgs {
    /// Prometheus's URL: http://[USER:PASSWORD@]HOST[:PORT][/PATH], or
    /// HOST[:PORT] (port 9090).
    #[arg(long, value_name = "URL", env = "HLCTL_PROMETHEUS")]
    pub(crate) prometheus: String,

    /// The scrape label that names a host (set in Prometheus's scrape
    /// configuration); series without it are named by their `instance`.
    #[arg(long, value_name = "LABEL", default_value = crate::matrix::HOST_LABEL)]
    pub(crate) host_label: String,
}

pub(crate) fn run(global: &Global, args: MatrixArgs) -> i32 {
    let m = match Server::parse(&args.prometheus)
        .and_then(|s| crate::matrix::read(&s, &args.host_label))
    {
        Ok(m) => m,
        Err(e) => return super::fail(&e, e.class().exit_code()),
    };
    if global.json {
        print_json(&m);
    } else if !m.cells.is_empty() {
        print_text(&m);
    }
    if m.cells.is_empty() {
        eprintln!(
            "hlctl: Prometheus at {} holds no hlctl transfer figures ({} or {}): is each host's hlctl.prom scraped (node_exporter --collector.textfile.directory, [metrics] textfile_dir), and has `hlctl check` run there with peers?",
            m.prometheus,
            crate::matrix::THROUGHPUT,
            crate::matrix::FILES
        );
        return exit::FAILED;
    }
    exit::OK
}

fn print_text(m: &Matrix) {
    println!(
        "The lab's transfers, from Prometheus at {}: {} hosts, each one's newest figures.",
        m.prometheus,
        m.hosts.len()
    );
    println!(
        "read: toward the row's host; write: away from it; (%): of the slower end's physical link"
    );
    println!();
    let mut rows = vec![vec![
        "FROM".to_string(),
        "TO".into(),
        "PROTOCOL".into(),
        "READ".into(),
        "WRITE".into(),
    ]];
    for c in &m.cells {
        rows.push(vec![
            c.from.clone(),
            c.to.clone(),
            c.protocol.clone(),
            figure(c, c.read, c.read_share),
            figure(c, c.write, c.write_share),
        ]);
    }
    print!("{}", table(&rows));
}

/// A share this far above the link's speed is no measuring error: the NIC
/// reports a speed it does not keep to (an emulated one).
const BEYOND_LINK: f64 = 1.05;

/// `198 Mbit/s (20 %)`, `110.0 MB/s`, or `-`.
fn figure(c: &Cell, v: Option<f64>, share: Option<f64>) -> String {
    let Some(v) = v else {
        return "-".into();
    };
    let fig = if c.unit == "B/s" {
        format!("{:.1} MB/s", v / 1e6)
    } else {
        crate::units::bps(v)
    };
    match share {
        // An emulated NIC's nominal speed, beaten: said, not hidden.
        Some(s) if s > BEYOND_LINK => {
            format!(
                "{fig} ({:.0} %: beyond the link's speed, emulated?)",
                s * 100.0
            )
        }
        Some(s) => format!("{fig} ({:.0} %)", s * 100.0),
        None => fig,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(unit: &'static str) -> Cell {
        Cell {
            from: "pve1".into(),
            to: "vm".into(),
            to_is_host: true,
            protocol: "tcp".into(),
            subject: "vm:5201".into(),
            read: None,
            write: None,
            unit,
            read_share: None,
            write_share: None,
        }
    }

    #[test]
    fn figures_in_the_clis_units_with_the_share_said() {
        let tcp = cell("bit/s");
        assert_eq!(figure(&tcp, Some(968e6), Some(0.968)), "968 Mbit/s (97 %)");
        assert_eq!(
            figure(&tcp, Some(2.14e9), Some(2.14)),
            "2.14 Gbit/s (214 %: beyond the link's speed, emulated?)"
        );
        assert_eq!(figure(&tcp, None, None), "-");
        assert_eq!(figure(&cell("B/s"), Some(110.04e6), None), "110.0 MB/s");
    }
}
