//! `hlctl usage`: how busy the links were between benchmarks.

use clap::Args;

use super::exit;
use super::global::Global;
use super::output::print_json;
use crate::dbus::wire::records::DEFAULT_USAGE_DAYS;
use crate::history::store::format_ts;
use crate::usage::answer::{LinkUsage, MAX_DAYS};

/// How busy each link really was, and whether a faster one would help.
///
/// hlctld reads every physical link's byte counters every 10 s and keeps
/// per-minute figures for 14 days and per-hour figures for 400 days in the
/// history database (`[usage]` in hlctl.toml changes that, and names virtual
/// links to sample too, e.g. `links = ["vmbr0:1G"]`). For each link and
/// direction: the peak, the 95th percentile of the minutes, the time above
/// 50, 80 and 95 % of the link's speed, the bytes moved and the busiest
/// hours (local time), then the answer in words: "peak 280 Mbit/s = 28 % of
/// 1 Gbit/s, above 80 % for 0 min in 30 days: a faster link would not change
/// what you feel", or how long the link is full a day and how long that
/// traffic would take on the next speed up (an estimate). A benchmark in the
/// history that shows the path beyond the link delivering less (a server's
/// disk, a slower hop) is named as the limit.
///
/// Exit codes: 0 answered; 2 invalid input (an interface without samples).
#[derive(Debug, Args)]
pub(crate) struct UsageArgs {
    /// Only this link [default: every sampled link].
    #[arg(value_name = "IFACE")]
    pub(crate) iface: Option<String>,

    /// Look back this many days.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_USAGE_DAYS,
          value_parser = crate::units::ranged(1u32, MAX_DAYS))]
    pub(crate) days: u32,
}

pub(crate) fn run(global: &Global, args: UsageArgs) -> i32 {
    let u = match super::kept::usage(global, args.iface.as_deref(), args.days) {
        Ok(u) => u,
        Err(e) => return e.report(),
    };
    if global.json {
        print_json(&u);
        return exit::OK;
    }
    if u.links.is_empty() {
        println!(
            "No link usage recorded in the last {} days: hlctld samples every physical link every 10 s while it runs.",
            u.days
        );
    }
    for l in &u.links {
        print_link(l, u.days);
    }
    exit::OK
}

fn print_link(l: &LinkUsage, days: u32) {
    let s = &l.span;
    let last = if days == 1 {
        "day".to_string()
    } else {
        format!("{days} days")
    };
    println!(
        "{} ({}), the last {last}:",
        l.iface,
        crate::units::speed((s.speed_bps / 1e6).round() as u32)
    );
    println!(
        "  sampled {}, from {} to {} UTC",
        crate::units::duration(s.covered_s),
        format_ts(s.from),
        format_ts(s.to)
    );
    println!("  {}", l.verdict.text);
    for e in &l.verdict.evidence {
        println!("    {e}");
    }
}
