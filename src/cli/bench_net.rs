//! `hlctl bench net`: an iperf3-compatible network throughput test.

use std::io::IsTerminal;

use clap::Args;

use crate::bench::net::{NetError, TestDirection, iperf3_json, text};
use crate::bench::progress::{Progress, ProgressEvent};
use crate::dbus::wire::bench::NetParams;
use crate::path::peer::{DEFAULT_PORT, PeerSpec};

use super::error::CliError;
use super::exit;
use super::global::Global;
use super::output::{ProgressBar, print_json};

/// Measure throughput to a server running `iperf3 -s` or `hlctl serve`.
///
/// Speaks iperf3's protocol, so results sit next to iperf3's: per-interval
/// lines while the test runs, then sender and receiver totals, TCP
/// retransmits and RTT, UDP jitter and loss, and CPU use on both ends.
///
/// The flags are iperf3's client flags with iperf3's letters and meanings:
/// `hlctl bench net -c HOST -p PORT -t 30 -P 4 -R` runs the test that
/// `iperf3 -c HOST -p PORT -t 30 -P 4 -R` runs. -J (--json) writes iperf3
/// 3.12's JSON (`start`, `intervals`, `end`) with hlctl's own report under
/// the extra key `hlctl`; the text ends with iperf3's `sender` and
/// `receiver` lines, so `| grep sender` works as with iperf3. iperf3 flags
/// hlctl has no option for (e.g. -n, -C, -4) are refused, and so is
/// -V (iperf3's "verbose", clap's "version" elsewhere): nothing runs unasked.
///
/// One difference in how the data is received: an unpaced TCP receiver
/// (this client with -R or --bidir, and `hlctl serve`) asks the kernel to
/// wake it once per block of -l bytes (SO_RCVLOWAT), where iperf3 wakes on
/// every segment. The bytes counted and the window offered are the same; on
/// loopback and veth, where the sending CPU pays for every wake-up, the
/// figures come out 3–6% higher than iperf3's. A read still returns what has
/// arrived after 200 ms, so slow streams are counted as they arrive; paced
/// tests (-b) and UDP keep the kernel's default.
#[derive(Debug, Args)]
#[command(disable_version_flag = true)]
pub(crate) struct NetArgs {
    /// The server: HOST, HOST:PORT or [IPV6]:PORT (port 5201 unless given
    /// here or with -p). -c is iperf3's spelling; --peer and -c are the same.
    #[arg(short = 'c', long = "peer", visible_alias = "client", value_name = "HOST[:PORT]",
          value_parser = PeerSpec::parse, required_unless_present = "stray")]
    pub(crate) peer: Option<PeerSpec>,
    /// A host given without -c (`bench net nas`): refused with the hint to
    /// write `-c nas`, as iperf3 wants it.
    #[arg(value_name = "HOST", hide = true)]
    pub(crate) stray: Option<String>,
    /// The server's port (iperf3's -p), 1–65535 [default: the port in --peer, else 5201].
    #[arg(short = 'p', long = "port", value_name = "PORT",
          value_parser = crate::units::at_least(1u16))]
    pub(crate) port: Option<u16>,
    /// Seconds to measure, after the omit period (1–86400).
    #[arg(short = 't', long = "time", value_name = "SECS", default_value_t = 10,
          value_parser = crate::units::ranged(1u32, 86400))]
    pub(crate) time: u32,
    /// Parallel streams, per direction with --bidir (1–128).
    #[arg(short = 'P', long = "parallel", value_name = "N", default_value_t = 1,
          value_parser = crate::units::ranged(1u32, 128))]
    pub(crate) parallel: u32,
    /// Reverse: the server sends and this machine receives.
    #[arg(short = 'R', long = "reverse", conflicts_with = "bidir")]
    pub(crate) reverse: bool,
    /// Send and receive at the same time (-P streams each way).
    #[arg(long)]
    pub(crate) bidir: bool,
    /// Use UDP instead of TCP (default rate 1 Mbit/s per stream; set it with -b).
    #[arg(short = 'u', long = "udp")]
    pub(crate) udp: bool,
    /// Target rate per stream in bit/s; K, M, G, T multiply by powers of 1000
    /// (e.g. 500M, 1G). TCP default: unlimited; UDP default: 1M.
    #[arg(short = 'b', long = "bitrate", value_name = "RATE", value_parser = parse_rate)]
    pub(crate) bitrate: Option<u64>,
    /// Block size: TCP write size (default 128K) or UDP datagram size
    /// (default: the path MSS, 16–65507); K, M multiply by powers of 1024.
    #[arg(short = 'l', long = "length", value_name = "LEN", value_parser = parse_size)]
    pub(crate) length: Option<u32>,
    /// Socket buffer size (TCP window) on both ends, e.g. 4M.
    #[arg(short = 'w', long = "window", value_name = "SIZE", value_parser = parse_size)]
    pub(crate) window: Option<u32>,
    /// Leave out the first OMIT seconds (TCP slow start) from the results (0–600).
    #[arg(short = 'O', long = "omit", value_name = "OMIT", default_value_t = 0,
          value_parser = crate::units::ranged(0u32, 600))]
    pub(crate) omit: u32,
    /// Seconds between interval lines (0.1–60); 0 turns them off.
    #[arg(short = 'i', long = "interval", value_name = "SECS", default_value_t = 1.0, value_parser = parse_interval)]
    pub(crate) interval: f64,
    /// Seconds within which a busy server (it runs someone else's test) is
    /// tried again after a random back-off, saying so (0–86400; 0 fails at
    /// once) [default: 600, as `check`].
    #[arg(long = "busy-window", value_name = "SECS",
          value_parser = crate::units::ranged(0u64, 86_400))]
    pub(crate) busy_window: Option<u64>,
    /// iperf3 3.17's --json-stream (implies -J): one JSON object a line,
    /// `{"event": "start"|"interval"|"end"|"error", "data": …}`, in iperf3
    /// 3.21's layout, each line as the test reaches it: `start` when it
    /// starts, each interval as it ends, then `end` (after an `error`, an
    /// empty one). Runs in this process, not through hlctld.
    #[arg(long)]
    pub(crate) json_stream: bool,
    /// TCP receivers (the server; hlctl itself with -R) discard the data
    /// without copying it (MSG_TRUNC), as iperf3 3.19's --skip-rx-copy.
    #[arg(long)]
    pub(crate) skip_rx_copy: bool,
    /// Pace each TCP stream at RATE bit/s in the kernel (SO_MAX_PACING_RATE,
    /// on both ends), as iperf3's --fq-rate.
    #[arg(long = "fq-rate", value_name = "RATE", value_parser = parse_rate)]
    pub(crate) fq_rate: Option<u64>,
    /// Zero copy (iperf3's -Z, TCP only): TCP senders (this machine; the
    /// server too with -R or --bidir) send each block from a memory file
    /// with sendfile(2) instead of copying it from user space.
    #[arg(short = 'Z', long = "zerocopy")]
    pub(crate) zerocopy: bool,
    /// UDP segmentation offloads (iperf3 3.21's --gsro, with -u): each send
    /// carries as many whole datagrams as fit in 65507 bytes (UDP_SEGMENT),
    /// each receive takes what the kernel coalesced (UDP_GRO), on both ends
    /// where their kernels have them.
    #[arg(long)]
    pub(crate) gsro: bool,
    /// TCP keepalive on the control connection (iperf3 3.19's --cntl-ka):
    /// IDLE seconds before the first probe, INTV seconds between probes,
    /// CNT probes (each may be left out: the kernel's default); IDLE must
    /// exceed INTV × CNT.
    #[arg(long = "cntl-ka", value_name = "IDLE/INTV/CNT", num_args = 0..=1, default_missing_value = "", require_equals = true)]
    pub(crate) cntl_ka: Option<String>,
    #[command(flatten)]
    pub(crate) auth: super::net_auth::ClientAuthArgs,
}

