//! The receiver's low-water marks: what each test gets, and a real socket's
//! mark following the rate it is read at.

use super::*;

fn params(json: &str) -> TestParams {
    TestParams::from_json(&serde_json::from_str(json).unwrap()).unwrap()
}

#[test]
fn an_unpaced_tcp_receiver_starts_at_one_block_and_may_rise_to_2_mib() {
    let lw = LowWater::on_cores(&params(r#"{"tcp":true,"time":1,"len":131072}"#), 2);
    assert_eq!(
        lw,
        LowWater {
            base: 131072,
            most: 2 << 20
        }
    );
    let small = LowWater::on_cores(&params(r#"{"tcp":true,"time":1,"len":8192}"#), 2);
    assert_eq!(small.base, 8192);
    // A read asks for the highest mark, never less than a block.
    assert_eq!(lw.read_size(131072), 2 << 20);
    assert_eq!(LowWater::default().read_size(131072), 131072);
}

#[test]
fn a_fixed_window_caps_both_marks_at_half_of_it() {
    let p = params(r#"{"tcp":true,"time":1,"len":131072,"window":65536}"#);
    assert_eq!(
        LowWater::on_cores(&p, 2),
        LowWater {
            base: 32768,
            most: 32768
        }
    );
    let p = params(r#"{"tcp":true,"time":1,"len":131072,"window":1048576}"#);
    assert_eq!(LowWater::on_cores(&p, 2).most, 524288);
}

#[test]
fn many_streams_share_2_mib_and_never_go_below_a_block() {
    let p4 = params(r#"{"tcp":true,"time":1,"len":131072,"parallel":4}"#);
    assert_eq!(LowWater::on_cores(&p4, 8).most, 512 << 10);
    let p2 = params(r#"{"tcp":true,"time":1,"len":131072,"parallel":2}"#);
    assert_eq!(LowWater::on_cores(&p2, 4).most, 1 << 20);
    let p32 = params(r#"{"tcp":true,"time":1,"len":131072,"parallel":32}"#);
    assert_eq!(LowWater::on_cores(&p32, 64).most, 131072);
}

#[test]
fn more_threads_than_cores_keep_the_kernel_default() {
    // A sender and a receiver per stream, each way: -P 1 fits on 2 cores,
    // -P 2, -P 4 and --bidir (2 streams) do not.
    let one = params(r#"{"tcp":true,"time":1,"len":131072}"#);
    assert_eq!(LowWater::on_cores(&one, 2).base, 131072);
    assert_eq!(LowWater::on_cores(&one, 1), LowWater::default());
    let p2 = params(r#"{"tcp":true,"time":1,"len":131072,"parallel":2}"#);
    assert_eq!(LowWater::on_cores(&p2, 2), LowWater::default());
    assert_eq!(LowWater::on_cores(&p2, 4).base, 131072);
    let bidir = params(r#"{"tcp":true,"time":1,"len":131072,"bidirectional":true}"#);
    assert_eq!(LowWater::on_cores(&bidir, 2), LowWater::default());
    assert_eq!(LowWater::on_cores(&bidir, 4).most, 2 << 20);
}

#[test]
fn paced_tcp_and_udp_keep_the_kernel_default() {
    let paced = params(r#"{"tcp":true,"time":1,"len":131072,"bandwidth":1000000}"#);
    assert_eq!(LowWater::on_cores(&paced, 64), LowWater::default());
    assert_eq!(
        LowWater::on_cores(&params(r#"{"udp":true,"time":1}"#), 64),
        LowWater::default()
    );
}

#[test]
fn the_mark_is_5_ms_of_the_stream_within_its_bounds() {
    let lw = LowWater {
        base: 131072,
        most: 2 << 20,
    };
    // 30 Gbit/s: 18.75 MB in 5 ms, held at 2 MiB.
    assert_eq!(lw.for_rate(30e9 / 8.0), 2 << 20);
    // 1 Gbit/s: 625 KB.
    assert_eq!(lw.for_rate(1e9 / 8.0), 625_000);
    // 100 Mbit/s: 62.5 KB, below a block: the block.
    assert_eq!(lw.for_rate(100e6 / 8.0), 131072);
}

/// The kernel's SO_RCVLOWAT of `s`.
fn mark(s: &TcpStream) -> i32 {
    sockopt::get_int(s.as_fd(), libc::SOL_SOCKET, libc::SO_RCVLOWAT).unwrap()
}

#[test]
fn a_fast_loopback_stream_raises_the_kernels_mark_and_a_trickle_lowers_it() {
    use std::io::{Read, Write};
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let mut tx = TcpStream::connect(l.local_addr().unwrap()).unwrap();
    let (rx, _) = l.accept().unwrap();
    let lw = LowWater {
        base: 131072,
        most: 2 << 20,
    };
    let mut w = Waker::start(&rx, lw).unwrap();
    assert_eq!(mark(&rx), 131072, "starts at the block");
    // Fast: a writer as fast as loopback goes, for 300 ms, read for as long
    // as it writes (a reader that stops first would leave it blocked).
    let writer = std::thread::spawn(move || {
        tx.set_write_timeout(Some(Duration::from_secs(5))).unwrap();
        let block = vec![7u8; 131072];
        let end = Instant::now() + Duration::from_millis(300);
        while Instant::now() < end {
            tx.write_all(&block).unwrap();
        }
        tx
    });
    let mut buf = vec![0u8; lw.read_size(131072)];
    let mut r = &rx;
    rx.set_read_timeout(Some(Duration::from_millis(50)))
        .unwrap();
    while !writer.is_finished() {
        if let Ok(n) = r.read(&mut buf) {
            w.read(&rx, n).unwrap();
        }
    }
    let raised = mark(&rx);
    // A block per 5 ms is 210 Mbit/s: any machine's loopback moves more.
    assert!(raised > 131072, "the mark rose with the rate: {raised}");
    let mut tx = writer.join().unwrap();
    while r.read(&mut buf).is_ok_and(|n| n > 0) {
        w.read(&rx, 0).unwrap();
    }
    // A trickle: 4 KiB every 20 ms (200 KB/s: 1 KB per 5 ms).
    let end = Instant::now() + Duration::from_millis(300);
    while Instant::now() < end {
        tx.write_all(&[1u8; 4096]).unwrap();
        std::thread::sleep(Duration::from_millis(20));
        if let Ok(n) = r.read(&mut buf) {
            w.read(&rx, n).unwrap();
        }
    }
    assert_eq!(mark(&rx), 131072, "back at the block for a slow stream");
}
