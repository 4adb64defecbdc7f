//! Text output in iperf3's style: interval lines and the end summary.

use std::fmt::Write;

use super::figures::{IntervalSample, Side, StreamInterval};
use super::params::{Protocol, TestDirection};
use super::stream::Role;
use super::summary::{DirectionSummary, NetReport};

/// A number with 3 significant digits, as iperf3's `unit_snprintf` prints it.
fn num(v: f64) -> String {
    if v < 9.995 {
        format!("{v:4.2}")
    } else if v < 99.95 {
        format!("{v:4.1}")
    } else {
        format!("{v:4.0}")
    }
}

/// Bytes in base-2 units: "3.20 GBytes".
pub(crate) fn bytes(b: u64) -> String {
    let units = ["Bytes", "KBytes", "MBytes", "GBytes", "TBytes"];
    let mut v = b as f64;
    let mut i = 0;
    while v >= 1024.0 * 0.9995 && i + 1 < units.len() {
        v /= 1024.0;
        i += 1;
    }
    if i == 0 {
        format!("{b:4} {}", units[0])
    } else {
        format!("{} {}", num(v), units[i])
    }
}

/// Bit rate in base-10 units: "27.5 Gbits/sec".
pub(crate) fn rate(bps: f64) -> String {
    let units = [
        "bits/sec",
        "Kbits/sec",
        "Mbits/sec",
        "Gbits/sec",
        "Tbits/sec",
    ];
    let mut v = bps;
    let mut i = 0;
    while v >= 1000.0 * 0.9995 && i + 1 < units.len() {
        v /= 1000.0;
        i += 1;
    }
    format!("{} {}", num(v), units[i])
}

/// "[  1]", "[SUM]", with "[TX-C]"/"[RX-C]" (or "-S") for bidir.
fn tag(id: Option<u32>, role: Role, side: Side, bidir: bool) -> String {
    let mut t = match id {
        Some(id) => format!("[{id:>3}]"),
        None => "[SUM]".to_string(),
    };
    if bidir {
        let dir = if role == Role::Send { "TX" } else { "RX" };
        let who = if side == Side::Client { "C" } else { "S" };
        t.push_str(&format!("[{dir}-{who}]"));
    }
    t
}

/// The column header above interval lines.
pub(crate) fn header(protocol: Protocol, local_sends: bool) -> String {
    match (protocol, local_sends) {
        (Protocol::Tcp, true) => {
            "[ ID] Interval           Transfer     Bitrate         Retr  Cwnd".into()
        }
        (Protocol::Tcp, false) => "[ ID] Interval           Transfer     Bitrate".into(),
        (Protocol::Udp, true) => {
            "[ ID] Interval           Transfer     Bitrate         Total Datagrams".into()
        }
        (Protocol::Udp, false) => {
            "[ ID] Interval           Transfer     Bitrate         Jitter    Lost/Total Datagrams"
                .into()
        }
    }
}

/// The column header above the end's sender and receiver lines (iperf3's).
fn summary_header(r: &NetReport) -> String {
    let retransmits =
        r.main.retransmits.is_some() || r.reverse.as_ref().is_some_and(|d| d.retransmits.is_some());
    match r.protocol {
        Protocol::Udp => header(Protocol::Udp, false),
        Protocol::Tcp if retransmits => {
            "[ ID] Interval           Transfer     Bitrate         Retr".into()
        }
        Protocol::Tcp => header(Protocol::Tcp, false),
    }
}

fn interval_line(tag: &str, start: f64, end: f64, s: &StreamInterval, omitted: bool) -> String {
    let mut line = format!(
        "{tag} {start:6.2}-{end:<6.2} sec  {}  {}",
        bytes(s.bytes),
        rate(s.bps)
    );
    match (s.role, s.retransmits, s.packets) {
        (Role::Send, Some(r), _) => {
            let _ = write!(line, "  {r:4}");
            if let Some(c) = s.snd_cwnd {
                let _ = write!(line, "   {}", bytes(c));
            }
        }
        (Role::Send, None, Some(p)) => {
            let _ = write!(line, "  {p}");
        }
        (Role::Recv, _, Some(p)) => {
            let lost = s.lost.unwrap_or(0).max(0) as u64;
            let pct = if p > 0 {
                100.0 * lost as f64 / p as f64
            } else {
                0.0
            };
            let _ = write!(
                line,
                "  {:.3} ms  {lost}/{p} ({pct:.2}%)",
                s.jitter_ms.unwrap_or(0.0)
            );
        }
        _ => {}
    }
    if omitted {
        line.push_str("  (omitted)");
    }
    line
}

/// The lines of one interval: each stream, plus a SUM line per direction
/// when there are several streams.
pub(crate) fn interval_lines(
    sample: &IntervalSample,
    side: Side,
    direction: TestDirection,
) -> String {
    let bidir = direction == TestDirection::Bidir;
    let mut lines = Vec::new();
    for role in [Role::Send, Role::Recv] {
        let mine: Vec<&StreamInterval> = sample.streams.iter().filter(|s| s.role == role).collect();
        if mine.is_empty() {
            continue;
        }
        for s in &mine {
            lines.push(interval_line(
                &tag(Some(s.id), role, side, bidir),
                sample.start_s,
                sample.end_s,
                s,
                sample.omitted,
            ));
        }
        if mine.len() > 1 {
            let total = StreamInterval::sum(role, &mine);
            lines.push(interval_line(
                &tag(None, role, side, bidir),
                sample.start_s,
                sample.end_s,
                &total,
                sample.omitted,
            ));
        }
    }
    lines.join("\n")
}

