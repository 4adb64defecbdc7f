//! iperf3 3.21's parameter blocks, captured from a real 3.21 client
//! (tests/fixtures/iperf3-3.21/), replayed to `hlctl serve`: every new key
//! of 3.13-3.21 is accepted and acted on (`skip_rx_copy`: the receiver
//! discards with MSG_TRUNC and still counts every byte), used by this side's
//! own support as iperf3 does (UDP `gso`/`gro`), or refused with iperf3's
//! SERVER_ERROR (`mptcp`: our streams are plain TCP) -- never a hang.

mod common;

use std::io::Write;
use std::net::TcpStream;
use std::time::Duration;

use common::net::*;
use hlctl::bench::net::ServerConfig;
use serde_json::{Value, json};

const SERVER_ERROR: u8 = 0xFE;

fn fixture(name: &str) -> Value {
    let path = format!(
        "{}/tests/fixtures/iperf3-3.21/params-{name}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Send `params` as a 3.21 client would; the server's answer byte.
fn offer(server: &HlServer, seed: u8, params: &Value) -> (Raw, Option<u8>) {
    let raw = Raw::connect(server.addr);
    raw.send(&cookie(seed));
    assert_eq!(raw.byte(), Some(9), "PARAM_EXCHANGE");
    raw.send_json(params);
    let b = raw.byte();
    (raw, b)
}

#[test]
fn every_captured_321_block_is_taken_or_refused_at_once() {
    let mut cfg = ServerConfig::new(0);
    cfg.setup_timeout = Duration::from_secs(2);
    let server = HlServer::start(cfg);
    for (i, name) in [
        "tcp",
        "skip-rx-copy",
        "skip-rx-copy-reverse",
        "udp",
        "udp-gsro",
        "cntl-ka-fq-rate",
        "zerocopy",
        "udp-gsro-l1400",
    ]
    .iter()
    .enumerate()
    {
        let p = fixture(name);
        assert_eq!(p["client_version"], "3.21", "{name}");
        let (raw, b) = offer(&server, 30 + i as u8, &p);
        assert_eq!(b, Some(10), "{name}: CREATE_STREAMS");
        drop(raw); // gone before its streams: the server moves on
        let _ = server.wait_outcomes(i + 1, Duration::from_secs(15));
        std::thread::sleep(Duration::from_millis(300));
    }
    // MPTCP: refused with iperf3's "not implemented", not served as TCP.
    let (raw, b) = offer(&server, 45, &fixture("mptcp"));
    assert_eq!(b, Some(SERVER_ERROR));
    let n = raw.exact(8).expect("i_errno and errno");
    assert_eq!(i32::from_be_bytes([n[0], n[1], n[2], n[3]]), 13, "IEUNIMP");
    let outcomes = server.wait_outcomes(9, Duration::from_secs(10));
    assert!(
        outcomes
            .last()
            .is_some_and(|o| o.as_ref().is_err_and(|e| e.contains("MPTCP"))),
        "{outcomes:?}"
    );
}

#[test]
fn skip_rx_copy_discards_in_the_kernel_and_counts_every_byte() {
    let server = HlServer::start(ServerConfig::new(0));
    let c = cookie(50);
    let mut p = fixture("skip-rx-copy");
    p["time"] = json!(1);
    let raw = Raw::connect(server.addr);
    raw.send(&c);
    assert_eq!(raw.byte(), Some(9));
    raw.send_json(&p);
    assert_eq!(raw.byte(), Some(10), "CREATE_STREAMS");
    let s = TcpStream::connect_timeout(&server.addr, Duration::from_secs(5)).expect("data");
    s.set_write_timeout(Some(Duration::from_secs(5))).unwrap();
    (&s).write_all(&c).expect("stream cookie");
    assert_eq!(raw.byte(), Some(1), "TEST_START");
    assert_eq!(raw.byte(), Some(2), "TEST_RUNNING");
    let block = vec![0x3cu8; 131072];
    let mut sent = 0u64;
    for _ in 0..200 {
        (&s).write_all(&block).expect("data");
        sent += block.len() as u64;
    }
    raw.send(&[4]); // TEST_END
    assert_eq!(raw.byte(), Some(13), "EXCHANGE_RESULTS");
    raw.send_json(&json!({
        "cpu_util_total": 1.0, "cpu_util_user": 0.5, "cpu_util_system": 0.5,
        "sender_has_retransmits": 1,
        "streams": [{"id": 1, "bytes": sent, "retransmits": 0, "jitter": 0, "errors": 0,
                     "omitted_errors": 0, "packets": 0, "omitted_packets": 0,
                     "start_time": 0, "end_time": 1}]
    }));
    let theirs = raw.json().expect("server results");
    assert_eq!(theirs["streams"][0]["bytes"].as_u64(), Some(sent));
    assert_eq!(raw.byte(), Some(14), "DISPLAY_RESULTS");
    raw.send(&[16]);
    let outcomes = server.wait_outcomes(1, Duration::from_secs(10));
    let r = outcomes[0].as_ref().expect("the test completes");
    assert_eq!(r.main.received_bytes, sent, "every discarded byte counted");
}

/// Send datagrams `seqs` to the server's UDP stream, `len` bytes each, with
/// iperf3's 32-bit header (seconds, microseconds, sequence number).
fn send_datagrams(s: &std::net::UdpSocket, seqs: impl Iterator<Item = u32>, len: usize) -> u64 {
    let mut sent = 0;
    for seq in seqs {
        let mut d = vec![0u8; len];
        d[8..12].copy_from_slice(&seq.to_be_bytes());
        s.send(&d).expect("datagram");
        sent += 1;
    }
    sent
}

#[test]
fn a_321_udp_client_with_omit_gets_the_counts_of_the_omit_period_apart() {
    const LEN: usize = 1400;
    let server = HlServer::start(ServerConfig::new(0));
    let c = cookie(60);
    let mut p = fixture("udp");
    p["omit"] = json!(1);
    p["len"] = json!(LEN);
    let raw = Raw::connect(server.addr);
    raw.send(&c);
    assert_eq!(raw.byte(), Some(9));
    raw.send_json(&p);
    assert_eq!(raw.byte(), Some(10), "CREATE_STREAMS");
    let u = std::net::UdpSocket::bind("127.0.0.1:0").expect("udp");
    u.connect(server.addr).expect("udp connect");
    u.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    u.send(b"9876").expect("UDP connect message");
    let mut reply = [0u8; 4];
    u.recv(&mut reply).expect("UDP connect reply");
    assert_eq!(&reply, b"6789");
    assert_eq!(raw.byte(), Some(1), "TEST_START");
    assert_eq!(raw.byte(), Some(2), "TEST_RUNNING");
    // In the omit period: 1..=100 with 10 missing; after it: 101..=300 with
    // 20 missing.
    let omit_sent = send_datagrams(&u, (1..=100).filter(|s| s % 10 != 5), LEN);
    std::thread::sleep(Duration::from_millis(1600));
    let after_sent = send_datagrams(&u, (101..=300).filter(|s| s % 10 != 5), LEN);
    std::thread::sleep(Duration::from_millis(300));
    raw.send(&[4]); // TEST_END
    assert_eq!(raw.byte(), Some(13), "EXCHANGE_RESULTS");
    raw.send_json(&json!({
        "cpu_util_total": 1.0, "cpu_util_user": 0.5, "cpu_util_system": 0.5,
        "sender_has_retransmits": 0,
        "streams": [{"id": 1, "bytes": after_sent * LEN as u64, "retransmits": -1,
                     "jitter": 0, "errors": 0, "omitted_errors": 0,
                     "packets": 300, "omitted_packets": 100,
                     "start_time": 0, "end_time": 2}]
    }));
    let theirs = raw.json().expect("server results");
    let s = &theirs["streams"][0];
    // iperf3's counts run from the start; 3.21's omitted_* say where the
    // omit period left them.
    assert_eq!(s["packets"], 300, "{s}");
    assert_eq!(s["omitted_packets"], 100, "{s}");
    assert_eq!(s["errors"], 30, "{s}");
    assert_eq!(s["omitted_errors"], 10, "{s}");
    assert_eq!(s["bytes"].as_u64(), Some(after_sent * LEN as u64), "{s}");
    assert_eq!(raw.byte(), Some(14), "DISPLAY_RESULTS");
    raw.send(&[16]);
    let outcomes = server.wait_outcomes(1, Duration::from_secs(10));
    let r = outcomes[0].as_ref().expect("the test completes");
    assert_eq!(r.main.packets, Some(200));
    assert_eq!(r.main.lost_packets, Some(20));
    assert_eq!((omit_sent, after_sent), (90, 180));
}
