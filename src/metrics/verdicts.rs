//! The owner's two answers as gauges: link usage from hlctld's samples
//! (the last day and the last 30 days, per link and direction) and the
//! last check's workload verdicts.

use super::Families;
use crate::usage::answer::UsageAnswer;
use crate::usage::{THRESHOLDS, stats::DirStats};
use crate::workload::Answer;

/// The windows the usage gauges are given for, and their label.
pub(crate) const WINDOWS: [(u32, &str); 2] = [(1, "1d"), (30, "30d")];

/// Every sampled link's usage over one window.
pub(super) fn usage(f: &mut Families, u: &UsageAnswer, window: &str) {
    for l in &u.links {
        let s = &l.span;
        let base = [("iface", l.iface.as_str()), ("window", window)];
        f.set(
            "hlctl_usage_sampled_seconds",
            "Seconds of the window hlctld sampled the link's counters",
            &base,
            s.covered_s,
        );
        for (dir, d) in [("receive", &s.rx), ("send", &s.tx)] {
            direction(f, &l.iface, window, dir, d);
        }
        if window == "30d" {
            f.set(
                "hlctl_usage_speed_bps",
                "The speed the link's usage is judged against, bit/s",
                &[("iface", l.iface.as_str())],
                s.speed_bps,
            );
            f.set(
                "hlctl_usage_faster_link_helps",
                "1 when the link was full long enough in the last 30 days that a faster link would help (hlctl usage)",
                &[("iface", l.iface.as_str())],
                super::b(l.verdict.faster_helps),
            );
        }
    }
}

fn direction(f: &mut Families, iface: &str, window: &str, dir: &str, d: &DirStats) {
    let l = [("iface", iface), ("direction", dir), ("window", window)];
    f.set(
        "hlctl_usage_peak_bps",
        "Highest rate of one sample interval in the window, bit/s",
        &l,
        d.peak_bps,
    );
    f.set(
        "hlctl_usage_p95_bps",
        "95th percentile of the minutes' highest rates in the window, bit/s",
        &l,
        d.p95_bps,
    );
    for (i, t) in THRESHOLDS.iter().enumerate() {
        let pct = t.to_string();
        f.set(
            "hlctl_usage_above_seconds",
            "Seconds in the window above `percent` % of the link's speed",
            &[
                ("iface", iface),
                ("direction", dir),
                ("window", window),
                ("percent", pct.as_str()),
            ],
            d.above_s[i],
        );
    }
}

/// The last check's answer for each workload of `[workload]`.
pub(super) fn workloads(f: &mut Families, answers: &[Answer]) {
    for a in answers {
        let name = a.workload.label();
        let l = [("workload", name.as_str())];
        f.set(
            "hlctl_workload_carried",
            "1 when the last check's figures carry the workload ([workload] in hlctl.toml)",
            &l,
            super::b(a.verdict.starts_with("carries")),
        );
        if let Some(fits) = a.fits {
            f.set(
                "hlctl_workload_fits",
                "How many instances of the workload the last check's figures carry",
                &l,
                fits,
            );
        }
        for r in &a.rows {
            if let Some(h) = r.headroom_percent {
                f.set(
                    "hlctl_workload_headroom_percent",
                    "Measured over needed minus 1, percent, per layer (negative: short)",
                    &[("workload", name.as_str()), ("layer", r.layer.name())],
                    h,
                );
            }
        }
    }
}
