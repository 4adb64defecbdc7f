//! The page's transfers: this host's row of the host × host × protocol
//! matrix ([`crate::history::transfers`]), raw TCP beside the file
//! protocols, each figure in the unit `hlctl history` prints and with the
//! time it was measured, coloured by its share of this host's link toward
//! the other end (in bits; a physical speed only) as the shipped Grafana
//! dashboard colours its matrix: red below 50 %, orange below 80 %, green
//! from 80 %.

use std::collections::BTreeMap;

use super::esc;
use crate::history::store::{format_ts, format_value};
use crate::history::transfers::{Transfer, lines};

/// The dashboard's colour steps: below the first red, below the second
/// orange, else green.
const STEPS: [f64; 2] = [0.5, 0.8];

/// The colour class of a share of the link.
fn colour(share: f64) -> &'static str {
    if share < STEPS[0] {
        "share-low"
    } else if share < STEPS[1] {
        "share-mid"
    } else {
        "share-high"
    }
}

/// The cells' colours, for the page's style.
pub(crate) const STYLE: &str =
    ".share-low{background:#f8d7da}.share-mid{background:#fde2b5}.share-high{background:#d4edda}";

/// One figure's cell: its value, when, and its share of `speeds[iface]`
/// (this host's physical link speeds, bit/s) when the row recorded the
/// interface and that link has a physical speed.
fn cell(x: Option<&Transfer>, speeds: &BTreeMap<String, f64>) -> String {
    let Some(x) = x else {
        return "<td>–</td>".to_string();
    };
    let link = x
        .interface
        .as_ref()
        .and_then(|i| speeds.get(i).map(|s| (i, *s)));
    let (class, said) = match link {
        Some((iface, speed)) => {
            let share = x.bps() / speed;
            (
                format!(" class=\"{}\" data-share=\"{share:.4}\"", colour(share)),
                format!(
                    ", {:.0} % of {}'s {}",
                    share * 100.0,
                    esc(iface),
                    esc(&crate::units::bps(speed))
                ),
            )
        }
        None => (String::new(), String::new()),
    };
    format!(
        "<td data-ts=\"{}\"{class}>{} ({} UTC{said})</td>",
        x.ts,
        esc(&format_value(x.value, &x.unit)),
        format_ts(x.ts)
    )
}

/// The section, or nothing when no transfer is stored; `speeds` holds this
/// host's physical link speeds by interface.
pub(crate) fn section(t: &[Transfer], speeds: &BTreeMap<String, f64>) -> String {
    if t.is_empty() {
        return String::new();
    }
    let mut s = String::from(
        "<h2>Transfers by peer and protocol (newest; coloured by the share of this host's link toward the other end: red below 50 %, orange below 80 %, green from 80 %)</h2><table id=\"transfers\"><tr><th>peer or place</th><th>protocol</th><th>read (to this host)</th><th>write (from this host)</th></tr>",
    );
    for l in lines(t) {
        let cell = |x: Option<&Transfer>| cell(x, speeds);
        s += &format!(
            "<tr data-subject=\"{}\" data-protocol=\"{}\"><td>{}</td><td>{}</td>{}{}</tr>",
            esc(l.subject),
            esc(l.protocol),
            esc(l.subject),
            esc(&l.protocol.to_uppercase()),
            cell(l.read),
            cell(l.write)
        );
    }
    s + "</table>"
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::transfers::{newest, tests::rows};

    #[test]
    fn one_row_per_peer_and_protocol_each_direction_in_the_clis_units() {
        let html = section(&newest(&rows()), &BTreeMap::new());
        assert_eq!(html.matches("<tr data-subject=").count(), 2, "{html}");
        assert!(html.contains(&format!(
            "<tr data-subject=\"nas\" data-protocol=\"tcp\"><td>nas</td><td>TCP</td><td data-ts=\"100\">938 Mbit/s ({} UTC)</td><td data-ts=\"200\">941 Mbit/s ({} UTC)</td></tr>",
            format_ts(100),
            format_ts(200)
        )), "{html}");
        assert!(html.contains("<td>SSH</td><td data-ts=\"300\">"), "{html}");
        assert_eq!(section(&[], &BTreeMap::new()), "");
    }

    #[test]
    fn a_figure_over_a_link_with_a_physical_speed_is_coloured_by_its_share() {
        let mut t = newest(&rows());
        // The SSH read (110e6 B/s = 880 Mbit/s) and the TCP write (941 Mbit/s)
        // over eth0 at 1 Gbit/s; the SSH write (60 MB/s: 48 %) too; the
        // TCP read recorded no interface.
        for x in t
            .iter_mut()
            .filter(|x| x.protocol == "ssh" || x.direction == "write")
        {
            x.interface = Some("eth0".into());
        }
        let speeds = BTreeMap::from([("eth0".to_string(), 1e9)]);
        let html = section(&t, &speeds);
        assert!(
            html.contains("class=\"share-high\" data-share=\"0.8800\">104.9 MiB/s ("),
            "{html}"
        );
        assert!(html.contains("UTC, 88 % of eth0's 1.00 Gbit/s)"), "{html}");
        assert!(
            html.contains("class=\"share-low\" data-share=\"0.4800\">"),
            "{html}"
        );
        assert!(
            html.contains("class=\"share-high\" data-share=\"0.9410\">941 Mbit/s"),
            "{html}"
        );
        assert_eq!(html.matches("class=\"share-").count(), 3, "{html}");
        // A link with no physical speed (absent from `speeds`): no colour.
        assert!(!section(&t, &BTreeMap::new()).contains("share-"));
        assert_eq!(colour(0.5), "share-mid");
        assert_eq!(colour(0.8), "share-high");
    }
}
