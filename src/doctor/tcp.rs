//! TCP: buffers against the bandwidth-delay product, congestion control,
//! slow start after idle.

use super::finding::{Finding, Outcome, Severity};
use super::inputs::{Inputs, PeerData, Rtt};
use crate::nic::speed::LinkSpeed;
use crate::path::limit::buffer_for;
use crate::sysctl::tcp_mem::TcpMemory;
use crate::units::{bytes, speed as mbit};

/// The link speed (Mb/s) of the interface towards the peer.
pub(crate) fn peer_link_mbps(inp: &Inputs) -> Option<u32> {
    let p = inp.peer.as_ref()?;
    let name = p.interface.as_deref()?;
    inp.iface(name)?.now().link.as_ref()?.speed_mbps
}

/// The speed of the interface towards the peer and whether it is physical.
pub(crate) fn peer_link_speed(inp: &Inputs) -> Option<LinkSpeed> {
    let name = inp.peer.as_ref()?.interface.as_deref()?;
    crate::nic::speed::link_speed(inp.iface(name)?.now())
}

/// Bandwidth-delay product in bytes: link speed × RTT.
pub(crate) fn bdp(link_mbps: u32, rtt_ms: f64) -> u64 {
    (link_mbps as f64 * 1e6 / 8.0 * rtt_ms / 1000.0) as u64
}

pub(crate) fn check_buffers(inp: &Inputs, out: &mut Outcome) {
    let Some((p, rtt, speed)) = buffer_inputs(inp, out) else {
        return;
    };
    let mbps = speed.mbps;
    let bdp = bdp(mbps, rtt.ms);
    let short = short_buffers(inp, bdp.saturating_mul(2), out);
    if short.is_empty() && !speed.is_physical() {
        // Enough for a speed nobody measured proves nothing; too little even
        // for it is still a finding (below).
        out.skip(
            "tcp-buffers",
            p.interface.as_deref(),
            format!(
                "{} is nominal ({}): a pass needs a wire's speed",
                mbit(mbps),
                speed.basis
            ),
        );
        return;
    }
    if short.is_empty() {
        out.pass(
            "tcp-buffers",
            None,
            format!(
                "tcp_rmem/tcp_wmem maxima ≥ 2 × BDP ({} = {} × {})",
                bytes(bdp),
                mbit(mbps),
                millis(rtt.ms)
            ),
        );
        return;
    }
    let tcp = inp.tcp_memory.as_ref();
    let target = buffer_for(bdp, tcp);
    let raisable: Vec<_> = short
        .into_iter()
        .filter(|(_, max, _)| *max < target)
        .collect();
    if raisable.is_empty() {
        // Short of 2 × BDP, but at what TCP's memory limit allows one
        // connection: raising them would throttle every connection.
        out.skip(
            "tcp-buffers",
            p.interface.as_deref(),
            format!(
                "tcp_rmem/tcp_wmem maxima below 2 × BDP ({}) but at the {} TCP's memory limit allows one connection ({})",
                bytes(bdp),
                bytes(target),
                tcp.map_or("", |m| m.source.as_str())
            ),
        );
        return;
    }
    out.find(buffers_finding(p, rtt, (&speed, tcp), bdp, &raisable));
}

/// A round-trip time with the digits it has: `0.042 ms`, `12.50 ms`.
fn millis(ms: f64) -> String {
    if ms < 1.0 {
        format!("{ms:.3} ms")
    } else {
        format!("{ms:.2} ms")
    }
}

/// What the bandwidth-delay product needs: the peer, the round-trip time to
/// it and the link speed towards it (`None`, with a skip saying why, when
/// one is missing).
fn buffer_inputs<'a>(
    inp: &'a Inputs,
    out: &mut Outcome,
) -> Option<(&'a PeerData, &'a Rtt, LinkSpeed)> {
    let Some(p) = &inp.peer else {
        out.skip(
            "tcp-buffers",
            None,
            "no --peer: the round-trip time is needed for the bandwidth-delay product",
        );
        return None;
    };
    let rtt = match &p.rtt {
        Ok(r) => r,
        Err(e) => {
            out.skip(
                "tcp-buffers",
                None,
                format!("no round-trip time to the peer: {e}"),
            );
            return None;
        }
    };
    let Some(speed) = peer_link_speed(inp) else {
        out.skip(
            "tcp-buffers",
            None,
            "the link speed towards the peer is unknown",
        );
        return None;
    };
    Some((p, rtt, speed))
}