fn split_suffix(s: &str) -> Result<(f64, u32), String> {
    let s = s.trim();
    let (num, exp) = match s.chars().last() {
        Some('k' | 'K') => (&s[..s.len() - 1], 1),
        Some('m' | 'M') => (&s[..s.len() - 1], 2),
        Some('g' | 'G') => (&s[..s.len() - 1], 3),
        Some('t' | 'T') => (&s[..s.len() - 1], 4),
        _ => (s, 0),
    };
    let v: f64 = num
        .parse()
        .map_err(|_| format!("`{s}` is not a number with an optional K/M/G/T suffix"))?;
    if !v.is_finite() || v < 0.0 {
        return Err(format!("`{s}` must be a non-negative number"));
    }
    Ok((v, exp))
}

/// A rate: K/M/G/T are powers of 1000 (as iperf3's -b).
pub(crate) fn parse_rate(s: &str) -> Result<u64, String> {
    if s.contains('/') {
        return Err("bursts (RATE/COUNT) are not supported; give a plain rate such as 500M".into());
    }
    let (v, exp) = split_suffix(s)?;
    let bps = v * 1000f64.powi(exp as i32);
    if bps >= u64::MAX as f64 {
        return Err(format!("`{s}` is too large"));
    }
    Ok(bps as u64)
}

