//! The VM rig for scenarios the host kernel cannot build (it has no netem):
//! namespaces joined by veth inside the guest, netem delay on both sides,
//! the real iperf3 across them, and tcp_bbr loadable.

mod common;

use common::vm::Vm;

#[test]
fn guest_namespaces_veth_netem_iperf3() {
    let out = Vm::builder()
        .iproute2()
        .binary("/usr/bin/iperf3")
        .module("veth")
        .module("sch_netem")
        .module("tcp_bbr")
        .script(
            r#"
set -e
ip netns add a
ip netns add b
ip link add va type veth peer name vb
ip link set va netns a
ip link set vb netns b
ip -n a addr add 10.0.0.1/24 dev va
ip -n b addr add 10.0.0.2/24 dev vb
for n in a b; do ip -n $n link set lo up; done
ip -n a link set va up
ip -n b link set vb up
ip netns exec a tc qdisc add dev va root netem delay 10ms
ip netns exec b tc qdisc add dev vb root netem delay 10ms
section qdisc ip netns exec a tc qdisc show dev va
section ping ip netns exec a ping -c 3 10.0.0.2
ip netns exec b iperf3 -s -1 -D
sleep 1
section iperf ip netns exec a iperf3 -c 10.0.0.2 -t 2 -J
section cc cat /proc/sys/net/ipv4/tcp_available_congestion_control
"#,
        )
        .timeout(240)
        .run();
    eprintln!("VM boot to power-off: {:.1} s", out.elapsed.as_secs_f64());
    out.assert_success();

    let qdisc = out.section("qdisc").text;
    assert!(
        qdisc.contains("netem") && qdisc.contains("delay 10ms"),
        "{qdisc}"
    );

    // busybox: "round-trip min/avg/max = 20.512/21.003/22.101 ms"
    let ping = out.section("ping").text;
    let min_rtt: f64 = ping
        .lines()
        .find_map(|l| l.split_once("min/avg/max = "))
        .and_then(|(_, v)| v.split('/').next()?.parse().ok())
        .unwrap_or_else(|| panic!("no round-trip line in:\n{ping}"));
    assert!(
        min_rtt >= 20.0,
        "netem 10 ms each way, yet RTT {min_rtt} ms"
    );

    let iperf = out.json("iperf");
    let bps = iperf["end"]["sum_received"]["bits_per_second"]
        .as_f64()
        .unwrap_or_else(|| panic!("no sum_received in {iperf}"));
    assert!(bps > 0.0, "iperf3 moved nothing: {iperf}");

    let cc = out.section("cc").text;
    assert!(cc.split_whitespace().any(|c| c == "bbr"), "{cc}");
}
