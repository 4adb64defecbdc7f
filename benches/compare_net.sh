#!/usr/bin/env bash
# Compare hlctl's network benchmark with iperf3 3.x on loopback.
#
# Builds hlctl (release) once, starts one `hlctl serve` and one `iperf3 -s` on
# free loopback ports, then runs each scenario's variants alternately
# (A B A B …, ROUNDS rounds of T seconds) and prints medians and us/peer ratios:
#   - TCP, 1 and 4 streams: hlctl→hlctl vs iperf3→iperf3, throughput and CPU
#     per Gbit/s (client + server process CPU, from /proc and `times`);
#   - mixed pairs: hlctl→iperf3 and iperf3→hlctl vs iperf3→iperf3;
#   - UDP at -b 1G: achieved rate vs the target, and loss, vs iperf3.
# hlctl's client runs in-process (`--local`): the CPU charged to it is that of the
# process that did the work, never an idle CLI whose benchmark ran inside hlctld.
# Needs: root (for --local), cargo, iperf3, jq, ss (iproute2).
# Usage: sudo ROUNDS=5 T=5 benches/compare_net.sh     (ONLY=tcp1 runs one scenario:
# tcp1, tcp4, mixed or udp; HLCTL=PATH measures that hlctl instead of building one)
set -euo pipefail

ROUNDS=${ROUNDS:-5}
T=${T:-5}
ONLY=${ONLY:-}
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "compare_net.sh: run as root: hlctl's client runs in-process (--local) so that its own CPU is measured" >&2; exit 2; }
for tool in cargo iperf3 jq ss awk; do
    command -v "$tool" >/dev/null || { echo "compare_net.sh: needs $tool" >&2; exit 2; }
done

if [ -n "${HLCTL:-}" ]; then
    HL=$HLCTL
else
    nice -n 10 cargo build --release --quiet --bin hlctl
    HL=$PWD/target/release/hlctl
fi
CLK=$(getconf CLK_TCK)
TMP=$(mktemp -d)
PIDS=()
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
    for p in "${PIDS[@]}"; do
        kill "$p" 2>/dev/null || true
        wait "$p" 2>/dev/null || true
    done
    rm -rf "$TMP"
}
trap cleanup EXIT

free_port() {
    local p
    while :; do
        p=$((20000 + RANDOM % 40000))
        if [ -z "$(ss -Htanu "( sport = :$p )")" ]; then echo "$p"; return; fi
    done
}
wait_listen() {
    for _ in $(seq 100); do
        [ -n "$(ss -Htln "( sport = :$1 )")" ] && return 0
        sleep 0.05
    done
    echo "compare_net.sh: nothing listens on port $1" >&2
    exit 1
}

HL_PORT=$(free_port)
IP_PORT=$(free_port)
while [ "$IP_PORT" = "$HL_PORT" ]; do IP_PORT=$(free_port); done
"$HL" serve --bind 127.0.0.1 --port "$HL_PORT" >/dev/null 2>&1 &
HL_PID=$!; PIDS+=("$HL_PID")
iperf3 -s -B 127.0.0.1 -p "$IP_PORT" >/dev/null 2>&1 &
IP_PID=$!; PIDS+=("$IP_PID")
wait_listen "$HL_PORT"
wait_listen "$IP_PORT"

ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

# run CLIENT(hl|ip) SERVER(hl|ip) ARGS… → "rx_gbps tx_gbps loss_pct cpu_pct_per_gbps"
run() {
    local client=$1 server=$2; shift 2
    local port=$HL_PORT spid=$HL_PID
    if [ "$server" = ip ]; then port=$IP_PORT spid=$IP_PID; fi
    local s0 s1
    s0=$(ticks "$spid")
    if ! (
        if [ "$client" = hl ]; then
            "$HL" --local --json bench net --peer "127.0.0.1:$port" -t "$T" -i 0 "$@"
        else
            iperf3 -c 127.0.0.1 -p "$port" -t "$T" --json "$@"
        fi >"$TMP/out.json" 2>"$TMP/err"
        times >"$TMP/times"
    ); then
        echo "compare_net.sh: $client→$server $* failed: $(cat "$TMP/err")" >&2
        return 1
    fi
    sleep 0.2 # let the server finish its bookkeeping before reading its CPU
    s1=$(ticks "$spid")
    local ccpu scpu
    ccpu=$(awk 'NR == 2 { split($1, u, /[ms]/); split($2, s, /[ms]/); print u[1] * 60 + u[2] + s[1] * 60 + s[2] }' "$TMP/times")
    scpu=$(awk -v a="$s0" -v b="$s1" -v hz="$CLK" 'BEGIN { print (b - a) / hz }')
    local rx tx loss
    if [ "$client" = hl ]; then
        rx=$(jq '.received_bps' "$TMP/out.json")
        tx=$(jq '.sent_bps' "$TMP/out.json")
        loss=$(jq '.lost_percent // 0' "$TMP/out.json")
    else
        rx=$(jq '.end.sum_received.bits_per_second' "$TMP/out.json")
        tx=$(jq '.end.sum_sent.bits_per_second' "$TMP/out.json")
        loss=$(jq '.end.sum_received.lost_percent // .end.sum.lost_percent // 0' "$TMP/out.json")
    fi
    awk -v rx="$rx" -v tx="$tx" -v loss="$loss" -v c="$ccpu" -v s="$scpu" -v t="$T" \
        'BEGIN { g = rx / 1e9; printf "%.4f %.4f %.4f %.2f\n", g, tx / 1e9, loss, (g > 0 ? (c + s) / t * 100 / g : 0) }'
}

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
col() { awk -v c="$1" '{ print $c }' "$2" | median; }

