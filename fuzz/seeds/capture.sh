#!/bin/bash
# Regenerate the netlink and iperf3 seeds of fuzz/corpus/ (run as root; a
# throw-away network namespace for netlink, 127.0.0.1 for iperf3).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$here/../corpus
ns=hlctl-fuzzcap
ip netns del $ns 2>/dev/null || true
ip netns add $ns
trap 'ip netns del $ns' EXIT
x() { ip netns exec $ns "$@"; }
x ip link set lo up
x ip link add vfz0 type veth peer name vfz1
x ip link add brfz0 type bridge
x ip link set vfz1 master brfz0
x ip link add link vfz0 name mvfz0 type macvlan
x ip tuntap add dev tfz0 mode tap
x ip link set vfz0 up
x ip link set brfz0 up
x python3 "$here/netlink.py" "$out"
python3 "$here/iperf3.py" "$out"
