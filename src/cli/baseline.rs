//! `hlctl baseline`: freeze the latest results as a named baseline.

use clap::{Args, Subcommand};

use super::exit;
use super::global::Global;
use super::output::{print_json, table};
use crate::history::store::format_ts;

/// Save or list baselines: a frozen copy of the latest value of every metric
/// (network per peer, disk per directory, CPU) with the settings of the time,
/// for `hlctl compare`.
#[derive(Debug, Args)]
pub(crate) struct BaselineArgs {
    #[command(subcommand)]
    pub(crate) command: BaselineCommand,
}

#[derive(Debug, Subcommand)]
pub(crate) enum BaselineCommand {
    /// Save the latest value of every metric as baseline NAME (replacing an older one of that name).
    Save {
        /// 1 to 64 letters, digits, '-', '_' or '.'.
        #[arg(value_name = "NAME")]
        name: String,
    },
    /// List saved baselines.
    List,
}

pub(crate) fn run(global: &Global, args: BaselineArgs) -> i32 {
    match args.command {
        BaselineCommand::Save { name } => match super::kept::save_baseline(global, &name) {
            Ok(n) => {
                if global.json {
                    print_json(&serde_json::json!({ "baseline": name, "metrics": n }));
                } else {
                    println!("Baseline '{name}' saved: {n} metric(s).");
                }
                exit::OK
            }
            Err(e) => e.report(),
        },
        BaselineCommand::List => match super::kept::baselines(global) {
            Ok(b) => {
                if global.json {
                    print_json(&serde_json::json!({ "baselines": b }));
                } else if b.is_empty() {
                    println!("No baselines saved.");
                } else {
                    let mut t = vec![vec![
                        "name".to_string(),
                        "saved (UTC)".into(),
                        "host".into(),
                        "metrics".into(),
                    ]];
                    for x in &b {
                        t.push(vec![
                            x.name.clone(),
                            format_ts(x.ts),
                            x.host.clone(),
                            x.metrics.to_string(),
                        ]);
                    }
                    print!("{}", table(&t));
                }
                exit::OK
            }
            Err(e) => e.report(),
        },
    }
}
