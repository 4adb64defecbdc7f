//! The page's transfers: this host's row of the host × host × protocol
//! matrix ([`crate::history::transfers`]), raw TCP beside the file
//! protocols, each figure in the unit `hlctl history` prints and with the
//! time it was measured.

use super::esc;
use crate::history::store::{format_ts, format_value};
use crate::history::transfers::{Transfer, lines};

/// The section, or nothing when no transfer is stored.
pub(crate) fn section(t: &[Transfer]) -> String {
    if t.is_empty() {
        return String::new();
    }
    let mut s = String::from(
        "<h2>Transfers by peer and protocol (newest)</h2><table id=\"transfers\"><tr><th>peer or place</th><th>protocol</th><th>read (to this host)</th><th>write (from this host)</th></tr>",
    );
    for l in lines(t) {
        let cell = |x: Option<&Transfer>| {
            x.map_or("<td>–</td>".to_string(), |x| {
                format!(
                    "<td data-ts=\"{}\">{} ({} UTC)</td>",
                    x.ts,
                    esc(&format_value(x.value, &x.unit)),
                    format_ts(x.ts)
                )
            })
        };
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
        let html = section(&newest(&rows()));
        assert_eq!(html.matches("<tr data-subject=").count(), 2, "{html}");
        assert!(html.contains(&format!(
            "<tr data-subject=\"nas\" data-protocol=\"tcp\"><td>nas</td><td>TCP</td><td data-ts=\"100\">938 Mbit/s ({} UTC)</td><td data-ts=\"200\">941 Mbit/s ({} UTC)</td></tr>",
            format_ts(100),
            format_ts(200)
        )), "{html}");
        assert!(html.contains("<td>SSH</td><td data-ts=\"300\">"), "{html}");
        assert_eq!(section(&[]), "");
    }
}
