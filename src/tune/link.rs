//! The link candidate (renegotiate): planned when the link runs below the
//! NIC's best supported (or best common) mode or at half duplex; after it is
//! applied the carrier drops while the ends negotiate, so the tuner waits for
//! it ([`wait_for_carrier`]) and keeps the candidate on the link's own
//! evidence ([`decide_link`]): an emulated NIC cannot show the gain in
//! throughput, a real one will, and the reason says which evidence decided.

use std::time::{Duration, Instant};

use super::change::Candidate;
use super::change::Change;
use super::decide::Decision;
use super::target::Target;
use crate::nic::model::{Duplex, Interface, LinkModes};
use crate::nic::shortfall::{renegotiate, shortfall};

/// How long the carrier may stay away after renegotiating.
pub(crate) const CARRIER_WAIT: Duration = Duration::from_secs(10);

/// The renegotiation candidate for `i`, when its link falls short.
pub(crate) fn candidate(i: &Interface) -> Option<Candidate> {
    let s = shortfall(i)?;
    let link = i.link.as_ref()?;
    let set = renegotiate(link)?;
    let mut ch = Change::default();
    ch.nic.link = Some(set);
    let mut why = Vec::new();
    if s.slow() {
        why.push(format!(
            "the link runs at {}, {}",
            crate::units::speed(s.speed_mbps),
            s.best_phrase()
        ));
    }
    if s.half_duplex() {
        why.push("half duplex".into());
    }
    Some(Candidate {
        id: "link-renegotiate".into(),
        title: "renegotiate the link (autoneg on, every supported mode)".into(),
        reason: format!(
            "{}{}: kept when the link comes back faster or at full duplex and throughput is not worse",
            why.join(", "),
            if link.autoneg {
                String::new()
            } else {
                format!("; autonegotiation is off (forced {})", forced(link))
            }
        ),
        change: ch,
        probe_mtu: None,
    })
}

/// `100 Mb/s full duplex`.
pub(crate) fn forced(l: &LinkModes) -> String {
    format!(
        "{} {} duplex",
        l.speed_mbps
            .map_or("unknown speed".into(), crate::units::speed),
        l.duplex.map_or("unknown".into(), |d| d.to_string())
    )
}

/// Wait (up to `timeout`) for the carrier to come back after renegotiating
/// from `before`: done when the link is up and its carrier dropped or its
/// speed/duplex changed; up but unchanged at the deadline counts as back.
pub(crate) fn wait_for_carrier(
    target: &mut dyn Target,
    before: Option<&LinkModes>,
    timeout: Duration,
) -> Result<LinkModes, String> {
    let until = Instant::now() + timeout;
    loop {
        let Some(now) = target.link()? else {
            return Err("the driver reports no link settings".into());
        };
        let now = Some(now);
        if let Some(l) = &now
            && l.detected == Some(true)
            && l.speed_mbps.is_some()
        {
            let changed =
                before.is_none_or(|b| (b.speed_mbps, b.duplex) != (l.speed_mbps, l.duplex));
            if changed || Instant::now() >= until {
                return Ok(l.clone());
            }
        }
        if Instant::now() >= until {
            return Err(format!(
                "carrier did not return within {} s{}",
                timeout.as_secs(),
                now.map_or(String::new(), |l| format!(
                    " (link detected: {})",
                    l.detected
                        .map_or("unknown", |d| if d { "yes" } else { "no" })
                ))
            ));
        }
        std::thread::sleep(Duration::from_millis(250));
    }
}

fn better(before: &LinkModes, after: &LinkModes) -> bool {
    let faster = after.speed_mbps.unwrap_or(0) > before.speed_mbps.unwrap_or(0);
    let full = before.duplex == Some(Duplex::Half) && after.duplex == Some(Duplex::Full);
    let not_slower = after.speed_mbps.unwrap_or(0) >= before.speed_mbps.unwrap_or(0);
    (faster && after.duplex != Some(Duplex::Half)) || (full && not_slower)
}

/// Keep the renegotiation when the link reports a higher speed or full
/// duplex and throughput is not worse beyond the noise; the reason names the
/// evidence that decided.
pub(crate) fn decide_link(before: &LinkModes, after: &LinkModes, throughput: Decision) -> Decision {
    let was = forced(before);
    let now = forced(after);
    if !better(before, after) {
        return Decision::Revert(format!(
            "the link came back at {now} (was {was}): renegotiating did not raise it; check the cable (a broken pair forces 100 Mbit/s) and the switch port"
        ));
    }
    match throughput {
        Decision::Revert(why) if why.starts_with("worse") => Decision::Revert(format!(
            "the link reports {now} (was {was}) but throughput got {why}"
        )),
        Decision::Keep(why) => Decision::Keep(format!(
            "decided by the link and by throughput: the link reports {now} (was {was}), and throughput is {why}"
        )),
        Decision::Revert(why) => Decision::Keep(format!(
            "decided by the link: it reports {now} (was {was}) and throughput is not worse beyond the noise; it shows no gain either ({}) — an emulated NIC cannot show one, on a real link a slower hop elsewhere may hide it",
            why.trim_start_matches("no gain above the noise: ")
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn l(speed: u32, d: Duplex) -> LinkModes {
        LinkModes {
            speed_mbps: Some(speed),
            duplex: Some(d),
            detected: Some(true),
            ..Default::default()
        }
    }

    #[test]
    fn the_link_decides_when_throughput_cannot() {
        let flat = Decision::Revert("no gain above the noise: upload 1 → 1".into());
        let d = decide_link(&l(100, Duplex::Full), &l(1000, Duplex::Full), flat.clone());
        assert!(
            matches!(&d, Decision::Keep(r) if r.starts_with("decided by the link:") && r.contains("1 Gbit/s full")),
            "{d:?}"
        );
        let d = decide_link(
            &l(100, Duplex::Full),
            &l(1000, Duplex::Full),
            Decision::Keep("better: upload +800%".into()),
        );
        assert!(matches!(&d, Decision::Keep(r) if r.contains("by the link and by throughput")));
        // Half → full at the same speed counts.
        let d = decide_link(&l(10, Duplex::Half), &l(10, Duplex::Full), flat.clone());
        assert!(matches!(d, Decision::Keep(_)), "{d:?}");
        // Worse throughput or no better link: revert.
        let d = decide_link(
            &l(100, Duplex::Full),
            &l(1000, Duplex::Full),
            Decision::Revert("worse: upload −40%".into()),
        );
        assert!(matches!(d, Decision::Revert(_)));
        let d = decide_link(&l(100, Duplex::Full), &l(100, Duplex::Full), flat);
        assert!(
            matches!(&d, Decision::Revert(r) if r.contains("cable")),
            "{d:?}"
        );
    }
}