/// A size: K/M/G are powers of 1024 (as iperf3's -l and -w).
pub(crate) fn parse_size(s: &str) -> Result<u32, String> {
    let (v, exp) = split_suffix(s)?;
    let bytes = v * 1024f64.powi(exp as i32);
    if bytes < 1.0 || bytes > u32::MAX as f64 {
        return Err(format!("`{s}` must be between 1 byte and 4G"));
    }
    Ok(bytes as u32)
}

fn parse_interval(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .parse()
        .map_err(|_| format!("`{s}` is not a number of seconds"))?;
    if v == 0.0 || (0.1..=60.0).contains(&v) {
        Ok(v)
    } else {
        Err(format!(
            "`{s}` is outside 0.1–60 seconds (0 turns interval lines off)"
        ))
    }
}

impl NetArgs {
    /// Flags that do not go together (or a malformed --cntl-ka): refused,
    /// naming the flag, rather than running a different test than the one
    /// asked for.
    fn refuse_mismatched(&self) -> Result<(), String> {
        if self.zerocopy && self.udp {
            return Err("-Z (zero copy) is for TCP, as in iperf3: leave out -Z or -u".into());
        }
        if self.gsro && !self.udp {
            return Err("--gsro is for UDP: add -u, or leave out --gsro".into());
        }
        if let Some(ka) = &self.cntl_ka {
            crate::bench::net::KeepAlive::parse(ka)?;
        }
        if self.fq_rate.is_some() && self.udp {
            return Err("--fq-rate is for TCP here: hlctl paces UDP with -b; use -b RATE".into());
        }
        Ok(())
    }

    /// The server's port: from -p or from --peer HOST:PORT (both only when
    /// they agree), else 5201.
    pub(crate) fn port(&self) -> Result<u16, String> {
        match (self.peer.as_ref().and_then(|p| p.port), self.port) {
            (Some(a), Some(b)) if a != b => Err(format!(
                "the port is given twice, {a} in --peer/-c and {b} in -p/--port: give it once"
            )),
            (a, b) => Ok(b.or(a).unwrap_or(DEFAULT_PORT)),
        }
    }

    /// The job parameters these flags describe (the same on both paths).
    pub(crate) fn to_params(&self) -> Result<NetParams, String> {
        let peer = match (&self.peer, &self.stray) {
            (Some(p), None) => p,
            (None, Some(h)) => {
                return Err(format!(
                    "`{h}` is not an option: to measure against it, write `hlctl bench net -c {h}` (iperf3's -c)"
                ));
            }
            (Some(p), Some(h)) => {
                return Err(format!(
                    "`{h}` is given besides -c {}: give the server once, with -c",
                    p.host
                ));
            }
            (None, None) => return Err("the server is missing: give it with -c HOST".into()),
        };
        self.refuse_mismatched()?;
        Ok(NetParams {
            host: peer.host.clone(),
            port: Some(self.port()?),
            udp: self.udp,
            time_s: Some(self.time),
            parallel: Some(self.parallel),
            direction: Some(
                match (self.reverse, self.bidir) {
                    (true, _) => "reverse",
                    (_, true) => "bidir",
                    _ => "forward",
                }
                .into(),
            ),
            bitrate_bps: self.bitrate,
            length: self.length,
            window: self.window,
            omit_s: Some(self.omit),
            interval_s: Some(self.interval),
            busy_window_s: self.busy_window,
            skip_rx_copy: self.skip_rx_copy,
            fq_rate_bps: self.fq_rate,
            zerocopy: self.zerocopy,
            gsro: self.gsro,
            cntl_ka: self.cntl_ka.clone(),
        })
    }
}