/// The buffer sysctls whose maximum is below `need`: (key, maximum, its
/// first two values or the kernel's defaults).
fn short_buffers(inp: &Inputs, need: u64, out: &mut Outcome) -> Vec<(&'static str, u64, String)> {
    let mut short = Vec::new();
    for (key, default) in [
        ("net.ipv4.tcp_rmem", "4096 131072"),
        ("net.ipv4.tcp_wmem", "4096 16384"),
    ] {
        match inp.triplet_max(key) {
            Some(max) if max < need => {
                let min_def = inp
                    .sysctl(key)
                    .map(|v| v.split_whitespace().take(2).collect::<Vec<_>>().join(" "))
                    .unwrap_or_else(|| default.to_string());
                short.push((key, max, min_def));
            }
            Some(_) => {}
            None => out.skip("tcp-buffers", None, format!("{key} is not readable here")),
        }
    }
    short
}

/// Buffers below twice the bandwidth-delay product, and the sysctls to raise them.
fn buffers_finding(
    p: &PeerData,
    rtt: &Rtt,
    (speed, tcp): (&LinkSpeed, Option<&TcpMemory>),
    bdp: u64,
    short: &[(&'static str, u64, String)],
) -> Finding {
    let target = buffer_for(bdp, tcp);
    let mbps = speed.mbps;
    let link = if speed.is_physical() {
        mbit(mbps)
    } else {
        format!("{} (nominal: {})", mbit(mbps), speed.basis)
    };
    let mut f = Finding::new(
        "tcp-buffers-below-bdp",
        Severity::Warning,
        p.interface.as_deref(),
        format!(
            "TCP buffers below twice the bandwidth-delay product ({} at {} × {})",
            bytes(bdp),
            mbit(mbps),
            millis(rtt.ms)
        ),
    )
    .evidence("link speed", link)
    .evidence("rtt", format!("{:.3} ms ({})", rtt.ms, rtt.source))
    .evidence("bdp", bytes(bdp));
    for (key, max, _) in short {
        f = f.evidence(&format!("{key} max"), format!("{max} ({})", bytes(*max)));
    }
    if let Some(m) = tcp.filter(|_| target < buffer_for(bdp, None)) {
        f = f.evidence(
            "tcp memory pressure",
            format!(
                "{} ({}): buffers at most {}, half of it",
                bytes(m.pressure_bytes),
                m.source,
                bytes(target)
            ),
        );
    }
    let args: Vec<String> = short
        .iter()
        .map(|(key, _, min_def)| format!("'{key}={min_def} {target}'"))
        .collect();
    f.why("TCP keeps at most one window in flight per round trip, and the kernel uses about half a buffer for data: a buffer below 2 × BDP caps throughput below the link's rate")
        .fix(format!("hlctl sysctl {}", args.join(" ")))
}

pub(crate) fn check_congestion(inp: &Inputs, out: &mut Outcome) {
    let Some(cc) = inp.sysctl("net.ipv4.tcp_congestion_control") else {
        out.skip(
            "congestion-control",
            None,
            "net.ipv4.tcp_congestion_control is not readable",
        );
        return;
    };
    let avail = inp
        .sysctl("net.ipv4.tcp_available_congestion_control")
        .unwrap_or("");
    let bbr = avail.split_whitespace().any(|c| c == "bbr");
    let bbr_note = if bbr {
        "bbr available"
    } else {
        "bbr not available (module tcp_bbr not loaded)"
    };
    if cc == "reno" {
        let better = if bbr { "bbr" } else { "cubic" };
        out.find(
            Finding::new("congestion-control-reno", Severity::Warning, None, "TCP congestion control is reno".into())
                .evidence("net.ipv4.tcp_congestion_control", cc)
                .evidence("available", avail)
                .why("reno grows the window by one packet per round trip: on fast or long paths it takes very long to fill the pipe and halves on every loss")
                .fix(format!("hlctl sysctl net.ipv4.tcp_congestion_control={better}")),
        );
    } else {
        out.pass("congestion-control", None, format!("{cc}; {bbr_note}"));
    }
}

pub(crate) fn check_slow_start(inp: &Inputs, out: &mut Outcome) {
    match inp.sysctl("net.ipv4.tcp_slow_start_after_idle") {
        Some("1") => out.find(
            Finding::new("tcp-slow-start-after-idle", Severity::Info, None, "TCP restarts slow start after every idle pause".into())
                .evidence("net.ipv4.tcp_slow_start_after_idle", "1")
                .why("connections that pause (streaming, NFS, HTTP keep-alive) lose their window after each pause and ramp up from scratch")
                .fix("hlctl sysctl net.ipv4.tcp_slow_start_after_idle=0"),
        ),
        Some(v) => out.pass("tcp-slow-start-after-idle", None, v.to_string()),
        None => out.skip("tcp-slow-start-after-idle", None, "not readable here"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doctor::inputs::{IfaceSample, PeerData, Rtt};
    use crate::nic::model::{Interface, LinkModes};
    use crate::path::Peer;

    fn inputs(rmem_max: u64, rtt_ms: f64) -> Inputs {
        let mut inp = Inputs::default();
        inp.sysctls.insert(
            "net.ipv4.tcp_rmem".into(),
            format!("4096 131072 {rmem_max}"),
        );
        inp.sysctls
            .insert("net.ipv4.tcp_wmem".into(), "4096 16384 4194304".into());
        inp.interfaces.push(IfaceSample {
            first: Interface {
                name: "eth0".into(),
                physical: true,
                link: Some(LinkModes {
                    speed_mbps: Some(1000),
                    ..Default::default()
                }),
                ..Default::default()
            },
            second: None,
            interval_s: 1.0,
        });
        inp.peer = Some(PeerData {
            peer: Peer::parse("nas").unwrap(),
            interface: Some("eth0".into()),
            rtt: Ok(Rtt {
                ms: rtt_ms,
                source: "test".into(),
            }),
            pmtu: Err("not probed".into()),
            throughput: Err("not measured".into()),
        });
        inp
    }

    #[test]
    fn buffers_against_bdp() {
        // 1 Gb/s × 0.5 ms = 62.5 kB: defaults are plenty.
        let mut out = Outcome::default();
        check_buffers(&inputs(6 << 20, 0.5), &mut out);
        assert!(out.findings.is_empty());
        // 1 Gb/s × 100 ms = 12.5 MB: both maxima too small.
        let mut out = Outcome::default();
        check_buffers(&inputs(6 << 20, 100.0), &mut out);
        assert_eq!(out.findings.len(), 1);
        assert_eq!(
            out.findings[0].fix,
            [
                "hlctl sysctl 'net.ipv4.tcp_rmem=4096 131072 33554432' 'net.ipv4.tcp_wmem=4096 16384 33554432'"
            ]
        );
    }

    /// The fix never asks for more than TCP's memory limit allows one
    /// connection; buffers already there are not raised.
    #[test]
    fn the_fix_stays_below_tcps_memory_pressure() {
        let mut inp = inputs(6 << 20, 100.0);
        inp.tcp_memory = Some(TcpMemory {
            pressure_bytes: 41_484_288,
            source: "net.ipv4.tcp_mem = 7596 10128 15192".into(),
        });
        let mut out = Outcome::default();
        check_buffers(&inp, &mut out);
        assert_eq!(
            out.findings[0].fix,
            [
                "hlctl sysctl 'net.ipv4.tcp_rmem=4096 131072 16777216' 'net.ipv4.tcp_wmem=4096 16384 16777216'"
            ]
        );
        let ev = &out.findings[0].evidence;
        assert!(ev.iter().any(|e| e.value.contains("tcp_mem")), "{ev:?}");
        let mut inp = inputs(16 << 20, 100.0);
        inp.sysctls
            .insert("net.ipv4.tcp_wmem".into(), "4096 16384 16777216".into());
        inp.tcp_memory = Some(TcpMemory {
            pressure_bytes: 41_484_288,
            source: "test".into(),
        });
        let mut out = Outcome::default();
        check_buffers(&inp, &mut out);
        assert!(out.findings.is_empty(), "{out:?}");
        assert!(
            out.not_checked[0].detail.contains("memory limit"),
            "{out:?}"
        );
    }

    /// A veth's 10000 Mb/s is nobody's measurement: enough buffers for it
    /// is no pass (skipped, saying why); too few even for it is a finding
    /// that names the figure nominal.
    #[test]
    fn a_nominal_speed_never_passes() {
        let mut inp = inputs(6 << 20, 0.02);
        inp.interfaces[0].first.kind = Some("veth".into());
        let mut out = Outcome::default();
        check_buffers(&inp, &mut out);
        assert!(out.findings.is_empty() && out.passed.is_empty(), "{out:?}");
        assert_eq!(out.not_checked.len(), 1, "{out:?}");
        assert!(out.not_checked[0].detail.contains("nominal"), "{out:?}");
        assert_eq!(millis(0.02), "0.020 ms");
        let mut inp = inputs(8192, 100.0);
        inp.interfaces[0].first.kind = Some("veth".into());
        let mut out = Outcome::default();
        check_buffers(&inp, &mut out);
        assert_eq!(out.findings.len(), 1, "{out:?}");
        let ev = &out.findings[0].evidence;
        assert!(ev.iter().any(|e| e.value.contains("nominal")), "{ev:?}");
    }
}
