//! `bench net -J`: a report in iperf3 3.12's JSON layout (`start`,
//! `intervals`, `end`, with the keys iperf3 writes for TCP, UDP, `-R`, `-P`
//! and `--bidir`), so that programs reading iperf3's JSON read ours; hlctl's
//! own report (RTT, per-direction totals, …) goes under the one extra key
//! `hlctl`. `start` also has the keys later iperf3 versions added there
//! (`timestamp.timemillisecs`; `test_start`'s `bidir`, `fqrate`, `interval`,
//! `gso`, `gro`), so that scripts written against 3.21 read ours.

use serde_json::{Map, Value, json};

use super::figures::{IntervalSample, StreamInterval, flip};
use super::params::{Protocol, TestDirection};
use super::stream::Role;
use super::summary::NetReport;

/// The key that holds hlctl's own report.
pub(crate) const HLCTL_KEY: &str = "hlctl";

/// The whole document for a client's report.
pub(crate) fn layout(r: &NetReport) -> Value {
    let mut own = serde_json::to_value(r).unwrap_or_default();
    if let Some(m) = own.as_object_mut() {
        m.remove("start");
        m.remove("samples");
    }
    json!({
        "start": start(r),
        "intervals": r.samples.iter().map(|s| interval(r, s)).collect::<Vec<_>>(),
        "end": end(r),
        HLCTL_KEY: own,
    })
}

/// `-J --json-stream` (iperf3 3.17+): one `{"event":…,"data":…}` object a
/// line, unformatted: `start`, each interval, `end` (the data as under
/// those keys of [`layout`]; hlctl's own report is not in the stream).
pub(crate) fn stream(r: &NetReport) -> Vec<String> {
    let mut lines = vec![event("start", start(r))];
    lines.extend(r.samples.iter().map(|s| event("interval", interval(r, s))));
    lines.push(event("end", end(r)));
    lines
}

/// One line of the stream.
pub(crate) fn event(name: &str, data: Value) -> String {
    json!({ "event": name, "data": data }).to_string()
}

fn udp(r: &NetReport) -> bool {
    r.protocol == Protocol::Udp
}

/// This side's role in the main direction ("sum") of the test.
fn main_role(r: &NetReport) -> Role {
    let client = r.side == "client";
    match (r.direction, client) {
        (TestDirection::Reverse, true) | (TestDirection::Forward | TestDirection::Bidir, false) => {
            Role::Recv
        }
        _ => Role::Send,
    }
}

fn socket(r: &NetReport, id: u32) -> i64 {
    r.start
        .connected
        .iter()
        .find(|c| c.id == id)
        .map_or(id as i64, |c| c.socket as i64)
}