/// Prints each interval message as lines (above the progress bar on a
/// terminal), or with --json-stream each event as its line, as it comes.
struct Lines<'a> {
    bar: &'a ProgressBar,
    json: bool,
    above_bar: bool,
    stream: bool,
}

impl Progress for Lines<'_> {
    fn wants_events(&self) -> bool {
        self.stream
    }

    fn event(&self, name: &str, data: serde_json::Value) {
        // stdout is line-buffered: each line leaves as it is printed.
        println!("{}", iperf3_json::event(name, data));
    }

    fn report(&self, event: ProgressEvent) {
        if self.json {
            self.bar.report(event);
            return;
        }
        if self.above_bar {
            for line in event.message.lines() {
                self.bar.println(line);
            }
        } else {
            println!("{}", event.message);
        }
        self.bar.report(ProgressEvent {
            fraction: event.fraction,
            message: String::new(),
        });
    }
}

/// The exit code of a network benchmark error: its class, the same one
/// hlctld gives the job ([`crate::dbus::wire::bench::net_class`]).
fn exit_code(e: &NetError) -> i32 {
    crate::dbus::wire::bench::net_class(e).exit_code()
}

pub(crate) fn run(global: &Global, args: NetArgs) -> i32 {
    let json = global.json || args.json_stream;
    let checked = args.to_params().and_then(|params| {
        let mut cfg = params.config()?;
        cfg.auth = args.auth.load()?;
        Ok((params, cfg))
    });
    let (params, cfg) = match checked {
        Ok(c) => c,
        Err(e) => {
            eprintln!("hlctl bench net: {e}");
            return exit::INVALID;
        }
    };
    // Credentials stay in this process: never sent to hlctld. So does
    // --json-stream: its events come from the test as it runs, where hlctld's
    // job tells only its latest progress.
    let chosen = if cfg.auth.is_some() || args.json_stream {
        Ok(super::backend::Backend::local(global))
    } else {
        super::backend::Backend::select(global, super::backend::Need::Nothing)
    };
    let mut backend = match chosen {
        Ok(b) => b,
        Err(e) => return e.report(),
    };
    let bar = ProgressBar::new(json);
    let lines = Lines {
        bar: &bar,
        json,
        above_bar: !json && std::io::stderr().is_terminal() && std::io::stdout().is_terminal(),
        stream: args.json_stream,
    };
    if !json {
        println!("Connecting to host {}, port {}", cfg.host, cfg.port);
        if cfg.interval.is_some() {
            println!(
                "{}",
                text::header(cfg.protocol, cfg.direction != TestDirection::Reverse)
            );
        }
    }
    let result = backend.bench("net", &params, &bar, |_, cancel| {
        let who = crate::ops::Requester::this_process();
        crate::ops::bench::net(&global.paths(), &cfg, who, &lines, &cancel)
            .map(super::kept::warn_unstored)
            .map_err(|e| CliError::new(e.to_string(), exit_code(&e)))
    });
    bar.finish();
    let output = if args.json_stream {
        Output::Stream
    } else if json {
        Output::Json
    } else {
        Output::Text
    };
    output.print(result)
}

/// How the result is printed: text, -J's document, or --json-stream's last
/// lines (its `start` and intervals were printed as they came, by [`Lines`]).
enum Output {
    Text,
    Json,
    Stream,
}

