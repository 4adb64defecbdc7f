//! `hlctl serve`: an iperf3-compatible server.

use std::net::IpAddr;
use std::time::Duration;

use clap::Args;

use crate::bench::net::{NetError, Server, ServerConfig, StopReason, TestOutcome};
use crate::bench::progress::{Progress, ProgressEvent};

use super::exit;
use super::global::Global;
use super::output::print_json;

/// Serve network tests to `iperf3 -c` and `hlctl bench net` clients.
///
/// One test at a time, like `iperf3 -s`: a client arriving while a test runs
/// is told the server is busy. Runs until Ctrl-C, until the first test ends
/// (--one-off), or until no client came for --idle-timeout seconds.
///
/// Started by systemd socket activation (`hlctl-serve.socket`, LISTEN_FDS),
/// it serves on the socket it was handed instead of binding one. While this
/// host measures (`hlctl check`) it answers busy too: no test is served on
/// top of another measurement.
///
/// The flags are iperf3's server flags with iperf3's letters and meanings
/// (`hlctl serve -p 5202 -B 10.0.0.1 -1` is `iperf3 -s -p 5202 -B 10.0.0.1 -1`;
/// -J is --json). -V (iperf3's "verbose") is refused rather than read as "version".
#[derive(Debug, Args)]
#[command(disable_version_flag = true)]
pub(crate) struct ServeArgs {
    /// TCP port, also used for UDP tests (0 picks a free one and prints it).
    #[arg(short = 'p', long, value_name = "PORT", default_value_t = 5201)]
    pub(crate) port: u16,
    /// Listen on this address only (default: every IPv6 and IPv4 address).
    #[arg(short = 'B', long, value_name = "ADDR")]
    pub(crate) bind: Option<IpAddr>,
    /// Serve one test, then exit (iperf3's -1).
    #[arg(short = '1', long)]
    pub(crate) one_off: bool,
    /// Exit after this many seconds without a test (1–86400).
    #[arg(long, value_name = "S", value_parser = crate::units::ranged(1u64, 86400))]
    pub(crate) idle_timeout: Option<u64>,
    /// Refuse a test longer than this many seconds (time + omit, and any
    /// unlimited one), and end one that runs past it (iperf3 3.20's flag; 1–86400).
    #[arg(long, value_name = "S", value_parser = crate::units::ranged(1u64, 86400))]
    pub(crate) server_max_duration: Option<u64>,
    /// Refuse a test of more parallel streams (-P) than this (1–128; iperf3's
    /// own limit is 128).
    #[arg(long, value_name = "N", value_parser = crate::units::ranged(1u32, 128))]
    pub(crate) max_streams: Option<u32>,
    /// Refuse a test that asks for more bit/s in all streams, and end one
    /// that runs faster (iperf3's flag; K, M, G, T are powers of 1000).
    #[arg(long, value_name = "RATE", value_parser = super::bench_net::parse_rate)]
    pub(crate) server_bitrate_limit: Option<u64>,
    /// Seconds a client may take for each step of its setup and of the
    /// results exchange (cookie, parameters, streams, results) before it is
    /// dropped (1–600).
    #[arg(long, value_name = "S", default_value_t = 10, value_parser = crate::units::ranged(1u64, 600))]
    pub(crate) setup_timeout: u64,
    /// Seconds a running test may move no data either way (and send no
    /// control message) before it is dropped (iperf3's --rcv-timeout; 1–3600).
    #[arg(long, value_name = "S", default_value_t = 120, value_parser = crate::units::ranged(1u64, 3600))]
    pub(crate) stall_timeout: u64,
    #[command(flatten)]
    pub(crate) auth: super::net_auth::ServerAuthArgs,
}

/// The listening socket systemd passed (socket activation: LISTEN_PID is us,
/// LISTEN_FDS ≥ 1, the socket is descriptor 3).
fn inherited_listener() -> Option<std::net::TcpListener> {
    use std::os::fd::FromRawFd;
    let pid: u32 = std::env::var("LISTEN_PID").ok()?.parse().ok()?;
    let n: u32 = std::env::var("LISTEN_FDS").ok()?.parse().ok()?;
    if pid != std::process::id() || n < 1 {
        return None;
    }
    // Not for children we might start.
    // SAFETY: single-threaded at this point (before the server starts).
    unsafe {
        std::env::remove_var("LISTEN_PID");
        std::env::remove_var("LISTEN_FDS");
        std::env::remove_var("LISTEN_FDNAMES");
    }
    // SAFETY: systemd hands us descriptor 3 as a listening socket we now own.
    Some(unsafe { std::net::TcpListener::from_raw_fd(3) })
}

