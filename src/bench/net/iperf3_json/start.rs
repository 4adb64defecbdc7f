//! iperf3's `start` block: the sockets, the version, the time, the
//! parameters of the test.

use serde_json::{Map, Value, json};

use super::{Test, TestDirection, Version};

/// RFC 1123 in GMT, as iperf3's `timestamp.time`: "Wed, 02 Dec 2026 15:30:31 GMT".
pub(super) fn rfc1123(secs: u64) -> String {
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

fn connected(t: &Test) -> Value {
    t.start
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
        .collect()
}

fn timestamp(t: &Test) -> Value {
    let s = t.start;
    json!({
        "time": rfc1123(s.timesecs),
        "timesecs": s.timesecs,
        // iperf3 3.20; a report stored before it has none.
        "timemillisecs": if s.timemillisecs > 0 { s.timemillisecs } else { s.timesecs * 1000 },
    })
}

fn test_start(t: &Test) -> Value {
    let s = t.start;
    let rate = t.target_bps.unwrap_or(0);
    json!({
        "protocol": if t.udp() { "UDP" } else { "TCP" },
        "num_streams": t.streams,
        "blksize": t.block_len,
        "omit": s.omit_s,
        "duration": s.time_s,
        "bytes": 0,
        "blocks": 0,
        "reverse": i32::from(t.direction == TestDirection::Reverse),
        "tos": 0,
        "target_bitrate": rate,
        // 3.13: bidir, fqrate; 3.18: interval; 3.21: gso, gro (as this side's sockets have them).
        "bidir": i32::from(t.direction == TestDirection::Bidir),
        "fqrate": s.fq_rate_bps,
        "interval": s.interval_s,
        "gso": i32::from(s.gso),
        "gro": i32::from(s.gro),
    })
}

/// The `start` block of test `t`.
pub(crate) fn start(t: &Test) -> Value {
    let s = t.start;
    let rate = t.target_bps.unwrap_or(0);
    let mut m = Map::new();
    m.insert("connected".into(), connected(t));
    m.insert(
        "version".into(),
        json!(format!("hlctl {}", env!("CARGO_PKG_VERSION"))),
    );
    m.insert("system_info".into(), json!(crate::host::system_info()));
    m.insert("timestamp".into(), timestamp(t));
    m.insert(
        "connecting_to".into(),
        json!({ "host": s.host, "port": s.port }),
    );
    m.insert("cookie".into(), json!(s.cookie));
    if let Some(mss) = s.tcp_mss_default {
        m.insert("tcp_mss_default".into(), json!(mss));
    }
    m.insert("target_bitrate".into(), json!(rate));
    if t.version == Version::V3_21 {
        m.insert("fq_rate".into(), json!(s.fq_rate_bps));
    }
    m.insert("sock_bufsize".into(), json!(s.sock_bufsize));
    m.insert("sndbuf_actual".into(), json!(s.sndbuf_actual));
    m.insert("rcvbuf_actual".into(), json!(s.rcvbuf_actual));
    m.insert("test_start".into(), test_start(t));
    Value::Object(m)
}