# scenario NAME "CLIENT SERVER ARGS…" … : ROUNDS rounds, variants alternating.
scenario() {
    local name=$1; shift
    local i v
    if [ -n "$ONLY" ] && [ "$ONLY" != "$name" ]; then return 0; fi
    for ((i = 1; i <= ROUNDS; i++)); do
        v=0
        for spec in "$@"; do
            # shellcheck disable=SC2086
            run $spec >>"$TMP/$name.$v" || true
            v=$((v + 1))
        done
    done
}

echo "hlctl vs iperf3 on loopback: $ROUNDS alternating rounds of $T s ($(iperf3 --version | head -1)); hlctl's client in-process (--local)" >&2
scenario tcp1 "hl hl" "ip ip"
scenario tcp4 "hl hl -P 4" "ip ip -P 4"
scenario mixed "hl ip" "ip hl" "ip ip"
scenario udp "hl hl -u -b 1G" "ip ip -u -b 1G"

row() { printf "%-34s %12s %12s %8s   %s\n" "$@"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) print "n/a"; else printf "%.3f", a / b }'; }

echo
echo "hlctl's client ran in-process (--local); CPU = client + server process CPU time"
row "metric (median of $ROUNDS)" "hlctl" "iperf3" "us/peer" "target"
row "----------------------------------" "------------" "------------" "--------" "------"
for s in tcp1 tcp4; do
    [ -s "$TMP/$s.0" ] || continue
    label="TCP -P 1"; [ $s = tcp4 ] && label="TCP -P 4"
    a=$(col 1 "$TMP/$s.0"); b=$(col 1 "$TMP/$s.1")
    row "$label throughput Gbit/s" "$a" "$b" "$(ratio "$a" "$b")" ">= 1.00"
    a=$(col 4 "$TMP/$s.0"); b=$(col 4 "$TMP/$s.1")
    row "$label CPU % per Gbit/s" "$a" "$b" "$(ratio "$a" "$b")" "<= 1.00"
done
if [ -s "$TMP/mixed.2" ]; then
    base=$(col 1 "$TMP/mixed.2")
    a=$(col 1 "$TMP/mixed.0")
    row "hlctl→iperf3 vs iperf3→iperf3 Gbit/s" "$a" "$base" "$(ratio "$a" "$base")" ">= 0.95"
    a=$(col 1 "$TMP/mixed.1")
    row "iperf3→hlctl vs iperf3→iperf3 Gbit/s" "$a" "$base" "$(ratio "$a" "$base")" ">= 0.95"
fi
if [ -s "$TMP/udp.0" ]; then
    a=$(col 2 "$TMP/udp.0"); b=$(col 2 "$TMP/udp.1")
    row "UDP -b 1G sent Gbit/s (target 1)" "$a" "$b" "$(ratio "$a" "$b")" "within 2% of 1"
    a=$(col 1 "$TMP/udp.0"); b=$(col 1 "$TMP/udp.1")
    row "UDP -b 1G received Gbit/s" "$a" "$b" "$(ratio "$a" "$b")" "within 2% of 1"
    a=$(col 3 "$TMP/udp.0"); b=$(col 3 "$TMP/udp.1")
    row "UDP -b 1G loss %" "$a" "$b" "" "hlctl <= iperf3"
fi
for f in "$TMP"/*.[0-9]; do
    n=$(wc -l <"$f")
    [ "$n" -lt "$ROUNDS" ] && echo "note: $(basename "$f"): only $n of $ROUNDS runs succeeded" >&2
done
exit 0
