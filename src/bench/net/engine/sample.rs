//! Interval sampling: byte deltas, TCP_INFO (retransmits, RTT, cwnd) and UDP
//! accounting per stream; the omit period. The caller's
//! [`IntervalText`](crate::bench::net::figures::IntervalText) turns a sample
//! into progress text.

use std::sync::atomic::Ordering;
use std::time::Instant;

use crate::bench::progress::{Progress, ProgressEvent};

use super::super::figures::{IntervalReport, IntervalSample, RttMs, StreamInterval, TcpSample};
use super::super::params::{Protocol, TestDirection};
use super::super::stream::Role;
use super::super::tcp_info;
use super::{DataSock, Engine, Tracked, flip};

/// RTT samples of a sending TCP stream (µs).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct RttAcc {
    min: u32,
    max: u32,
    sum: u64,
    n: u64,
}

impl RttAcc {
    pub(super) fn add(&mut self, v: u32) {
        if self.n == 0 || v < self.min {
            self.min = v;
        }
        self.max = self.max.max(v);
        self.sum += v as u64;
        self.n += 1;
    }
    pub(super) fn ms(&self) -> Option<RttMs> {
        (self.n > 0).then(|| RttMs {
            min: self.min as f64 / 1000.0,
            mean: self.sum as f64 / self.n as f64 / 1000.0,
            max: self.max as f64 / 1000.0,
        })
    }
}

/// Counter values at a point in time (for intervals and the omit baseline).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Snap {
    pub(super) bytes: u64,
    pub(super) retrans: u32,
    pub(super) packets_sent: u64,
    pub(super) highest: u64,
    pub(super) lost: i64,
    pub(super) ooo: u64,
}

impl Tracked {
    pub(super) fn snap(&self, tcp_sender: bool) -> (Snap, Option<tcp_info::TcpInfo>) {
        let c = &*self.counters;
        let info = match (&*self.sock, tcp_sender) {
            (DataSock::Tcp(s), true) => tcp_info::read(s).ok(),
            _ => None,
        };
        let snap = Snap {
            bytes: c.bytes.load(Ordering::Relaxed),
            retrans: info.map(|i| i.total_retrans).unwrap_or(self.last.retrans),
            packets_sent: c.packets_sent.load(Ordering::Relaxed),
            highest: c.rx_highest.load(Ordering::Relaxed),
            lost: c.rx_lost.load(Ordering::Relaxed),
            ooo: c.rx_out_of_order.load(Ordering::Relaxed),
        };
        (snap, info)
    }
}

impl Engine {
    /// Take one interval sample from `last_tick` to now and report it.
    pub(super) fn sample(&mut self, progress: &dyn Progress) {
        self.sample_until(progress, Instant::now());
    }

    /// Take one interval sample from `last_tick` to `now` and report it.
    pub(super) fn sample_until(&mut self, progress: &dyn Progress, now: Instant) {
        let dt = now.duration_since(self.last_tick).as_secs_f64();
        if dt <= 0.0 {
            return;
        }
        let omitted = self.omitting;
        let mut out = Vec::with_capacity(self.streams.len());
        let protocol = self.params.protocol;
        for i in 0..self.streams.len() {
            let tcp_sender = self.tcp_sender(self.streams[i].role);
            let t = &mut self.streams[i];
            let (snap, info) = t.snap(tcp_sender);
            let bytes = snap.bytes.saturating_sub(t.last.bytes);
            if let Some(info) = info
                && !omitted
            {
                t.rtt.add(info.rtt_us);
                t.max_cwnd = t.max_cwnd.max(info.snd_cwnd_bytes);
            }
            let udp = protocol == Protocol::Udp;
            out.push(StreamInterval {
                id: t.id,
                role: t.role,
                bytes,
                bps: bytes as f64 * 8.0 / dt,
                retransmits: info.map(|_| snap.retrans.saturating_sub(t.last.retrans) as u64),
                snd_cwnd: info.map(|i| i.snd_cwnd_bytes),
                packets: udp.then(|| match t.role {
                    Role::Send => snap.packets_sent.saturating_sub(t.last.packets_sent),
                    Role::Recv => snap.highest.saturating_sub(t.last.highest),
                }),
                lost: (udp && t.role == Role::Recv).then_some(snap.lost - t.last.lost),
                jitter_ms: (udp && t.role == Role::Recv).then(|| t.counters.jitter_s() * 1000.0),
                tcp: info.map(|i| TcpSample {
                    snd_wnd: i.snd_wnd,
                    rtt_us: i.rtt_us,
                    rttvar_us: i.rttvar_us,
                    pmtu: i.pmtu,
                    reorder: i.reord_seen,
                }),
            });
            t.last = snap;
        }
        let sample = IntervalSample {
            start_s: self
                .last_tick
                .duration_since(self.period_start)
                .as_secs_f64(),
            end_s: now.duration_since(self.period_start).as_secs_f64(),
            omitted,
            streams: out,
        };
        self.last_tick = now;
        if !omitted {
            self.intervals.push(self.interval_report(&sample));
        }
        self.tell_interval(progress, &sample);
        self.samples.push(sample.clone());
        if let Some(lines) = self.lines {
            let total = (self.params.omit_s + self.params.time_s) as f64;
            let fraction = if total > 0.0 {
                self.started.elapsed().as_secs_f64() / total
            } else {
                0.0
            };
            progress.report(ProgressEvent {
                fraction: fraction.clamp(0.0, 1.0),
                message: lines(&sample, self.side, self.params.direction),
            });
        }
    }

    /// Sum the main direction's streams of a sample into the report's interval.
    pub(super) fn interval_report(&self, s: &IntervalSample) -> IntervalReport {
        let primary = self.side.primary_role(self.params.direction);
        let dt = s.end_s - s.start_s;
        let sum = |role: Role| -> (u64, Option<u64>) {
            let mut bytes = 0;
            let mut retr: Option<u64> = None;
            for st in s.streams.iter().filter(|st| st.role == role) {
                bytes += st.bytes;
                if let Some(r) = st.retransmits {
                    retr = Some(retr.unwrap_or(0) + r);
                }
            }
            (bytes, retr)
        };
        let (bytes, retransmits) = sum(primary);
        let reverse_bps = (self.params.direction == TestDirection::Bidir)
            .then(|| sum(flip(primary)).0 as f64 * 8.0 / dt);
        IntervalReport {
            start_s: s.start_s,
            end_s: s.end_s,
            bps: bytes as f64 * 8.0 / dt,
            retransmits,
            bytes,
            reverse_bps,
        }
    }

    /// The omit period is over: what was counted so far does not count.
    pub(super) fn end_omit(&mut self, progress: &dyn Progress) {
        self.sample(progress);
        self.omitting = false;
        for t in &mut self.streams {
            t.base = t.last;
            t.rtt = RttAcc::default();
            t.max_cwnd = 0;
        }
        self.period_start = self.last_tick;
    }
}
