//! [`Measure`] over the built-in iperf3-protocol client: one TCP stream to
//! the peer's server (`hlctl serve`, `iperf3 -s`), upload = this host sends,
//! download = reverse mode; ICMP echo probes run alongside to see whether a
//! queue builds under load.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use super::Peer;
use super::icmp::Pinger;
use super::measure::{Direction, Measure, MeasureError, Sample, median};
use crate::bench::net::{self, ClientConfig, NetError};
use crate::bench::progress::{Cancel, NoProgress};

pub(crate) struct NetMeasure {
    pub(crate) peer: Peer,
    /// Seconds per run.
    pub(crate) time_s: u32,
}

impl NetMeasure {
    pub(crate) fn new(peer: Peer, time_s: u32) -> Self {
        NetMeasure { peer, time_s }
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
    fn sample(&self, dir: Direction, cancel: &Cancel) -> Result<Sample, MeasureError> {
        let mut cfg = ClientConfig::new(self.peer.host.clone(), self.peer.port);
        cfg.time_s = self.time_s;
        cfg.omit_s = if self.time_s >= 3 { 1 } else { 0 };
        cfg.interval = None;
        cfg.direction = match dir {
            Direction::Upload => net::Direction::Forward,
            Direction::Download => net::Direction::Reverse,
        };
        // A server still busy with an earlier connection (our own reachability
        // probes, a previous run's teardown) may turn the first attempt away.
        let mut attempt = 0;
        let (rep, rtts) = loop {
            attempt += 1;
            let stop = Arc::new(AtomicBool::new(false));
            let pinger = self.peer.ip().ok().map(|ip| ping_while(ip, stop.clone()));
            let r = net::run_client(&cfg, &NoProgress, cancel);
            stop.store(true, Ordering::SeqCst);
            let mut rtts = pinger.and_then(|h| h.join().ok()).unwrap_or_default();
            rtts.sort_by(|a, b| a.total_cmp(b));
            match r {
                Ok(rep) => break (rep, rtts),
                Err(NetError::Cancelled) => return Err(MeasureError::Cancelled),
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
        })
    }

    fn describe(&self) -> String {
        format!("1 TCP stream, {} s per run", self.time_s)
    }
}
