//! `hlctl export`: persisted (or current) NIC settings in another tool's format.

use clap::{Args, ValueEnum};
use serde_json::json;

use super::exit;
use super::global::Global;
use super::output::print_json;
use crate::nic::{export, persist, read};

#[derive(Clone, Copy, Debug, ValueEnum)]
pub(crate) enum Format {
    /// A systemd .link file (RxBufferSize=, RxFlowControl=, GenericReceiveOffload=, MTUBytes=, BitsPerSecond=, ...).
    SystemdLink,
}

/// Print an interface's persisted hlctl settings in another tool's format.
///
/// Example: hlctl export eth2 --format systemd-link > /etc/systemd/network/10-hlctl-eth2.link
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
    let path = global.paths().nic_state_file();
    let state = match persist::State::load(&path) {
        Ok(s) => s,
        Err(e) => return super::fail(&e, exit::FAILED),
    };
    // The live MAC finds the entry even after a rename; without netlink, match by name.
    let mac = super::netlink()
        .ok()
        .and_then(|mut nl| read::interface(&mut nl, &args.interface).ok())
        .and_then(|i| i.mac);
    let Some(entry) = state.find(&args.interface, mac.as_deref()) else {
        eprintln!(
            "hlctl: {}: no persisted settings in {} (persist some with `hlctl set {} ... --persist`)",
            args.interface,
            path.display(),
            args.interface
        );
        return exit::INVALID;
    };
    let text = match args.format {
        Format::SystemdLink => {
            export::systemd_link(&args.interface, entry.mac.as_deref(), &entry.settings)
        }
    };
    if global.json {
        print_json(
            &json!({ "interface": args.interface, "format": "systemd-link", "content": text }),
        );
    } else {
        print!("{text}");
    }
    exit::OK
}
