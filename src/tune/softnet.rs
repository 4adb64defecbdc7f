//! The backlog and budget candidates: `net.core.netdev_max_backlog` when a
//! run of the tune's baseline dropped packets from a full per-CPU backlog,
//! `net.core.netdev_budget` when its poll cycles ran out of budget often
//! with a core saturated (`/proc/net/softnet_stat`'s dropped and
//! time_squeeze counters, sampled around every run; the doctor's rules,
//! [`crate::doctor::cores`]). Both keys are global, not per network
//! namespace: from a namespace other than the host's they are not there
//! (nothing is tried), and from a container they would change the whole
//! host (nothing is tried either).

use super::change::{Candidate, Change};
use crate::cpu::report::CoreReport;
use crate::doctor::Inputs;
use crate::doctor::cores::{BACKLOG, BUDGET, backlog_overflowed, budget_squeezed, doubled};

/// Every per-core report of the baseline's runs, both directions.
fn baseline_reports(inp: &Inputs) -> Vec<&CoreReport> {
    let Some(t) = inp.peer.as_ref().and_then(|p| p.throughput.as_ref().ok()) else {
        return Vec::new();
    };
    t.upload
        .samples
        .iter()
        .chain(&t.download.samples)
        .filter_map(|s| s.cores.as_ref())
        .collect()
}

/// The candidates whose counters moved during the baseline, in this
/// process's view (`in_container`: a container's, where a global key is
/// the host's).
pub(crate) fn candidates(inp: &Inputs, notes: &mut Vec<String>) -> Vec<Candidate> {
    candidates_in(inp, crate::caps::in_container(), notes)
}

pub(crate) fn candidates_in(
    inp: &Inputs,
    in_container: bool,
    notes: &mut Vec<String>,
) -> Vec<Candidate> {
    let reports = baseline_reports(inp);
    let dropped: u64 = reports.iter().map(|r| r.backlog_dropped).sum();
    let squeezed = reports.iter().find(|r| budget_squeezed(r));
    let mut out = Vec::new();
    if reports.iter().any(|r| backlog_overflowed(r)) {
        let why =
            format!("{dropped} packets dropped from full per-CPU backlogs during the baseline");
        out.extend(raise(inp, BACKLOG, "backlog", &why, in_container, notes));
    }
    if let Some(r) = squeezed {
        let why = format!(
            "the receive budget ran out {} times in {:.1} s with work left, a core saturated, during the baseline",
            r.time_squeeze, r.seconds
        );
        out.extend(raise(inp, BUDGET, "budget", &why, in_container, notes));
    }
    out
}

/// `key` doubled (at least `floor`), when this process may change it.
fn raise(
    inp: &Inputs,
    (key, floor): (&str, u64),
    id: &str,
    why: &str,
    in_container: bool,
    notes: &mut Vec<String>,
) -> Option<Candidate> {
    let Some(now) = inp.sysctl(key) else {
        notes.push(format!(
            "{key}: not tried ({why}): it is global, not per network namespace, and not visible in this one"
        ));
        return None;
    };
    if in_container {
        notes.push(format!(
            "{key}: not tried ({why}): it is global, and from a container it would change the whole host"
        ));
        return None;
    }
    let want = doubled(inp, key, floor);
    let mut change = Change::default();
    change.sysctl.insert(key.to_string(), want.to_string());
    Some(Candidate {
        id: id.into(),
        title: format!("{key} to {want}"),
        reason: format!("{why}: {key} {} → {want}", now.trim()),
        change,
        probe_mtu: None,
    })
}

#[cfg(test)]
#[path = "softnet_tests.rs"]
mod tests;
