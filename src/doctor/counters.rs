//! Error and drop counters, compared across two samples: a count that rises
//! while we watch is a live problem; one that does not is history.
//! Also: rings below their maximum while the NIC drops or misses frames.

use super::finding::{Finding, Outcome, Severity};
use super::inputs::IfaceSample;
use crate::nic::model::{Counters, Rings};
use crate::nic::registry;

struct Counter {
    key: &'static str,
    get: fn(&Counters) -> u64,
    /// Severity when rising; when static and non-zero (None: not reported).
    rising: Severity,
    historic: Option<Severity>,
    why: &'static str,
    /// The NIC ran out of receive buffers: larger rings help.
    ring_related: bool,
}

const COUNTERS: &[Counter] = &[
    Counter {
        key: "rx_crc_errors",
        get: |c| c.rx_crc_errors,
        rising: Severity::Critical,
        historic: Some(Severity::Warning),
        why: "frames arrive corrupted: a bad cable, connector, transceiver or switch port (check the switch's port counters too)",
        ring_related: false,
    },
    Counter {
        key: "rx_frame_errors",
        get: |c| c.rx_frame_errors,
        rising: Severity::Critical,
        historic: Some(Severity::Warning),
        why: "misaligned frames: physical-layer trouble or a duplex mismatch",
        ring_related: false,
    },
    Counter {
        key: "rx_missed_errors",
        get: |c| c.rx_missed_errors,
        rising: Severity::Warning,
        historic: Some(Severity::Info),
        why: "the NIC had no free receive buffer: the host did not empty the ring fast enough",
        ring_related: true,
    },
    Counter {
        key: "rx_fifo_errors",
        get: |c| c.rx_fifo_errors,
        rising: Severity::Warning,
        historic: Some(Severity::Info),
        why: "the NIC's receive FIFO overran before frames reached host memory",
        ring_related: true,
    },
    Counter {
        key: "rx_over_errors",
        get: |c| c.rx_over_errors,
        rising: Severity::Warning,
        historic: Some(Severity::Info),
        why: "receive ring overruns",
        ring_related: true,
    },
    Counter {
        key: "rx_dropped",
        get: |c| c.rx_dropped,
        rising: Severity::Warning,
        historic: None,
        why: "packets were dropped after reception (no buffer, backlog full, or frames nobody handles)",
        ring_related: true,
    },
    Counter {
        key: "tx_dropped",
        get: |c| c.tx_dropped,
        rising: Severity::Warning,
        historic: None,
        why: "packets were dropped before they could be sent (queue full)",
        ring_related: false,
    },
    Counter {
        key: "collisions",
        get: |c| c.collisions,
        rising: Severity::Critical,
        historic: Some(Severity::Warning),
        why: "collisions exist only on half-duplex links: a duplex mismatch",
        ring_related: false,
    },
];

pub(crate) fn check(s: &IfaceSample, out: &mut Outcome) {
    let ring_pressure = counters(s, out);
    rings(s, &ring_pressure, out);
}

/// Each counter: rising, historic or clean. Returns the ring-related
/// counters that are not clean (rising, or non-zero in the past).
fn counters(s: &IfaceSample, out: &mut Outcome) -> Vec<String> {
    let name = s.name();
    let n = Some(name);
    let a = &s.first.counters;
    let b = s.second.as_ref().map(|x| &x.counters);
    let mut ring_pressure = Vec::new();
    let mut clean = Vec::new();
    for c in COUNTERS {
        let before = (c.get)(a);
        let after = b.map(|b| (c.get)(b));
        let rising = after.is_some_and(|x| x > before);
        let total = after.unwrap_or(before);
        if rising {
            out.find(rising_finding(c, s, before, total));
            if c.ring_related {
                ring_pressure.push(format!("{} rising", c.key));
            }
        } else if total > 0
            && let Some(sev) = c.historic
        {
            out.find(historic_finding(c, name, sev, total));
            if c.ring_related {
                ring_pressure.push(format!("{} {total}", c.key));
            }
        } else {
            clean.push(format!("{} {total}", c.key));
        }
    }
    if b.is_none() {
        out.skip("counters-rising", n, "only one sample taken");
    }
    if !clean.is_empty() {
        out.pass("counters", n, clean.join(", "));
    }
    ring_pressure
}

/// A counter that rose between the two samples.
fn rising_finding(c: &Counter, s: &IfaceSample, before: u64, total: u64) -> Finding {
    let name = s.name();
    Finding::new(
        &format!("counter-{}", c.key.replace('_', "-")),
        c.rising,
        Some(name),
        format!(
            "{name}: {} rising ({} in {:.0} s)",
            c.key,
            total - before,
            s.interval_s
        ),
    )
    .evidence(c.key, format!("{before} → {total}"))
    .why(c.why)
    .fix(format!("# watch it: hlctl show {name} --json (counters)"))
}

