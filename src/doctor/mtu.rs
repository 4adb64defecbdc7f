//! MTU against the path: a don't-fragment probe finds the largest packet that
//! reaches the peer; a local MTU above it means large frames are lost.

use super::finding::{Finding, Outcome, Severity};
use super::inputs::Inputs;

pub(crate) fn check(inp: &Inputs, out: &mut Outcome) {
    let Some(p) = &inp.peer else {
        out.skip("path-mtu", None, "no --peer to probe");
        return;
    };
    let iface = p.interface.as_deref();
    let pm = match &p.pmtu {
        Ok(pm) => pm,
        Err(e) => {
            out.skip("path-mtu", iface, e.clone());
            return;
        }
    };
    if pm.path_mtu >= pm.local_mtu {
        out.pass(
            "path-mtu",
            iface,
            format!(
                "{}-byte don't-fragment packets reach {} (the local MTU)",
                pm.local_mtu, p.peer.host
            ),
        );
        return;
    }
    let name = iface.unwrap_or("IFACE");
    // Suggest a standard size at or below what got through.
    let suggest = [9000, 4000, 1500, 1492, 1480, 1280]
        .into_iter()
        .find(|m| *m <= pm.path_mtu)
        .unwrap_or(pm.path_mtu);
    out.find(
        Finding::new(
            "mtu-above-path",
            Severity::Warning,
            iface,
            format!(
                "{name}: MTU {} here, but only {}-byte packets reach {}",
                pm.local_mtu, pm.path_mtu, p.peer.host
            ),
        )
        .evidence("local mtu", pm.local_mtu)
        .evidence("largest don't-fragment packet that reached the peer", pm.path_mtu)
        .evidence(
            "smallest that did not",
            pm.smallest_lost.map_or("-".into(), |v| v.to_string()),
        )
        .evidence("probes", pm.probes)
        .why("the peer (or a hop on the way) carries smaller frames: larger ones are dropped silently (a PMTU black hole) unless every sender learns the smaller size; UDP and tunnels break first")
        .fix(format!("hlctl set {name} mtu {suggest}"))
        .fix(format!("# or raise the MTU of the peer and every hop to {}", pm.local_mtu)),
    );
}
