//! iperf3's `end` block: each stream's totals, the sums of each direction,
//! CPU use and the congestion control of both ends.

use serde_json::{Map, Value, json};

use super::super::figures::TcpSample;
use super::super::stream::Role;
use super::super::summary::{DirectionSummary, NetReport, StreamReport};
use super::{Test, Version, lost_percent};

/// `start`, `end`, `seconds`, `bytes`, `bits_per_second` of a total.
fn span(secs: f64, bytes: u64, bps: f64) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("start".into(), json!(0));
    m.insert("end".into(), json!(secs));
    m.insert("seconds".into(), json!(secs));
    m.insert("bytes".into(), json!(bytes));
    m.insert("bits_per_second".into(), json!(bps));
    m
}

/// Lost datagrams, datagrams and the loss in percent. A loss that cannot be
/// told apart from the omit period's (a peer before 3.21, with `-O`) is −1
/// and −1 %: never a 0 that claims nothing was lost.
fn loss(t: &DirectionSummary) -> (i64, u64, f64) {
    let packets = t.packets.unwrap_or(0);
    match t.lost_packets {
        Some(lost) => (lost as i64, packets, lost_percent(lost as i64, packets)),
        None => (-1, packets, -1.0),
    }
}

/// What TCP_INFO said of a stream in its intervals (none when it was not
/// read here: the peer's sending streams).
fn tcp_infos(r: &NetReport, id: u32) -> impl Iterator<Item = TcpSample> + '_ {
    r.samples
        .iter()
        .flat_map(|s| s.streams.iter())
        .filter(move |st| st.id == id)
        .filter_map(|st| st.tcp)
}

fn tcp_stream(r: &NetReport, test: &Test, s: &StreamReport, sender: bool) -> Value {
    let sock = test.socket(s.id);
    let t = &s.totals;
    let mut snd = Map::new();
    snd.insert("socket".into(), json!(sock));
    snd.extend(span(t.sender_duration_s, t.sent_bytes, t.sent_bps));
    if let Some(retr) = t.retransmits {
        let us = |ms: Option<f64>| ms.map_or(0, |v| (v * 1000.0).round() as u64);
        snd.insert("retransmits".into(), json!(retr));
        if test.has_reorder() {
            // iperf3 keeps the last interval's count.
            let last = tcp_infos(r, s.id).last().map_or(0, |i| i.reorder);
            snd.insert("reorder".into(), json!(last));
        }
        snd.insert(
            "max_snd_cwnd".into(),
            json!(t.max_snd_cwnd_bytes.unwrap_or(0)),
        );
        let max_snd_wnd = tcp_infos(r, s.id).map(|i| i.snd_wnd).max().unwrap_or(0);
        snd.insert("max_snd_wnd".into(), json!(max_snd_wnd));
        snd.insert("max_rtt".into(), json!(us(t.rtt_ms.map(|x| x.max))));
        snd.insert("min_rtt".into(), json!(us(t.rtt_ms.map(|x| x.min))));
        snd.insert("mean_rtt".into(), json!(us(t.rtt_ms.map(|x| x.mean))));
    }
    snd.insert("sender".into(), json!(sender));
    let mut rcv = Map::new();
    rcv.insert("socket".into(), json!(sock));
    rcv.extend(span(
        t.receiver_duration_s,
        t.received_bytes,
        t.received_bps,
    ));
    rcv.insert("sender".into(), json!(sender));
    json!({ "sender": snd, "receiver": rcv })
}

fn udp_stream(test: &Test, s: &StreamReport, sender: bool) -> Value {
    let t = &s.totals;
    let (lost, packets, percent) = loss(t);
    let mut m = Map::new();
    m.insert("socket".into(), json!(test.socket(s.id)));
    m.extend(span(t.sender_duration_s, t.sent_bytes, t.sent_bps));
    m.insert("jitter_ms".into(), json!(t.jitter_ms.unwrap_or(0.0)));
    m.insert("lost_packets".into(), json!(lost));
    m.insert("packets".into(), json!(packets));
    m.insert("lost_percent".into(), json!(percent));
    m.insert("out_of_order".into(), json!(t.out_of_order.unwrap_or(0)));
    m.insert("sender".into(), json!(sender));
    json!({ "udp": m })
}

/// The sums of one direction: `sum_sent`, `sum_received` and, for UDP,
/// `sum`, each name with `suffix` (`_bidir_reverse` for --bidir's other way).
fn sums(
    out: &mut Map<String, Value>,
    test: &Test,
    t: &DirectionSummary,
    sender: bool,
    suffix: &str,
) {
    let mut sent = span(t.sender_duration_s, t.sent_bytes, t.sent_bps);
    let mut received = span(t.receiver_duration_s, t.received_bytes, t.received_bps);
    if test.udp() {
        let (lost, packets, percent) = loss(t);
        let mut sum = span(t.receiver_duration_s, t.sent_bytes, t.sent_bps);
        for (m, jitter, lost, percent) in [
            (&mut sum, t.jitter_ms.unwrap_or(0.0), lost, percent),
            (&mut sent, 0.0, 0, 0.0),
            (&mut received, t.jitter_ms.unwrap_or(0.0), lost, percent),
        ] {
            m.insert("jitter_ms".into(), json!(jitter));
            m.insert("lost_packets".into(), json!(lost));
            m.insert("packets".into(), json!(packets));
            m.insert("lost_percent".into(), json!(percent));
        }
        sum.insert("sender".into(), json!(sender));
        sent.insert("sender".into(), json!(true));
        received.insert("sender".into(), json!(false));
        out.insert(format!("sum{suffix}"), Value::Object(sum));
    } else {
        if let Some(retr) = t.retransmits {
            sent.insert("retransmits".into(), json!(retr));
        }
        sent.insert("sender".into(), json!(sender));
        received.insert("sender".into(), json!(sender));
    }
    out.insert(format!("sum_sent{suffix}"), Value::Object(sent));
    out.insert(format!("sum_received{suffix}"), Value::Object(received));
}

/// The `end` block of report `r`, with `version`'s keys.
pub(crate) fn end(r: &NetReport, version: Version) -> Value {
    let test = Test::of_report(r, version);
    let mut m = Map::new();
    let streams: Vec<Value> = r
        .per_stream
        .iter()
        .map(|s| {
            let sender = test.sends(&s.direction);
            if test.udp() {
                udp_stream(&test, s, sender)
            } else {
                tcp_stream(r, &test, s, sender)
            }
        })
        .collect();
    m.insert("streams".into(), Value::Array(streams));
    let sender = test.main_role() == Role::Send;
    sums(&mut m, &test, &r.main, sender, "");
    if let Some(rev) = &r.reverse {
        sums(&mut m, &test, rev, !sender, "_bidir_reverse");
    }
    let c = &r.cpu;
    m.insert(
        "cpu_utilization_percent".into(),
        json!({
            "host_total": c.local_percent,
            "host_user": c.local_user_percent,
            "host_system": c.local_system_percent,
            "remote_total": c.remote_percent,
            "remote_user": c.remote_user_percent,
            "remote_system": c.remote_system_percent,
        }),
    );
    if !test.udp() {
        let (local, remote) = (&r.congestion, &r.remote_congestion);
        let (snd, rcv) = if sender {
            (local, remote)
        } else {
            (remote, local)
        };
        if let Some(cc) = snd {
            m.insert("sender_tcp_congestion".into(), json!(cc));
        }
        if let Some(cc) = rcv {
            m.insert("receiver_tcp_congestion".into(), json!(cc));
        }
    }
    Value::Object(m)
}
