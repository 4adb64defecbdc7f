//! Logging for hlctld: to journald when its socket is there, else to stderr.

use tracing_subscriber::filter::LevelFilter;
use tracing_subscriber::prelude::*;

const JOURNALD_SOCKET: &str = "/run/systemd/journal/socket";

/// Install the global subscriber. Returns where logs go (`journald` or `stderr`).
pub fn init(verbose: bool) -> &'static str {
    let level = if verbose {
        LevelFilter::DEBUG
    } else {
        LevelFilter::INFO
    };
    // zbus logs every message at debug level: keep it at warnings unless asked.
    let filter = tracing_subscriber::filter::Targets::new()
        .with_default(level)
        .with_target(
            "zbus",
            if verbose {
                LevelFilter::DEBUG
            } else {
                LevelFilter::WARN
            },
        );
    if std::path::Path::new(JOURNALD_SOCKET).exists()
        && let Ok(layer) = tracing_journald::layer()
    {
        // Our structured fields become HLCTL_IFACE, HLCTL_ACTION,
        // HLCTL_CALLER_UID... (`journalctl -u hlctld HLCTL_IFACE=eth0`).
        let layer = layer
            .with_syslog_identifier("hlctld".into())
            .with_field_prefix(Some("HLCTL".into()));
        if tracing_subscriber::registry()
            .with(layer.with_filter(filter.clone()))
            .try_init()
            .is_ok()
        {
            return "journald";
        }
    }
    let _ = tracing_subscriber::registry()
        .with(
            tracing_subscriber::fmt::layer()
                .with_writer(std::io::stderr)
                .with_ansi(false)
                .with_filter(filter),
        )
        .try_init();
    "stderr"
}
