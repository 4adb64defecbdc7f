//! The network part of a check: one peer, both directions, never on top of
//! another measurement. Before each run this host's measurement lock is
//! taken (so our own `hlctl serve` is not serving someone meanwhile); a peer
//! that answers busy (it serves someone else, or measures itself) is tried
//! again after a random back-off until the window closes. Every retry is
//! counted; a figure is only ever one whose test the peer accepted alone.

use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::bench::exclusive::MeasureLock;
use crate::bench::net::busy::{Backoff, BusyWait};
use crate::bench::net::{self, ClientConfig, NetError, NetReport};
use crate::bench::progress::{Cancel, NoProgress};
use crate::path::Peer;
use crate::path::throughput::Direction;

/// One direction to one peer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct DirectionResult {
    pub(crate) direction: Direction,
    pub(crate) bps: Option<f64>,
    pub(crate) retransmits: Option<u64>,
    /// Times the peer (or this host) was busy and the run was tried again.
    pub(crate) busy_retries: u32,
    pub(crate) error: Option<String>,
    /// This host's cores during the run that gave the figure (`crate::cpu`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) cores: Option<crate::cpu::report::CoreReport>,
}

/// Both directions and the idle round-trip time to one peer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct PeerResult {
    pub(crate) peer: String,
    /// The address `peer`'s host resolved to (itself when it is one): what
    /// joins a peer named by host name to the peer's own link.
    #[serde(default)]
    pub(crate) address: Option<String>,
    pub(crate) interface: Option<String>,
    pub(crate) rtt_seconds: Option<f64>,
    pub(crate) directions: Vec<DirectionResult>,
}

impl PeerResult {
    pub(crate) fn bps(&self, d: Direction) -> Option<f64> {
        self.directions
            .iter()
            .find(|x| x.direction == d)
            .and_then(|x| x.bps)
    }

    pub(crate) fn busy_retries(&self) -> u32 {
        self.directions.iter().map(|d| d.busy_retries).sum()
    }
}

/// Why one attempt did not give a figure.
enum Attempt {
    Busy,
    Failed(String),
}

fn attempt(
    cfg: &ClientConfig,
    lock: &Path,
    cancel: &Cancel,
    accepted: &mut dyn FnMut(),
) -> Result<NetReport, Attempt> {
    let _held = match MeasureLock::try_acquire(lock) {
        Ok(Some(g)) => Some(g),
        Ok(None) => return Err(Attempt::Busy), // our own server is serving someone
        Err(_) => None,                        // no state dir to lock in: measure anyway
    };
    let peer = Peer {
        host: cfg.host.clone(),
        port: cfg.port,
    };
    let dev = peer
        .ip()
        .ok()
        .and_then(crate::path::route::egress_interface);
    let (r, cores) = crate::cpu::sample::around(dev.as_deref(), || {
        net::run_client_then(cfg, &NoProgress, cancel, accepted)
    });
    match r {
        Ok(mut r) => {
            r.set_cores(cores);
            Ok(r)
        }
        Err(NetError::ServerBusy) => Err(Attempt::Busy),
        Err(e) => Err(Attempt::Failed(e.to_string())),
    }
}

/// Measure one direction, retrying a busy peer within the window;
/// `accepted` runs each time the peer takes one of our tests (see
/// [`net::run_client_then`]), with this host's lock held.
pub(crate) fn direction(
    peer: &Peer,
    dir: Direction,
    time_s: u32,
    lock: &Path,
    backoff: &Backoff,
    cancel: &Cancel,
    accepted: &mut dyn FnMut(),
) -> DirectionResult {
    let mut cfg = ClientConfig::new(peer.host.clone(), peer.port);
    cfg.time_s = time_s;
    cfg.omit_s = if time_s >= 3 { 1 } else { 0 };
    cfg.interval = None;
    cfg.direction = match dir {
        Direction::Upload => net::TestDirection::Forward,
        Direction::Download => net::TestDirection::Reverse,
    };
    let mut busy = BusyWait::new(*backoff);
    let mut out = DirectionResult {
        direction: dir,
        bps: None,
        retransmits: None,
        busy_retries: 0,
        error: None,
        cores: None,
    };
    // Other failures (a server still tearing down its previous test) are
    // tried again twice, half a second apart.
    let mut failures = 0;
    loop {
        if cancel.is_cancelled() {
            out.error = Some("cancelled".into());
            return out;
        }
        match attempt(&cfg, lock, cancel, accepted) {
            Ok(r) => {
                out.bps = Some(r.main.received_bps);
                out.retransmits = r.main.retransmits;
                out.cores = r.cores;
                return out;
            }
            Err(Attempt::Failed(e)) => {
                failures += 1;
                if failures >= 3 {
                    out.error = Some(format!("{}: {e}", peer.label()));
                    return out;
                }
                std::thread::sleep(Duration::from_millis(500));
            }
            Err(Attempt::Busy) => {
                let waited = busy.wait(&peer.label(), &NoProgress, cancel);
                out.busy_retries = busy.retries;
                if let Err(e) = waited {
                    out.error = Some(match e {
                        NetError::Cancelled => "cancelled".into(),
                        e => e.to_string(),
                    });
                    return out;
                }
            }
        }
    }
}

/// The median of a few ICMP echoes, in seconds. Idle only where the peer
/// is ours alone: [`peer`] calls it when the peer has taken our test.
pub(crate) fn idle_rtt(peer: &Peer) -> Option<f64> {
    let mut p = crate::path::icmp::Pinger::new(peer.ip().ok()?).ok()?;
    let mut v: Vec<f64> = (0..5)
        .filter_map(|_| p.echo(64, Duration::from_millis(500)).ok().flatten())
        .map(|d| d.as_secs_f64())
        .collect();
    v.sort_by(|a, b| a.total_cmp(b));
    (!v.is_empty()).then(|| crate::path::throughput::median(&v))
}

/// Both directions to one peer, and the idle round-trip time, taken once,
/// when the peer first takes one of our tests and this host's lock is held
/// (so neither end is serving someone else); a peer that never took one has
/// none.
pub(crate) fn peer(
    peer: &Peer,
    time_s: u32,
    lock: &Path,
    backoff: &Backoff,
    cancel: &Cancel,
) -> PeerResult {
    let address = peer.ip().ok();
    let interface = address.and_then(crate::path::route::egress_interface);
    let mut rtt: Option<Option<f64>> = None;
    // A peer where no benchmark server answers is named within seconds, not
    // after three timed-out attempts each way (a busy one is still tried).
    let dead = match net::check_peer(&peer.host, peer.port) {
        Err(e) if !matches!(e, NetError::ServerBusy) => Some(format!("{}: {e}", peer.label())),
        _ => None,
    };
    let directions = Direction::BOTH
        .iter()
        .map(|d| match &dead {
            Some(why) => DirectionResult {
                direction: *d,
                bps: None,
                retransmits: None,
                busy_retries: 0,
                error: Some(why.clone()),
                cores: None,
            },
            None => {
                let mut probe = || {
                    rtt.get_or_insert_with(|| idle_rtt(peer));
                };
                direction(peer, *d, time_s, lock, backoff, cancel, &mut probe)
            }
        })
        .collect();
    PeerResult {
        peer: peer.label(),
        address: address.map(|a| a.to_string()),
        interface,
        rtt_seconds: rtt.flatten(),
        directions,
    }
}