impl Output {
    /// Print the result (the error too, on stderr); the exit code.
    fn print(self, result: Result<crate::bench::net::NetReport, CliError>) -> i32 {
        match (result, self) {
            (Ok(report), Output::Text) => print!("{}", text::summary(&report)),
            (Ok(report), Output::Json) => print_json(&iperf3_json::layout(&report)),
            (Ok(report), Output::Stream) => println!("{}", iperf3_json::stream_end(&report)),
            (Err(e), how) => {
                match how {
                    Output::Text => {}
                    Output::Json => print_json(&serde_json::json!({ "error": e.message })),
                    Output::Stream => {
                        for line in iperf3_json::stream_error(&e.message) {
                            println!("{line}");
                        }
                    }
                }
                eprintln!("hlctl bench net: {}", e.message);
                return e.code;
            }
        }
        exit::OK
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::cli::args::{Cli, Command};
    use crate::cli::bench::BenchCommand;

    fn parse(words: &[&str]) -> Result<(Global, NetArgs), clap::Error> {
        let cli = Cli::try_parse_from(["hlctl", "bench", "net"].iter().chain(words))?;
        match cli.command {
            Command::Bench(BenchCommand::Net(a)) => Ok((cli.global, a)),
            other => panic!("parsed as {other:?}"),
        }
    }

    fn net(words: &[&str]) -> NetArgs {
        parse(words).unwrap_or_else(|e| panic!("{words:?}: {e}")).1
    }

    #[test]
    fn iperf3_client_and_port_spelling() {
        let a = net(&["-c", "127.0.0.1", "-p", "5202"]);
        assert_eq!(a.peer.as_ref().unwrap().host, "127.0.0.1");
        assert_eq!(a.port(), Ok(5202));
        assert_eq!(a.to_params().unwrap().port, Some(5202));
        // --peer, -c and iperf3's long --client are one argument.
        for flag in ["--peer", "-c", "--client"] {
            let a = net(&[flag, "nas", "--port", "7000"]);
            assert_eq!(
                (a.peer.as_ref().unwrap().host.as_str(), a.port()),
                ("nas", Ok(7000))
            );
        }
        assert!(parse(&["-c", "a", "--peer", "b"]).is_err(), "one peer only");
        // A host without -c: parsed, then refused with the spelling to use.
        let e = net(&["10.0.0.2"]).to_params().unwrap_err();
        assert!(e.contains("hlctl bench net -c 10.0.0.2"), "{e}");
        assert!(parse(&[]).is_err(), "a server is required");
        // The port may sit in the peer, and then -p must agree with it.
        assert_eq!(net(&["--peer", "nas:6000"]).port(), Ok(6000));
        assert_eq!(net(&["-c", "[::1]:6000", "-p", "6000"]).port(), Ok(6000));
        let twice = net(&["-c", "nas:6000", "-p", "6001"]);
        let err = twice.to_params().unwrap_err();
        assert!(err.contains("6000") && err.contains("6001"), "{err}");
        // Defaults: iperf3's port.
        assert_eq!(net(&["-c", "::1"]).port(), Ok(5201));
        assert_eq!(net(&["-c", "::1"]).peer.unwrap().host, "::1");
        for bad in ["0", "65536", "http"] {
            assert!(parse(&["-c", "nas", "-p", bad]).is_err(), "-p {bad}");
        }
    }

    #[test]
    fn iperf3_test_flags_mean_what_they_mean_in_iperf3() {
        let (g, a) = parse(&[
            "-c", "h", "-t", "30", "-P", "4", "-R", "-u", "-b", "500M", "-l", "1400", "-w", "4M",
            "-O", "2", "-i", "0.5", "-J",
        ])
        .unwrap();
        assert!(g.json, "-J is --json");
        assert_eq!((a.time, a.parallel, a.omit), (30, 4, 2));
        assert!(a.reverse && a.udp && !a.bidir);
        assert_eq!(a.bitrate, Some(500_000_000));
        assert_eq!(a.length, Some(1400));
        assert_eq!(a.window, Some(4 << 20));
        assert_eq!(a.interval, 0.5);
        let p = a.to_params().unwrap();
        assert_eq!(p.direction.as_deref(), Some("reverse"));
        assert!(net(&["-c", "h", "--bidir"]).bidir);
        assert!(parse(&["-c", "h", "-R", "--bidir"]).is_err());
    }

    #[test]
    fn iperf3_flags_without_an_hlctl_option_are_refused() {
        // -V is iperf3's "verbose": never read as clap's "print the version and exit".
        for f in [
            &["-V"][..],
            &["--version"],
            &["-n", "1G"],
            &["-C", "bbr"],
            &["-4"],
        ] {
            let words: Vec<&str> = ["-c", "h"].iter().chain(f).copied().collect();
            let e = parse(&words).expect_err(&format!("{f:?} accepted"));
            assert_eq!(e.kind(), clap::error::ErrorKind::UnknownArgument, "{f:?}");
        }
    }
}
