#!/usr/bin/env bash
# A self-contained hlctl demo in a throw-away network namespace (as root).
# Nothing outside the namespace is touched; everything is removed at the end.
set -euo pipefail
. "$(dirname "$0")/as-root.sh"
cd "$(dirname "$0")/.."
command -v ip >/dev/null || { apt-get update -qq && apt-get install -y -qq iproute2 >/dev/null; }

cargo build --release --quiet --bin hlctl
HLCTL=$PWD/target/release/hlctl
NS=hlctl-demo-$$
PEER=hlctl-demo-peer-$$
WORK=$(mktemp -d)
cleanup() {
    [ -n "${SERVER_PID:-}" ] && kill "$SERVER_PID" 2>/dev/null || true
    ip netns del "$NS" 2>/dev/null || true
    ip netns del "$PEER" 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT

# Two namespaces joined by a veth pair: "lab" (where hlctl works) and "peer".
ip netns add "$NS"
ip netns add "$PEER"
ip -n "$NS" link set lo up
ip -n "$PEER" link set lo up
ip -n "$NS" link add lab0 type veth peer name lab1 netns "$PEER"
ip -n "$NS" addr add 10.99.0.1/24 dev lab0
ip -n "$PEER" addr add 10.99.0.2/24 dev lab1
ip -n "$NS" link set lab0 up
ip -n "$PEER" link set lab1 up

# --local: run the engine in-process (the demo starts no hlctld).
in_ns() { ip netns exec "$NS" "$HLCTL" --local --state-dir "$WORK/state" --sysctl-dir "$WORK/sysctl.d" "$@"; }
step() { printf '\n\033[1m$ hlctl %s\033[0m\n' "$*"; }

step show lab0
in_ns show lab0

step set lab0 mtu 9000 feature gso off --dry-run
in_ns set lab0 mtu 9000 feature gso off --dry-run

step set lab0 mtu 9000 feature gso off --persist
in_ns set lab0 mtu 9000 feature gso off --persist

step "set lab0 mtu 1500 feature gso on link speed 1000   # veth refuses the link step: all is restored"
in_ns set lab0 mtu 1500 feature gso on link speed 1000 || echo "(exit code $?)"

step "set lab0 ring rx 4096   # invalid for veth: nothing changed"
in_ns set lab0 ring rx 4096 || echo "(exit code $?)"

step "sysctl net.ipv4.tcp_rmem='4096 131072 16777216' --persist   # this namespace only"
in_ns sysctl "net.ipv4.tcp_rmem=4096 131072 16777216" --persist

step export lab0 --format systemd-link
in_ns export lab0 --format systemd-link

# A server on the peer for the benchmarks (it serves test after test).
ip netns exec "$PEER" "$HLCTL" serve --bind 10.99.0.2 --port 5201 --idle-timeout 300 >/dev/null 2>&1 &
SERVER_PID=$!
sleep 0.5

step bench net --peer 10.99.0.2 -t 3
in_ns bench net --peer 10.99.0.2 -t 3

step "set lab0 feature tso off gso off sg off   # plant a problem"
in_ns set lab0 feature tso off gso off sg off

step doctor lab0 --peer 10.99.0.2
in_ns doctor lab0 --peer 10.99.0.2 || true

step "tune lab0 --peer 10.99.0.2 --yes --runs 3 --time 2   # measure, keep only what helps"
in_ns tune lab0 --peer 10.99.0.2 --yes --runs 3 --time 2 || echo "(exit code $?)"
echo
echo "demo done; namespaces $NS and $PEER removed"
