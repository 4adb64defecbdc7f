//! What the path delivers against what the link claims: when a queue builds
//! under load, the limit lies beyond this host and no setting here raises it.

use super::finding::{Finding, Outcome, Severity};
use super::inputs::Inputs;
use super::tcp::peer_link_speed;
use crate::path::limit::{self, Limit, LimitNote};
use crate::path::throughput::{self, format_bps};

/// Classify each measured direction from the doctor's measurements.
pub(crate) fn limits(inp: &Inputs) -> Vec<LimitNote> {
    let Some(p) = &inp.peer else {
        return Vec::new();
    };
    let Ok(t) = &p.throughput else {
        return Vec::new();
    };
    let rtt = p.rtt.as_ref().ok().map(|r| r.ms);
    // A tune that measures one direction (`--direction`) hands the doctor
    // an empty series for the other.
    throughput::measured(&t.upload, &t.download)
        .map(|(d, s)| {
            let (key, _) = limit::keys(d);
            limit::of_series(d, s, rtt, peer_link_speed(inp), inp.triplet_max(key))
        })
        .collect()
}

pub(crate) fn check(inp: &Inputs, out: &mut Outcome) {
    let Some(p) = &inp.peer else {
        out.skip("path-throughput", None, "no --peer to measure");
        return;
    };
    let iface = p.interface.as_deref();
    if let Err(e) = &p.throughput {
        out.skip("path-throughput", iface, e.clone());
        return;
    }
    for note in limits(inp) {
        match &note.limit {
            Limit::Bottleneck {
                delivered_bps,
                link_bps,
                rtt_idle_ms,
                rtt_loaded_ms,
            } => out.find(
                Finding::new(
                    "path-bottleneck",
                    Severity::Warning,
                    iface,
                    format!(
                        "{} to {}: the path delivers ~{}{}",
                        note.direction,
                        p.peer.host,
                        format_bps(*delivered_bps),
                        link_bps
                            .map(|b| format!(
                                " while the link claims {}{}",
                                format_bps(b),
                                if note.link_speed.as_ref().is_some_and(|l| !l.is_physical()) {
                                    " (a nominal figure)"
                                } else {
                                    ""
                                }
                            ))
                            .unwrap_or_default()
                    ),
                )
                .evidence("throughput (median)", format_bps(*delivered_bps))
                .evidence(
                    "link speed",
                    note.link_speed.as_ref().map_or("unknown".into(), |l| {
                        format!("{} ({})", crate::units::speed(l.mbps), l.kind)
                    }),
                )
                .evidence("rtt idle", format!("{rtt_idle_ms:.3} ms"))
                .evidence("rtt under load", format!("{rtt_loaded_ms:.3} ms"))
                .why("a queue builds while data flows, so something slower than this link sits on the way (a 100 Mbit/s hop, a shaper, the peer's own link): no setting on this host raises it")
                .fix("# find the slow hop: hlctl doctor on the peer, the switch's port speeds, any traffic shaping"),
            ),
            _ => out.pass("path-throughput", iface, note.text),
        }
    }
}