/// Server log lines on stdout (text mode only).
struct Log {
    json: bool,
}

impl Progress for Log {
    fn report(&self, event: ProgressEvent) {
        if !self.json {
            println!("{}", event.message);
        }
    }
}

/// The server configuration these flags describe.
fn config(global: &Global, args: &ServeArgs) -> Result<ServerConfig, String> {
    let mut cfg = ServerConfig::new(args.port);
    cfg.bind = args.bind;
    cfg.one_off = args.one_off;
    cfg.idle_timeout = args.idle_timeout.map(Duration::from_secs);
    cfg.max_duration = args.server_max_duration.map(Duration::from_secs);
    cfg.max_streams = args.max_streams;
    cfg.max_bitrate_bps = args.server_bitrate_limit.filter(|&b| b > 0);
    cfg.setup_timeout = Duration::from_secs(args.setup_timeout);
    cfg.stall_timeout = Duration::from_secs(args.stall_timeout);
    cfg.exclusive = Some(global.paths().measure_lock_file());
    cfg.auth = args.auth.load()?;
    Ok(cfg)
}

pub(crate) fn run(global: &Global, args: ServeArgs) -> i32 {
    let cfg = match config(global, &args) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("hlctl serve: {e}");
            return exit::INVALID;
        }
    };
    let server = match inherited_listener() {
        Some(l) => Server::from_listener(l, cfg),
        None => Server::bind(cfg),
    };
    let server = match server {
        Ok(s) => s,
        Err(e) => {
            let code = match &e {
                NetError::Bind { source, .. }
                    if source.kind() == std::io::ErrorKind::PermissionDenied =>
                {
                    exit::NOT_PERMITTED
                }
                NetError::Bind { source, .. } if source.kind() == std::io::ErrorKind::AddrInUse => {
                    eprintln!(
                        "hlctl serve: {e} (is another `iperf3 -s` or `hlctl serve` running on this port?)"
                    );
                    return exit::FAILED;
                }
                NetError::Bind { source, .. }
                    if source.kind() == std::io::ErrorKind::AddrNotAvailable =>
                {
                    exit::INVALID
                }
                _ => exit::FAILED,
            };
            eprintln!("hlctl serve: {e}");
            return code;
        }
    };
    let listening = format!("Server listening on {}", server.local_addr());
    if global.json {
        eprintln!("{listening}");
    } else {
        println!("{listening}");
    }
    let cancel = super::interrupt::cancel_on_interrupt();
    let json = global.json;
    let on_test = move |o: &TestOutcome| {
        if json {
            match &o.result {
                Ok(r) => print_json(r),
                Err(e) => print_json(
                    &serde_json::json!({ "peer": o.peer.to_string(), "error": e.to_string() }),
                ),
            }
        }
    };
    match server.run_with(&Log { json }, &cancel, &on_test) {
        Ok(summary) => {
            let msg = match summary.stop_reason {
                StopReason::OneOff => "one-off test done",
                StopReason::IdleTimeout => "idle timeout reached",
                StopReason::Cancelled => "interrupted",
            };
            eprintln!(
                "hlctl serve: {msg}; {} test(s) completed, {} failed, {} busy refusal(s)",
                summary.tests_completed, summary.tests_failed, summary.busy_refusals
            );
            if summary.stop_reason == StopReason::OneOff && summary.tests_failed > 0 {
                exit::FAILED
            } else {
                exit::OK
            }
        }
        Err(e) => {
            eprintln!("hlctl serve: {e}");
            exit::FAILED
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::cli::args::{Cli, Command};

    fn parse(words: &[&str]) -> Result<(Global, ServeArgs), clap::Error> {
        let cli = Cli::try_parse_from(["hlctl", "serve"].iter().chain(words))?;
        match cli.command {
            Command::Serve(a) => Ok((cli.global, a)),
            other => panic!("parsed as {other:?}"),
        }
    }

    #[test]
    fn iperf3_server_spelling() {
        let (g, a) = parse(&["-p", "5202", "-B", "127.0.0.1", "-1", "-J"]).unwrap();
        assert_eq!(a.port, 5202);
        assert_eq!(a.bind, Some(IpAddr::from([127, 0, 0, 1])));
        assert!(a.one_off && g.json);
        assert_eq!(parse(&["--port", "7"]).unwrap().1.port, 7);
        assert_eq!(parse(&[]).unwrap().1.port, 5201);
        let e = parse(&["-V"]).expect_err("-V is iperf3's verbose, not a version request");
        assert_eq!(e.kind(), clap::error::ErrorKind::UnknownArgument);
    }
}
