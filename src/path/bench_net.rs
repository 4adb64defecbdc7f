//! [`Measure`] over the built-in iperf3-protocol client: one TCP stream to
//! the peer's server (`hlctl serve`, `iperf3 -s`), upload = this host sends,
//! download = reverse mode; ICMP echo probes run alongside to see whether a
//! queue builds under load.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use super::Peer;
use super::icmp::Pinger;
use super::rtt::min_connect_rtt;
use super::throughput::{Direction, Measure, MeasureError, Sample, median};
use crate::bench::net::{self, ClientConfig, NetError};
use crate::bench::progress::{Cancel, Progress};

pub(crate) struct NetMeasure {
    pub(crate) peer: Peer,
    /// Seconds per run.
    pub(crate) time_s: u32,
    /// The warm-up every run of this measure omits, chosen once from the
    /// path's round-trip time ([`warm_up_s`]) so that all runs compare.
    warm_up: OnceLock<WarmUp>,
}

#[derive(Clone, Copy)]
struct WarmUp {
    omit_s: u32,
    rtt: Option<Duration>,
}

/// Below this round-trip time a run needs no warm-up: TCP's slow start,
/// which doubles the window every round trip from 10 segments, fills even a
/// 10 Gbit/s path of 2 ms (2.5 MB, ~1,700 segments) in 8 round trips, 16 ms:
/// 0.3% of a 5 s run. Omitting a whole second cost every run 1 s of 6.
pub(crate) const WARM_UP_RTT: Duration = Duration::from_millis(2);

/// Seconds omitted at the start of each run: 1 on runs of 3 s and more over
/// a path whose round trip is `WARM_UP_RTT` or longer, or unknown; else 0.
pub(crate) fn warm_up_s(time_s: u32, rtt: Option<Duration>) -> u32 {
    match rtt {
        _ if time_s < 3 => 0,
        Some(r) if r < WARM_UP_RTT => 0,
        _ => 1,
    }
}

impl NetMeasure {
    pub(crate) fn new(peer: Peer, time_s: u32) -> Self {
        NetMeasure {
            peer,
            time_s,
            warm_up: OnceLock::new(),
        }
    }

    /// The warm-up, from the fastest of three TCP handshakes to the peer's
    /// port (taken once, before the first run).
    fn warm_up(&self) -> WarmUp {
        *self.warm_up.get_or_init(|| {
            let rtt = self
                .peer
                .resolve()
                .and_then(|a| min_connect_rtt(a, 3, Duration::from_secs(2)))
                .ok();
            WarmUp {
                omit_s: warm_up_s(self.time_s, rtt),
                rtt,
            }
        })
    }
}

