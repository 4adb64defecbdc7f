//! `hlctld`: the hlctl system daemon (D-Bus `org.hlctl.Daemon1`). All logic
//! lives in the library (`hlctl::dbus`); the command line is
//! `hlctl::dbus::daemon::args::DaemonArgs`.

use clap::Parser;
use hlctl::dbus::daemon::args::DaemonArgs;
use hlctl::dbus::daemon::service;

fn main() -> anyhow::Result<()> {
    let args = DaemonArgs::parse();
    let target = hlctl::dbus::daemon::logging::init(args.verbose);
    tracing::info!("logging to {target}");
    service::run(args.bus(), args.options())?;
    Ok(())
}
