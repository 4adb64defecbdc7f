//! `hlctl export`: persisted (or current) NIC settings in another tool's format.

use clap::{Args, ValueEnum};
use serde_json::json;

use super::exit;
use super::global::Global;
use super::output::print_json;
use crate::ops::nic::ExportError;

#[derive(Clone, Copy, Debug, ValueEnum)]
pub(crate) enum Format {
    /// A systemd .link file (RxBufferSize=, RxFlowControl=, GenericReceiveOffload=, MTUBytes=, BitsPerSecond=, ...).
    SystemdLink,
    /// A udev rule for what no .link key has (RPS), for hosts without hlctld.
    UdevRule,
}

/// Print an interface's persisted hlctl settings in another tool's format.
///
/// Example: hlctl export eth2 --format systemd-link > /etc/systemd/network/10-hlctl-eth2.link
/// (and --format udev-rule > /etc/udev/rules.d/90-hlctl-eth2.rules for RPS)
#[derive(Debug, Args)]
pub(crate) struct ExportArgs {
    /// The interface whose persisted settings to export.
    #[arg(value_name = "IFACE")]
    pub(crate) interface: String,

    /// Output format.
    #[arg(long, value_enum, default_value = "systemd-link")]
    pub(crate) format: Format,
}

pub(crate) fn run(global: &Global, args: ExportArgs) -> i32 {
    let (udev, name) = match args.format {
        Format::SystemdLink => (false, "systemd-link"),
        Format::UdevRule => (true, "udev-rule"),
    };
    let text = match crate::ops::nic::export(&global.paths(), &args.interface, udev) {
        Ok(t) => t,
        Err(e @ (ExportError::NotPersisted { .. } | ExportError::NothingForUdev { .. })) => {
            eprintln!("hlctl: {e}");
            return exit::INVALID;
        }
        Err(ExportError::State(e)) => return super::fail(&e, exit::FAILED),
    };
    if global.json {
        print_json(&json!({ "interface": args.interface, "format": name, "content": text }));
    } else {
        print!("{text}");
    }
    exit::OK
}