/// Echo RTTs (ms) taken every 50 ms until `stop` is set.
fn ping_while(dest: std::net::IpAddr, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<Vec<f64>> {
    std::thread::spawn(move || {
        let Ok(mut p) = Pinger::new(dest) else {
            return Vec::new();
        };
        let mut v = Vec::new();
        // Let the transfer get going first.
        std::thread::sleep(Duration::from_millis(300));
        while !stop.load(Ordering::SeqCst) {
            if let Ok(Some(d)) = p.echo(64, Duration::from_millis(500)) {
                v.push(d.as_secs_f64() * 1000.0);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        v
    })
}

impl Measure for NetMeasure {
    fn sample(
        &self,
        dir: Direction,
        progress: &dyn Progress,
        cancel: &Cancel,
    ) -> Result<Sample, MeasureError> {
        let mut cfg = ClientConfig::new(self.peer.host.clone(), self.peer.port);
        cfg.time_s = self.time_s;
        cfg.omit_s = self.warm_up().omit_s;
        cfg.interval = None;
        cfg.direction = match dir {
            Direction::Upload => net::TestDirection::Forward,
            Direction::Download => net::TestDirection::Reverse,
        };
        // A busy peer (it serves someone else) is waited for within
        // `cfg.busy_window`, as `check` waits, saying so; other failures (a
        // server still tearing down an earlier connection: our own
        // reachability probes, a previous run's teardown) are tried again
        // twice, half a second apart.
        let mut attempt = 0;
        let dev = self.peer.ip().ok().and_then(super::route::egress_interface);
        let (rep, rtts, cores) = loop {
            attempt += 1;
            let stop = Arc::new(AtomicBool::new(false));
            // The loaded round trip is probed from the moment the peer has
            // taken the test, never while it is busy with another.
            let mut pinger = None;
            let ip = self.peer.ip().ok();
            let mut accepted = || {
                if pinger.is_none() {
                    pinger = ip.map(|ip| ping_while(ip, stop.clone()));
                }
            };
            let (r, cores) = crate::cpu::sample::around(dev.as_deref(), || {
                net::run_client_waiting(&cfg, progress, cancel, &mut accepted)
            });
            stop.store(true, Ordering::SeqCst);
            let mut rtts = pinger.and_then(|h| h.join().ok()).unwrap_or_default();
            rtts.sort_by(|a, b| a.total_cmp(b));
            match r {
                Ok((rep, _)) => break (rep, rtts, cores),
                Err(NetError::Cancelled) => return Err(MeasureError::Cancelled),
                Err(e @ NetError::BusyTooLong { .. }) => {
                    return Err(MeasureError::Failed(e.to_string()));
                }
                Err(e) if attempt >= 3 || cancel.is_cancelled() => {
                    return Err(MeasureError::Failed(format!("{}: {e}", self.peer.label())));
                }
                Err(_) => std::thread::sleep(Duration::from_millis(500)),
            }
        };
        Ok(Sample {
            bps: rep.main.received_bps,
            rtt_loaded_ms: (!rtts.is_empty()).then(|| median(&rtts)),
            retransmits: rep.main.retransmits,
            local_cpu_percent: Some(rep.cpu.local_percent),
            remote_cpu_percent: Some(rep.cpu.remote_percent),
            cores,
        })
    }

    fn describe(&self) -> String {
        let w = self.warm_up();
        let warm = match (w.omit_s, w.rtt) {
            (0, Some(rtt)) if self.time_s >= 3 => {
                format!(", no warm-up (RTT {:.2} ms)", rtt.as_secs_f64() * 1000.0)
            }
            (0, _) => String::new(),
            (s, _) => format!(" after {s} s of warm-up"),
        };
        format!("1 TCP stream, {} s per run{warm}", self.time_s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A child killed by its pid and reaped when dropped.
    struct Child(std::process::Child);
    impl Drop for Child {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }

    fn spawn(args: &[&str]) -> Child {
        Child(
            std::process::Command::new("iperf3")
                .args(args)
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .expect("iperf3 (Debian's 3.12) is installed"),
        )
    }

    /// Doctor's and tune's runs wait for a busy peer as `check` does and
    /// say so (a real `iperf3 -s` kept busy by a real `iperf3 -c`).
    #[test]
    fn a_run_waits_for_a_busy_iperf3_and_says_so() {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .unwrap();
        let p = port.to_string();
        let _server = spawn(&["-s", "-B", "127.0.0.1", "-p", &p]);
        let t0 = std::time::Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                t0.elapsed() < Duration::from_secs(5),
                "iperf3 -s never listened"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        std::thread::sleep(Duration::from_millis(300));
        let _other = spawn(&["-c", "127.0.0.1", "-p", &p, "-t", "3"]);
        std::thread::sleep(Duration::from_millis(800));
        let m = NetMeasure::new(
            Peer {
                host: "127.0.0.1".into(),
                port,
            },
            1,
        );
        let said = std::sync::Mutex::new(Vec::<String>::new());
        let progress =
            |e: crate::bench::progress::ProgressEvent| said.lock().unwrap().push(e.message);
        let s = m
            .sample(Direction::Upload, &progress, &Cancel::new())
            .expect("measured once the other test is over");
        assert!(s.bps > 0.0);
        let said = said.lock().unwrap();
        assert!(
            said.iter()
                .any(|m| m.contains("busy running another test; waiting")),
            "{said:?}"
        );
    }

    #[test]
    fn a_lan_round_trip_needs_no_warm_up_a_long_or_unknown_one_does() {
        let ms = |m: f64| Some(Duration::from_secs_f64(m / 1000.0));
        assert_eq!(warm_up_s(5, ms(0.05)), 0);
        assert_eq!(warm_up_s(5, ms(1.9)), 0);
        assert_eq!(warm_up_s(5, ms(2.0)), 1);
        assert_eq!(warm_up_s(5, ms(30.0)), 1);
        assert_eq!(warm_up_s(5, None), 1);
        // Runs under 3 s never had one.
        assert_eq!(warm_up_s(2, ms(30.0)), 0);
    }

    #[test]
    fn the_warm_up_is_chosen_once_from_the_peers_handshake() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let m = NetMeasure::new(Peer::parse(&format!("127.0.0.1:{port}")).unwrap(), 5);
        let w = m.warm_up();
        assert!(w.rtt.is_some_and(|r| r < WARM_UP_RTT), "loopback handshake");
        assert_eq!(w.omit_s, 0);
        assert!(m.describe().contains("no warm-up (RTT"), "{}", m.describe());
        drop(l);
        // Chosen once: the closed port changes nothing now.
        assert_eq!(m.warm_up().omit_s, 0);
        let closed = NetMeasure::new(Peer::parse(&format!("127.0.0.1:{port}")).unwrap(), 5);
        assert_eq!(closed.warm_up().omit_s, 1, "unknown round trip: warm up");
        assert!(
            closed.describe().ends_with("after 1 s of warm-up"),
            "{}",
            closed.describe()
        );
    }
}