/// A counter that is not zero but did not rise while we watched.
fn historic_finding(c: &Counter, name: &str, sev: Severity, total: u64) -> Finding {
    Finding::new(
        &format!("counter-{}", c.key.replace('_', "-")),
        sev,
        Some(name),
        format!(
            "{name}: {total} {} since the counters were reset (not rising now)",
            c.key
        ),
    )
    .evidence(c.key, total)
    .evidence("rising", "no (two samples)")
    .why(c.why)
    .fix(format!(
        "# not rising now; if it grows under load, look at the cable/port; watch: hlctl show {name}"
    ))
}

/// Rings below their maximum while the NIC drops or misses frames.
fn rings(s: &IfaceSample, ring_pressure: &[String], out: &mut Outcome) {
    let name = s.name();
    let n = Some(name);
    let Some(r) = &s.now().rings else {
        out.skip("rings", n, "the driver does not report ring sizes");
        return;
    };
    let below =
        |cur: Option<u32>, max: Option<u32>| matches!((cur, max), (Some(c), Some(m)) if c < m);
    let rx_below = below(r.rx, r.rx_max);
    let tx_below = below(r.tx, r.tx_max);
    if (rx_below || tx_below) && !ring_pressure.is_empty() {
        out.find(rings_finding(name, r, (rx_below, tx_below), ring_pressure));
    } else {
        out.pass(
            "rings",
            n,
            format!(
                "rx {} (max {}), tx {} (max {}){}",
                fmt(r.rx),
                fmt(r.rx_max),
                fmt(r.tx),
                fmt(r.tx_max),
                if ring_pressure.is_empty() {
                    ", no drops"
                } else {
                    ""
                }
            ),
        );
    }
}

/// Drops while the rings (rx, tx: which are below their maximum) could grow.
fn rings_finding(
    name: &str,
    r: &Rings,
    (rx_below, tx_below): (bool, bool),
    ring_pressure: &[String],
) -> Finding {
    let mut f = Finding::new(
        "rings-below-max",
        Severity::Warning,
        Some(name),
        format!("{name}: drops while the rings are below their maximum"),
    )
    .evidence(
        &registry::name("ring", "rx"),
        format!("{} (max {})", fmt(r.rx), fmt(r.rx_max)),
    )
    .evidence(
        &registry::name("ring", "tx"),
        format!("{} (max {})", fmt(r.tx), fmt(r.tx_max)),
    );
    for p in ring_pressure {
        f = f.evidence("drops", p);
    }
    let mut line = format!("hlctl set {name} ring");
    if let (true, Some(m)) = (rx_below, r.rx_max) {
        line += &format!(" rx {m}");
    }
    if let (true, Some(m)) = (tx_below, r.tx_max) {
        line += &format!(" tx {m}");
    }
    f.why("larger rings absorb bursts the CPU cannot drain at once (changing them may reset the NIC briefly)")
        .fix(line)
}

fn fmt(v: Option<u32>) -> String {
    v.map_or("?".into(), |v| v.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nic::model::{Interface, Rings};

    fn iface(missed: u64, crc: u64) -> Interface {
        Interface {
            name: "eth0".into(),
            counters: Counters {
                rx_missed_errors: missed,
                rx_crc_errors: crc,
                ..Default::default()
            },
            rings: Some(Rings {
                rx: Some(256),
                tx: Some(256),
                rx_max: Some(4096),
                tx_max: Some(4096),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    #[test]
    fn rising_missed_frames_point_at_the_rings() {
        let s = IfaceSample {
            first: iface(10, 0),
            second: Some(iface(250, 0)),
            interval_s: 1.0,
        };
        let mut out = Outcome::default();
        check(&s, &mut out);
        let ids: Vec<&str> = out.findings.iter().map(|f| f.id.as_str()).collect();
        assert_eq!(ids, ["counter-rx-missed-errors", "rings-below-max"]);
        assert_eq!(out.findings[1].fix, ["hlctl set eth0 ring rx 4096 tx 4096"]);
    }

    #[test]
    fn clean_counters_give_no_finding_and_historic_crc_is_a_warning() {
        let s = IfaceSample {
            first: iface(0, 0),
            second: Some(iface(0, 0)),
            interval_s: 1.0,
        };
        let mut out = Outcome::default();
        check(&s, &mut out);
        assert!(out.findings.is_empty(), "{:?}", out.findings);
        let s = IfaceSample {
            first: iface(0, 5),
            second: Some(iface(0, 5)),
            interval_s: 1.0,
        };
        let mut out = Outcome::default();
        check(&s, &mut out);
        assert_eq!(out.findings.len(), 1);
        assert_eq!(out.findings[0].severity, Severity::Warning);
    }
}
