//! `hlctl bench stress`: sustained CPU + memory load, watching for thermal throttling.

use std::time::Duration;

use clap::Args;

use super::bench_parse;
use super::error::CliError;
use super::exit;
use super::global::Global;
use super::output::{ProgressBar, print_json};
use crate::bench::size::Bytes;
use crate::bench::stress::{self, MemAmount, StressReport};
use crate::dbus::wire::bench::StressParams;

/// Sustained CPU and memory load that watches for thermal throttling.
///
/// Once a second it samples temperatures (hwmon, thermal zones), frequency
/// (scaling_cur_freq vs cpuinfo_max_freq) and throttle counters (thermal_throttle).
/// The memory written is read back and compared.
///
/// The verdict is "throttling observed", "none observed", or "not observable on this
/// machine" when the machine exposes none of these sensors (usual on VMs); no figure is
/// ever made up. Ctrl-C stops the load and prints the summary.
#[derive(Debug, Args)]
pub(crate) struct StressArgs {
    /// How long to run (seconds, or e.g. 10m).
    #[arg(long, value_name = "SECONDS", default_value = "60", value_parser = bench_parse::seconds)]
    pub(crate) time: Duration,
    /// CPU workers (0 to 4096) [default: the number of online CPUs].
    #[arg(long, value_parser = crate::units::ranged(0u32, 4096))]
    pub(crate) cpu: Option<u32>,
    /// Memory workers sharing --vm-bytes (0 to 256).
    #[arg(long, default_value_t = 1, value_parser = crate::units::ranged(0u32, 256))]
    pub(crate) vm: u32,
    /// Memory to load: a size (512M, 2G) or a percentage of available memory (50%, at most 90%).
    #[arg(long, value_name = "SIZE|PCT", default_value = "256M", value_parser = bench_parse::mem_amount)]
    pub(crate) vm_bytes: MemAmount,
    /// Seconds between sensor samples (at least 0.1).
    #[arg(long, value_name = "SECONDS", default_value = "1", value_parser = bench_parse::seconds)]
    pub(crate) interval: Duration,
}

pub(crate) fn run(global: &Global, args: StressArgs) -> i32 {
    let (vm_bytes, vm_percent) = match args.vm_bytes {
        MemAmount::Bytes(b) => (Some(b), None),
        MemAmount::PercentOfAvailable(p) => (None, Some(p)),
    };
    let params = StressParams {
        time_s: Some(args.time.as_secs_f64()),
        cpu: args.cpu,
        vm: Some(args.vm),
        vm_bytes,
        vm_percent,
        interval_s: Some(args.interval.as_secs_f64()),
    };
    let mut backend = match super::backend::Backend::select(global, super::backend::Need::Nothing) {
        Ok(b) => b,
        Err(e) => return e.report(),
    };
    let bar = ProgressBar::new(global.json);
    let res = backend.bench("stress", &params, &bar, |bar, cancel| {
        let cfg = params
            .config()
            .map_err(|m| CliError::new(m, exit::INVALID))?;
        stress::run(&cfg, bar, cancel).map_err(|e| {
            let code = crate::dbus::wire::bench::stress_class(&e).exit_code();
            CliError::new(e.to_string(), code)
        })
    });
    bar.finish();
    match res {
        Ok(r) => {
            if global.json {
                print_json(&r);
            } else {
                print_report(&r);
            }
            if r.memory.mismatches > 0 || r.cancelled {
                exit::FAILED
            } else {
                exit::OK
            }
        }
        Err(e) => {
            eprintln!("hlctl bench stress: {}", e.message);
            e.code
        }
    }
}

fn opt(v: Option<f64>, unit: &str) -> String {
    v.map_or_else(|| "n/a".to_string(), |x| format!("{x:.1} {unit}"))
}

fn print_report(r: &StressReport) {
    println!(
        "stress: {:.1} s, {} CPU worker(s), {} memory worker(s) on {}",
        r.duration_s,
        r.cpu_workers,
        r.vm_workers,
        Bytes(r.vm_bytes)
    );
    println!("  verdict     {}", r.verdict);
    for why in &r.reasons {
        println!("              {why}");
    }
    match &r.temperature_c {
        Some(t) => println!(
            "  temperature start {}, max {}, end {}",
            opt(t.start, "°C"),
            opt(t.max, "°C"),
            opt(t.end, "°C")
        ),
        None => println!("  temperature not exposed"),
    }
    match &r.frequency_mhz {
        Some(f) => println!(
            "  frequency   nominal {:.0} MHz; highest CPU: start {}, min {}, end {}",
            f.nominal,
            opt(f.start, "MHz"),
            opt(f.min, "MHz"),
            opt(f.end, "MHz")
        ),
        None => println!("  frequency   not exposed"),
    }
    println!(
        "  cpu load    {:.0} events/s ({} events)",
        r.cpu.events_per_second, r.cpu.events
    );
    let m = &r.memory;
    let state = if m.mismatches > 0 {
        format!("{} MISMATCHED WORDS", m.mismatches)
    } else if m.verified {
        "every word read back as written".to_string()
    } else {
        "nothing verified".to_string()
    };
    println!(
        "  memory      wrote {}, verified {}: {state}",
        Bytes(m.bytes_written),
        Bytes(m.bytes_verified)
    );
    if r.cancelled {
        println!("  cancelled before the end");
    }
}
