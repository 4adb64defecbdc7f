//! One of iperf3's `intervals`: each stream's figures over the interval and
//! the sums of each direction.

use serde_json::{Map, Value, json};

use super::super::figures::{IntervalSample, StreamInterval, flip};
use super::super::stream::Role;
use super::{Test, TestDirection, lost_percent, per_second};

/// A TCP sender's figures from TCP_INFO (per stream only).
fn tcp_info(m: &mut Map<String, Value>, t: &Test, st: &StreamInterval) {
    let Some(info) = st.tcp else {
        return;
    };
    m.insert("snd_cwnd".into(), json!(st.snd_cwnd.unwrap_or(0)));
    m.insert("snd_wnd".into(), json!(info.snd_wnd));
    m.insert("rtt".into(), json!(info.rtt_us));
    m.insert("rttvar".into(), json!(info.rttvar_us));
    m.insert("pmtu".into(), json!(info.pmtu));
    if t.has_reorder() {
        m.insert("reorder".into(), json!(info.reorder));
    }
}

/// A UDP stream's (or sum's) datagrams, and at the receiver jitter and loss.
fn udp_figures(m: &mut Map<String, Value>, st: &StreamInterval, sender: bool) {
    let packets = st.packets.unwrap_or(0);
    if !sender {
        m.insert("jitter_ms".into(), json!(st.jitter_ms.unwrap_or(0.0)));
        m.insert("lost_packets".into(), json!(st.lost.unwrap_or(0)));
    }
    m.insert("packets".into(), json!(packets));
    if !sender {
        let lost = st.lost.unwrap_or(0);
        m.insert("lost_percent".into(), json!(lost_percent(lost, packets)));
    }
}

/// One stream's (or the sum's, without `id`) figures over one interval.
fn figures(t: &Test, s: &IntervalSample, st: &StreamInterval, id: Option<u32>) -> Value {
    let secs = s.end_s - s.start_s;
    let mut m = Map::new();
    if let Some(id) = id {
        m.insert("socket".into(), json!(t.socket(id)));
    }
    m.insert("start".into(), json!(s.start_s));
    m.insert("end".into(), json!(s.end_s));
    m.insert("seconds".into(), json!(secs));
    m.insert("bytes".into(), json!(st.bytes));
    m.insert("bits_per_second".into(), json!(per_second(st.bytes, secs)));
    let sender = st.role == Role::Send;
    if !t.udp() && sender {
        m.insert("retransmits".into(), json!(st.retransmits.unwrap_or(0)));
        if id.is_some() {
            tcp_info(&mut m, t, st);
        }
    }
    if t.udp() {
        udp_figures(&mut m, st, sender);
    }
    m.insert("omitted".into(), json!(s.omitted));
    m.insert("sender".into(), json!(sender));
    Value::Object(m)
}

/// The sum of one role's streams over one interval.
fn sum(t: &Test, s: &IntervalSample, role: Role) -> Option<Value> {
    let mine: Vec<&StreamInterval> = s.streams.iter().filter(|x| x.role == role).collect();
    if mine.is_empty() {
        return None;
    }
    let total = StreamInterval::sum(role, &mine);
    Some(figures(t, s, &total, None))
}

/// One interval of test `t`: `streams`, `sum` and with `--bidir` `sum_bidir_reverse`.
pub(crate) fn interval(t: &Test, s: &IntervalSample) -> Value {
    let streams: Vec<Value> = s
        .streams
        .iter()
        .map(|st| figures(t, s, st, Some(st.id)))
        .collect();
    let role = t.main_role();
    let mut m = Map::new();
    m.insert("streams".into(), Value::Array(streams));
    if let Some(sum) = sum(t, s, role) {
        m.insert("sum".into(), sum);
    }
    if t.direction == TestDirection::Bidir
        && let Some(sum) = sum(t, s, flip(role))
    {
        m.insert("sum_bidir_reverse".into(), sum);
    }
    Value::Object(m)
}
