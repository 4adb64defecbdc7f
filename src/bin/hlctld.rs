//! `hlctld`: the hlctl system daemon (D-Bus `org.hlctl.Daemon1`). All logic
//! lives in the library (`hlctl::dbus`).

use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;
use hlctl::dbus::service::{self, Bus};
use hlctl::dbus::state::Options;
use hlctl::paths::Paths;

/// The hlctl system daemon: serves org.hlctl.Daemon1 on the system bus,
/// authorizes every change through polkit, re-applies persisted NIC settings.
#[derive(Debug, Parser)]
#[command(name = "hlctld", version, max_term_width = 100)]
struct Args {
    /// Serve on the bus at ADDRESS (e.g. unix:path=/tmp/test-bus) instead of the system bus.
    #[arg(long, value_name = "ADDRESS", conflicts_with = "session")]
    bus: Option<String>,

    /// Serve on the session bus (development only; polkit still decides).
    #[arg(long)]
    session: bool,

    /// Treat DIR as the root for hlctl's files (state directory, sysctl.d).
    #[arg(long, value_name = "DIR", default_value = "/")]
    root: PathBuf,

    /// Directory of persisted state [default: ROOT/var/lib/hlctl].
    #[arg(long, value_name = "DIR")]
    state_dir: Option<PathBuf>,

    /// sysctl.d directory that receives 90-hlctl.conf [default: ROOT/etc/sysctl.d].
    #[arg(long, value_name = "DIR")]
    sysctl_dir: Option<PathBuf>,

    /// Seconds a finished job stays on the bus so its result can be read.
    #[arg(long, value_name = "SECONDS", default_value_t = 60)]
    job_linger: u64,

    /// Testing aid: hold every change this many milliseconds before applying it.
    #[arg(long, value_name = "MS", default_value_t = 0, hide = true)]
    test_hold_ms: u64,

    /// Log debug messages too.
    #[arg(short, long)]
    verbose: bool,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let target = hlctl::dbus::logging::init(args.verbose);
    let mut paths = Paths::under(&args.root);
    if let Some(d) = args.state_dir {
        paths.state_dir = d;
    }
    if let Some(d) = args.sysctl_dir {
        paths.sysctl_search[0] = d.clone();
        paths.sysctl_dir = d;
    }
    let bus = match (args.bus, args.session) {
        (Some(a), _) => Bus::Address(a),
        (None, true) => Bus::Session,
        (None, false) => Bus::System,
    };
    tracing::info!("logging to {target}");
    service::run(
        bus,
        Options {
            paths,
            hold: Duration::from_millis(args.test_hold_ms),
            job_linger: Duration::from_secs(args.job_linger),
        },
    )?;
    Ok(())
}