/// RFC 1123 in GMT, as iperf3's `timestamp.time`: "Wed, 02 Dec 2026 15:30:31 GMT".
fn rfc1123(secs: u64) -> String {
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let (year, month, day, rem) = crate::units::civil(secs as i64);
    let weekday = (secs / 86_400) % 7;
    format!(
        "{}, {day:02} {} {year} {:02}:{:02}:{:02} GMT",
        DAYS[weekday as usize],
        MONTHS[(month - 1) as usize],
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

fn start(r: &NetReport) -> Value {
    let s = &r.start;
    let connected: Vec<Value> = s
        .connected
        .iter()
        .map(|c| {
            json!({
                "socket": c.socket,
                "local_host": c.local_host,
                "local_port": c.local_port,
                "remote_host": c.remote_host,
                "remote_port": c.remote_port,
            })
        })
        .collect();
    let rate = r.target_bps.unwrap_or(0);
    let mut m = Map::new();
    m.insert("connected".into(), Value::Array(connected));
    m.insert(
        "version".into(),
        json!(format!("hlctl {}", env!("CARGO_PKG_VERSION"))),
    );
    m.insert("system_info".into(), json!(crate::host::system_info()));
    m.insert(
        "timestamp".into(),
        json!({
            "time": rfc1123(s.timesecs),
            "timesecs": s.timesecs,
            // iperf3 3.20; a report stored before it has none.
            "timemillisecs": if s.timemillisecs > 0 { s.timemillisecs } else { s.timesecs * 1000 },
        }),
    );
    m.insert(
        "connecting_to".into(),
        json!({ "host": s.host, "port": s.port }),
    );
    m.insert("cookie".into(), json!(s.cookie));
    if let Some(mss) = s.tcp_mss_default {
        m.insert("tcp_mss_default".into(), json!(mss));
    }
    m.insert("target_bitrate".into(), json!(rate));
    m.insert("sock_bufsize".into(), json!(s.sock_bufsize));
    m.insert("sndbuf_actual".into(), json!(s.sndbuf_actual));
    m.insert("rcvbuf_actual".into(), json!(s.rcvbuf_actual));
    m.insert(
        "test_start".into(),
        json!({
            "protocol": if udp(r) { "UDP" } else { "TCP" },
            "num_streams": r.streams,
            "blksize": r.block_len,
            "omit": s.omit_s,
            "duration": s.time_s,
            "bytes": 0,
            "blocks": 0,
            "reverse": i32::from(r.direction == TestDirection::Reverse),
            "tos": 0,
            "target_bitrate": rate,
            // 3.13: bidir, fqrate; 3.18: interval; 3.21: gso, gro (hlctl uses neither).
            "bidir": i32::from(r.direction == TestDirection::Bidir),
            "fqrate": 0,
            "interval": s.interval_s,
            "gso": 0,
            "gro": 0,
        }),
    );
    Value::Object(m)
}

fn per_second(bytes: u64, secs: f64) -> f64 {
    if secs > 0.0 {
        bytes as f64 * 8.0 / secs
    } else {
        0.0
    }
}

fn lost_percent(lost: i64, packets: u64) -> f64 {
    if packets > 0 {
        100.0 * lost.max(0) as f64 / packets as f64
    } else {
        0.0
    }
}

/// One stream's (or the sum's) figures over one interval.
fn interval_figures(
    r: &NetReport,
    s: &IntervalSample,
    st: &StreamInterval,
    id: Option<u32>,
) -> Map<String, Value> {
    let secs = s.end_s - s.start_s;
    let mut m = Map::new();
    if let Some(id) = id {
        m.insert("socket".into(), json!(socket(r, id)));
    }
    m.insert("start".into(), json!(s.start_s));
    m.insert("end".into(), json!(s.end_s));
    m.insert("seconds".into(), json!(secs));
    m.insert("bytes".into(), json!(st.bytes));
    m.insert("bits_per_second".into(), json!(per_second(st.bytes, secs)));
    let sender = st.role == Role::Send;
    if !udp(r) && sender {
        m.insert("retransmits".into(), json!(st.retransmits.unwrap_or(0)));
        if let (Some(_), Some(t)) = (id, st.tcp) {
            m.insert("snd_cwnd".into(), json!(st.snd_cwnd.unwrap_or(0)));
            m.insert("snd_wnd".into(), json!(t.snd_wnd));
            m.insert("rtt".into(), json!(t.rtt_us));
            m.insert("rttvar".into(), json!(t.rttvar_us));
            m.insert("pmtu".into(), json!(t.pmtu));
        }
    }
    if udp(r) {
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
    m.insert("omitted".into(), json!(s.omitted));
    m.insert("sender".into(), json!(sender));
    m
}

/// The sum of one role's streams over one interval.
fn interval_sum(r: &NetReport, s: &IntervalSample, role: Role) -> Option<Value> {
    let mine: Vec<&StreamInterval> = s.streams.iter().filter(|x| x.role == role).collect();
    if mine.is_empty() {
        return None;
    }
    let total = StreamInterval::sum(role, &mine);
    Some(Value::Object(interval_figures(r, s, &total, None)))
}

fn interval(r: &NetReport, s: &IntervalSample) -> Value {
    let streams: Vec<Value> = s
        .streams
        .iter()
        .map(|st| Value::Object(interval_figures(r, s, st, Some(st.id))))
        .collect();
    let role = main_role(r);
    let mut m = Map::new();
    m.insert("streams".into(), Value::Array(streams));
    if let Some(sum) = interval_sum(r, s, role) {
        m.insert("sum".into(), sum);
    }
    if r.direction == TestDirection::Bidir
        && let Some(sum) = interval_sum(r, s, flip(role))
    {
        m.insert("sum_bidir_reverse".into(), sum);
    }
    Value::Object(m)
}

mod end;
use end::end;

#[cfg(test)]
mod tests;

/// Whether this side sent a stream's data ("client_to_server" or "server_to_client").
fn stream_is_sender(r: &NetReport, direction: &str) -> bool {
    (direction == "client_to_server") == (r.side == "client")
}
