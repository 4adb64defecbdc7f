//! `hlctl config`: validate and show hlctl.toml; the systemd generator.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::exit;
use super::global::Global;
use super::output::print_json;

/// Validate or show the configuration file (hlctl.toml(5)).
#[derive(Debug, Args)]
pub(crate) struct ConfigArgs {
    #[command(subcommand)]
    pub(crate) command: ConfigCommand,
}

#[derive(Debug, Subcommand)]
pub(crate) enum ConfigCommand {
    /// Validate FILE [default: the configuration file]: every problem with
    /// its line and key. Exit 0 valid, 2 problems found.
    Check {
        #[arg(value_name = "FILE")]
        file: Option<PathBuf>,
    },
    /// The configuration in effect (defaults filled in; wrong keys keep their defaults).
    Show,
    /// The systemd generator (run by systemd as
    /// /usr/lib/systemd/system-generators/hlctl-generator NORMAL [EARLY LATE]):
    /// the timer's schedule and the units the file enables.
    #[command(hide = true)]
    SystemdGenerator {
        #[arg(value_name = "DIR")]
        normal: PathBuf,
        #[arg(value_name = "DIR")]
        rest: Vec<PathBuf>,
    },
}

pub(crate) fn run(global: &Global, args: ConfigArgs) -> i32 {
    let paths = global.paths();
    match args.command {
        ConfigCommand::Check { file } => {
            let required = file.is_some() || global.config.is_some();
            let f = file.unwrap_or(paths.config_file);
            let l = crate::config::load(&f, required);
            if global.json {
                print_json(&l);
            } else if l.problems.is_empty() {
                if l.exists {
                    println!("{}: valid", f.display());
                } else {
                    println!("{}: not present; the defaults apply", f.display());
                }
            } else {
                eprintln!("{}: {} problem(s):", f.display(), l.problems.len());
                for p in &l.problems {
                    eprintln!("  {p}");
                }
            }
            if l.problems.is_empty() {
                exit::OK
            } else {
                exit::INVALID
            }
        }
        ConfigCommand::Show => {
            let l = crate::config::load(&paths.config_file, global.config.is_some());
            for p in &l.problems {
                eprintln!("hlctl config: warning: {p} (ignored)");
            }
            if global.json {
                print_json(&l.config);
            } else {
                print!("{}", toml::to_string_pretty(&l.config).unwrap_or_default());
            }
            exit::OK
        }
        ConfigCommand::SystemdGenerator { normal, .. } => {
            // A generator must not fail the boot: problems are only reported.
            let l = crate::config::load(&paths.config_file, false);
            for p in &l.problems {
                eprintln!("hlctl-generator: {p} (ignored)");
            }
            let items = crate::config::systemd::generate(&l.config);
            if let Err(e) = crate::config::systemd::write(&normal, &items) {
                eprintln!("hlctl-generator: {}: {e}", normal.display());
                return exit::FAILED;
            }
            exit::OK
        }
    }
}