/// A percentage as C's `%.2g` prints it (iperf3's lost share): "0", "0.5", "12".
fn pct2g(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return "0".into();
    }
    let digits = (1 - v.abs().log10().floor() as i32).max(0) as usize;
    let s = format!("{v:.digits$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// The end's `sender` and `receiver` lines of one direction, in iperf3's
/// columns (`[SUM]   0.00-10.00  sec  1.09 GBytes   939 Mbits/sec    0             sender`),
/// then hlctl's own lines (RTT, cwnd, reordering).
fn summary_block(out: &mut String, r: &NetReport, d: &DirectionSummary, label: &str) {
    let udp = r.protocol == Protocol::Udp;
    let line = |secs: f64, b: u64, bps: f64| {
        format!(
            "{label} {:6.2}-{:<6.2} sec  {}  {}",
            0.0,
            secs,
            bytes(b),
            rate(bps)
        )
    };
    let mut sender = line(d.sender_duration_s, d.sent_bytes, d.sent_bps);
    let mut receiver = line(d.receiver_duration_s, d.received_bytes, d.received_bps);
    if udp {
        let packets = d.packets.unwrap_or(0);
        let _ = write!(sender, "  {:5.3} ms  0/{packets} (0%)  sender", 0.0);
        let jitter = d.jitter_ms.unwrap_or(0.0);
        // Losses a peer before 3.21 could not split from the omit period's
        // are "Unknown", as 3.21 prints them.
        let _ = match d.lost_packets {
            Some(lost) => write!(
                receiver,
                "  {jitter:5.3} ms  {lost}/{packets} ({}%)  receiver",
                pct2g(d.lost_percent.unwrap_or(0.0))
            ),
            None => write!(receiver, "  {jitter:5.3} ms  Unknown/{packets}  receiver"),
        };
    } else {
        match d.retransmits {
            Some(rt) => {
                let _ = write!(sender, "  {rt:3}             sender");
            }
            None => sender.push_str("                  sender"),
        }
        receiver.push_str("                  receiver");
    }
    let _ = writeln!(out, "{sender}");
    let _ = writeln!(out, "{receiver}");
    if let Some(rtt) = d.rtt_ms {
        let _ = writeln!(
            out,
            "{label} RTT min/mean/max {:.3}/{:.3}/{:.3} ms",
            rtt.min, rtt.mean, rtt.max
        );
    }
    if let Some(c) = d.max_snd_cwnd_bytes {
        let _ = writeln!(out, "{label} max cwnd {}", bytes(c));
    }
    if let Some(o) = d.out_of_order.filter(|&o| o > 0) {
        let _ = writeln!(out, "{label} {o} datagrams received out of order");
    }
}

/// The end summary: sender and receiver lines, RTT, CPU.
pub(crate) fn summary(r: &NetReport) -> String {
    let mut out = String::new();
    out.push_str("- - - - - - - - - - - - - - - - - - - - - - - - -\n");
    out.push_str(&summary_header(r));
    out.push('\n');
    match &r.reverse {
        None => summary_block(&mut out, r, &r.main, "[SUM]"),
        Some(rev) => {
            let (fw, bw) = if r.side == "client" {
                ("[SUM][TX-C]", "[SUM][RX-C]")
            } else {
                ("[SUM][RX-S]", "[SUM][TX-S]")
            };
            summary_block(&mut out, r, &r.main, fw);
            summary_block(&mut out, r, rev, bw);
        }
    }
    let c = &r.cpu;
    let _ = writeln!(
        out,
        "CPU Utilization: local {:.1}% ({:.1}%u/{:.1}%s), remote {:.1}% ({:.1}%u/{:.1}%s)",
        c.local_percent,
        c.local_user_percent,
        c.local_system_percent,
        c.remote_percent,
        c.remote_user_percent,
        c.remote_system_percent
    );
    if let Some(cc) = &r.congestion {
        let _ = writeln!(
            out,
            "TCP congestion control: local {cc}, remote {}",
            r.remote_congestion.as_deref().unwrap_or("?")
        );
    }
    if let Some(line) = &r.cores_line {
        let _ = writeln!(out, "{line}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_like_iperf3() {
        assert_eq!(bytes(3_435_973_837), "3.20 GBytes");
        assert_eq!(bytes(625_000_000), " 596 MBytes");
        assert_eq!(bytes(10), "  10 Bytes");
        assert_eq!(rate(27.5e9), "27.5 Gbits/sec");
        assert_eq!(rate(999e6), " 999 Mbits/sec");
        assert_eq!(rate(1.0e9), "1.00 Gbits/sec");
    }

    #[test]
    fn lost_share_as_c_percent_2g() {
        assert_eq!(pct2g(0.0), "0");
        assert_eq!(pct2g(0.5), "0.5");
        assert_eq!(pct2g(0.0123), "0.012");
        assert_eq!(pct2g(12.345), "12");
        assert_eq!(pct2g(2.0), "2");
    }
}
