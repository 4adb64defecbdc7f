//! hlctl's TCP receiver asks the kernel to wake it once per block read
//! (SO_RCVLOWAT, `tcp::recv_low_water`). On a slow link a block takes
//! seconds to arrive; the receiver must still count the stream as it
//! arrives, every interval, not in lumps when a block is complete.

mod common;

use common::lab::Lab;

#[test]
fn a_slow_unpaced_stream_is_counted_in_every_interval() {
    let _serial = common::lab::serial();
    let lab = Lab::new();
    // 256 kbit/s: 32 KB a second, so one 128 KiB block takes 4 s.
    lab.shape_both("256kbit");
    let srv = lab.iperf3_server();
    let peer = lab.peer_arg(&srv);
    // -R: iperf3 sends, hlctl receives and counts the intervals.
    let doc = lab.json(&["bench", "net", "--peer", &peer, "-R", "-t", "5"]);
    let r = &doc["hlctl"];
    let intervals = r["intervals"].as_array().expect("intervals");
    assert_eq!(intervals.len(), 5, "{r}");
    let bytes: Vec<u64> = intervals
        .iter()
        .map(|i| i["bytes"].as_u64().expect("bytes"))
        .collect();
    let (min, max) = (*bytes.iter().min().unwrap(), *bytes.iter().max().unwrap());
    assert!(
        min > 0 && max <= 3 * min,
        "every 1 s interval carries about the same bytes at 256 kbit/s, not lumps of 128 KiB: {bytes:?}"
    );
    let bps = r["received_bps"].as_f64().unwrap();
    assert!(
        (128e3..=300e3).contains(&bps),
        "the shaped rate, 256 kbit/s, is what arrives: {bps}"
    );
}
