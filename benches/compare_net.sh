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
# Both tools print iperf3's -J layout: every figure is read from .end.sum_received
# / .end.sum_sent (.end.sum for UDP's loss), and a figure that is missing, null or
# 0 stops the run with an error naming it (benches/lib.sh's `figure`).
# Needs: root (for --local), cargo, iperf3, jq, ss (iproute2).
# Usage: sudo ROUNDS=5 T=5 benches/compare_net.sh     (ONLY=tcp1 runs one scenario:
# tcp1, tcp4, mixed or udp; HLCTL=PATH measures that hlctl instead of building one;
# IPERF3=PATH measures that iperf3, e.g. a 3.21 build, instead of the one on PATH)
set -euo pipefail

ROUNDS=${ROUNDS:-5}
T=${T:-5}
ONLY=${ONLY:-}
cd "$(dirname "$0")/.."
. benches/lib.sh
IPERF3=${IPERF3:-iperf3}
[ "$(id -u)" = 0 ] || { echo "compare_net.sh: run as root: hlctl's client runs in-process (--local) so that its own CPU is measured" >&2; exit 2; }
for tool in cargo "$IPERF3" jq ss awk; do
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
"$IPERF3" -s -B 127.0.0.1 -p "$IP_PORT" >/dev/null 2>&1 &
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
            "$IPERF3" -c 127.0.0.1 -p "$port" -t "$T" --json "$@"
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
    # hlctl's --json is iperf3's -J layout: one reading for both clients.
    local rx tx loss what="$client→$server $*"
    rx=$(jq '.end.sum_received.bits_per_second' "$TMP/out.json")
    tx=$(jq '.end.sum_sent.bits_per_second' "$TMP/out.json")
    loss=$(jq '.end.sum.lost_percent // .end.sum_received.lost_percent // 0' "$TMP/out.json")
    figure "$what: .end.sum_received.bits_per_second" "$rx"
    figure "$what: .end.sum_sent.bits_per_second" "$tx"
    figure "$what: lost_percent" "$loss" zero
    figure "$what: CPU seconds (client + server)" "$(awk -v c="$ccpu" -v s="$scpu" 'BEGIN { print c + s }')"
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

echo "hlctl vs iperf3 on loopback: $ROUNDS alternating rounds of $T s ($("$IPERF3" --version | head -1)); hlctl's client in-process (--local)" >&2
scenario tcp1 "hl hl" "ip ip"
scenario tcp4 "hl hl -P 4" "ip ip -P 4"
scenario mixed "hl ip" "ip hl" "ip ip"
scenario udp "hl hl -u -b 1G" "ip ip -u -b 1G"

row() { printf "%-34s %12s %12s %8s   %s\n" "$@"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) print "n/a"; else printf "%.3f", a / b }'; }
# med VAR COLUMN SCENARIO.VARIANT NAME [zero]: VAR = the median of that column, checked
# (a scenario that ran but left no figure stops the run naming it).
med() {
    local f=$TMP/$3
    [ -s "$f" ] || { echo "compare_net.sh: figure '$4': no run of $3 succeeded" >&2; exit 1; }
    printf -v "$1" '%s' "$(col "$2" "$f")"
    figure "$4 (median of $3)" "${!1}" "${5-}"
}
ran() { [ -z "$ONLY" ] || [ "$ONLY" = "$1" ]; }

echo
echo "hlctl's client ran in-process (--local); CPU = client + server process CPU time"
row "metric (median of $ROUNDS)" "hlctl" "iperf3" "us/peer" "target"
row "----------------------------------" "------------" "------------" "--------" "------"
for s in tcp1 tcp4; do
    ran $s || continue
    label="TCP -P 1"; [ $s = tcp4 ] && label="TCP -P 4"
    med a 1 $s.0 "hlctl $label Gbit/s"; med b 1 $s.1 "iperf3 $label Gbit/s"
    row "$label throughput Gbit/s" "$a" "$b" "$(ratio "$a" "$b")" ">= 1.00"
    med a 4 $s.0 "hlctl $label CPU per Gbit/s"; med b 4 $s.1 "iperf3 $label CPU per Gbit/s"
    row "$label CPU % per Gbit/s" "$a" "$b" "$(ratio "$a" "$b")" "<= 1.00"
done
if ran mixed; then
    med base 1 mixed.2 "iperf3→iperf3 Gbit/s"
    med a 1 mixed.0 "hlctl→iperf3 Gbit/s"
    row "hlctl→iperf3 vs iperf3→iperf3 Gbit/s" "$a" "$base" "$(ratio "$a" "$base")" ">= 0.95"
    med a 1 mixed.1 "iperf3→hlctl Gbit/s"
    row "iperf3→hlctl vs iperf3→iperf3 Gbit/s" "$a" "$base" "$(ratio "$a" "$base")" ">= 0.95"
fi
if ran udp; then
    med a 2 udp.0 "hlctl UDP sent Gbit/s"; med b 2 udp.1 "iperf3 UDP sent Gbit/s"
    row "UDP -b 1G sent Gbit/s (target 1)" "$a" "$b" "$(ratio "$a" "$b")" "within 2% of 1"
    med a 1 udp.0 "hlctl UDP received Gbit/s"; med b 1 udp.1 "iperf3 UDP received Gbit/s"
    row "UDP -b 1G received Gbit/s" "$a" "$b" "$(ratio "$a" "$b")" "within 2% of 1"
    med a 3 udp.0 "hlctl UDP loss %" zero; med b 3 udp.1 "iperf3 UDP loss %" zero
    row "UDP -b 1G loss %" "$a" "$b" "" "hlctl <= iperf3"
fi
for f in "$TMP"/*.[0-9]; do
    n=$(wc -l <"$f")
    [ "$n" -lt "$ROUNDS" ] && echo "note: $(basename "$f"): only $n of $ROUNDS runs succeeded" >&2
done
exit 0
