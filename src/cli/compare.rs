//! `hlctl compare`: the latest results against a baseline.

use clap::Args;

use super::exit;
use super::global::Global;
use super::output::print_json;

/// Compare the latest result of every baseline metric with the baseline:
/// a verdict per metric (REGRESSION, IMPROVED, OK, NOT MEASURED) and, for a
/// changed metric, the settings that changed since the baseline, e.g.
/// "net upload → nas: 112 Mbit/s vs baseline 941 Mbit/s: −88%, REGRESSION;
/// changed since the baseline: eth0 link speed 1000 → 100".
///
/// Exit codes: 0 no regression; 1 at least one regression; 2 invalid input.
#[derive(Debug, Args)]
pub(crate) struct CompareArgs {
    /// The baseline [default: the newest].
    #[arg(value_name = "NAME")]
    pub(crate) name: Option<String>,

    /// A change larger than this (percent) is a regression or an improvement.
    #[arg(long, default_value_t = crate::history::compare::DEFAULT_THRESHOLD, value_name = "PCT")]
    pub(crate) threshold: f64,
}

pub(crate) fn run(global: &Global, args: CompareArgs) -> i32 {
    if !(0.0..=1000.0).contains(&args.threshold) {
        eprintln!(
            "hlctl compare: --threshold {}: allowed 0 to 1000 (percent)",
            args.threshold
        );
        return exit::INVALID;
    }
    let c = match super::kept::compare(global, args.name.as_deref(), args.threshold) {
        Ok(c) => c,
        Err(e) => return e.report(),
    };
    if global.json {
        print_json(&c);
    } else {
        println!(
            "Against baseline '{}' ({}), threshold {}%:",
            c.baseline,
            crate::history::store::format_ts(c.baseline_ts),
            c.threshold_percent
        );
        for m in &c.metrics {
            println!("  {}", m.text);
        }
    }
    if c.regressions() > 0 {
        exit::FAILED
    } else {
        exit::OK
    }
}
