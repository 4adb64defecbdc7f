//! `hlctl bench cpu`: the sysbench cpu test (same prime search, same counting).

use std::time::Duration;

use clap::Args;

use super::bench_parse;
use super::error::CliError;
use super::exit;
use super::global::Global;
use super::output::{ProgressBar, print_json};
use crate::bench::cpu::CpuPhase;

/// Measure CPU speed in sysbench "events per second", comparable with
/// `sysbench cpu --threads=N --time=S --cpu-max-prime=P run`.
///
/// One event finds the primes below --max-prime by trial division (1228 of them for
/// 10000). With more than one thread a 1-thread run of the same length comes first, so
/// the report shows both figures and the scaling between them.
#[derive(Debug, Args)]
pub(crate) struct CpuArgs {
    /// Worker threads (1 to 4096) [default: the number of online CPUs].
    #[arg(long, value_parser = crate::units::ranged(1u32, 4096))]
    pub(crate) threads: Option<u32>,
    /// Seconds per run (e.g. 10, 0.5, 1m).
    #[arg(long, value_name = "SECONDS", default_value = "10", value_parser = bench_parse::seconds)]
    pub(crate) time: Duration,
    /// Upper limit of the prime search, as sysbench's --cpu-max-prime (at least 1).
    #[arg(long, default_value_t = 10_000, value_parser = crate::units::at_least(1u32))]
    pub(crate) max_prime: u32,
    /// Skip the 1-thread run that precedes a multi-thread one.
    #[arg(long)]
    pub(crate) no_single: bool,
}

pub(crate) fn run(global: &Global, args: CpuArgs) -> i32 {
    let params = crate::dbus::wire::bench::CpuParams {
        threads: args.threads,
        time_s: Some(args.time.as_secs_f64()),
        max_prime: Some(args.max_prime),
        no_single: args.no_single,
    };
    let mut backend = match super::backend::Backend::select(global, super::backend::Need::Nothing) {
        Ok(b) => b,
        Err(e) => return e.report(),
    };
    let bar = ProgressBar::new(global.json);
    let res = backend.bench("cpu", &params, &bar, |bar, cancel| {
        let cfg = params
            .config()
            .map_err(|m| CliError::new(m, exit::INVALID))?;
        let who = crate::ops::Requester::this_process();
        crate::ops::bench::cpu(&global.paths(), &cfg, who, bar, cancel)
            .map(super::kept::warn_unstored)
            .map_err(|e| {
                let code = crate::dbus::wire::bench::cpu_class(&e).exit_code();
                CliError::new(e.to_string(), code)
            })
    });
    bar.finish();
    match res {
        Ok(r) => {
            if global.json {
                print_json(&r);
            } else {
                println!(
                    "cpu: sysbench prime event, max prime {} ({} primes per event)",
                    r.max_prime, r.primes_per_event
                );
                if let Some(s) = &r.single_thread {
                    print_phase(s);
                }
                print_phase(&r.run);
                if let Some(x) = r.scaling {
                    println!("  scaling {x:.2}× from 1 to {} threads", r.run.threads);
                }
                if r.cancelled {
                    println!("  cancelled: partial result");
                }
                for w in &r.warnings {
                    println!("  warning: {w}");
                }
            }
            if r.cancelled { exit::FAILED } else { exit::OK }
        }
        Err(e) => {
            eprintln!("hlctl bench cpu: {}", e.message);
            e.code
        }
    }
}

fn print_phase(p: &CpuPhase) {
    let l = &p.latency_ms;
    println!(
        "  {:>2} thread(s): {:>9.2} events/s  ({} events in {:.2} s; latency ms min {:.2} avg {:.2} p95 {:.2} max {:.2})",
        p.threads, p.events_per_second, p.events, p.duration_s, l.min, l.avg, l.p95, l.max
    );
}
