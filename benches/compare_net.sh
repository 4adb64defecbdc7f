#!/usr/bin/env bash
# Compare hlctl's network benchmark with iperf3 3.x on loopback.
#
# Builds hlctl (release) once, starts one `hlctl serve` and one `iperf3 -s` on
# free loopback ports, then runs each scenario's variants alternately
# (A B A B …, ROUNDS rounds of T seconds) and prints medians and us/peer ratios:
#   - TCP, 1 and 4 streams: hlctl→hlctl vs iperf3→iperf3, throughput and CPU
#     per Gbit/s (client + server process CPU, from /proc and `times`);
#   - TCP --bidir -P 2 (both directions summed), and -Z --skip-rx-copy (the
#     sender's sendfile, the receiver's MSG_TRUNC; an iperf3 without
#     --skip-rx-copy, before 3.19, runs -Z alone, and the row says so);
#   - mixed pairs: hlctl→iperf3 and iperf3→hlctl vs iperf3→iperf3, throughput
#     and the pair's CPU per Gbit/s;
#   - UDP at -b 1G, without and with --gsro: achieved rate vs the target, and
#     loss, vs iperf3 (an iperf3 without --gsro, before 3.21, runs without it);
#   - UDP's highest rate without loss, without and with --gsro, found by a
#     search per tool (the definition is printed with the rows);
#   - iperf2 (Debian's `iperf` 2.1.8, not wire-compatible: iperf2→iperf2)
#     as a second anchor, by sent throughput, -P 1 and -P 4.
# hlctl's client runs in-process (`--local`): the CPU charged to it is that of the
# process that did the work, never an idle CLI whose benchmark ran inside hlctld.
# Both tools print iperf3's -J layout: every figure is read from .end.sum_received
# / .end.sum_sent (.end.sum for UDP's loss), and a figure that is missing, null or
# 0 stops the run with an error naming it (benches/lib.sh's `figure`).
# Needs: root (for --local), cargo, iperf3, iperf (Debian package `iperf`), jq, ss (iproute2).
# Usage: sudo ROUNDS=5 T=5 benches/compare_net.sh     (ONLY=tcp1 runs one scenario:
# tcp1, tcp4, bidir, zc, mixed, udp, udpgsro, udpmax, iperf2; HLCTL=PATH measures
# that hlctl instead of building one; IPERF3=PATH measures that iperf3, e.g. a 3.21
# build, instead of the one on PATH; TS=3: seconds of each run of the UDP search)
set -euo pipefail

ROUNDS=${ROUNDS:-5}
T=${T:-5}
ONLY=${ONLY:-}
TS=${TS:-3}
cd "$(dirname "$0")/.."
. benches/lib.sh
IPERF3=${IPERF3:-iperf3}
[ "$(id -u)" = 0 ] || { echo "compare_net.sh: run as root: hlctl's client runs in-process (--local) so that its own CPU is measured" >&2; exit 2; }
for tool in cargo "$IPERF3" jq ss awk; do
    command -v "$tool" >/dev/null || { echo "compare_net.sh: needs $tool" >&2; exit 2; }
done
command -v iperf >/dev/null || { echo "compare_net.sh: needs iperf2 for its anchor rows: apt-get install iperf" >&2; exit 2; }
# What this iperf3 has (3.19: --skip-rx-copy; 3.21: --gsro): without them its
# variant runs without the flag, and the row says so.
IP_HELP=$("$IPERF3" --help 2>&1 || true)
IP_SKIP=; IP_GSRO=
grep -q -- --skip-rx-copy <<<"$IP_HELP" && IP_SKIP=--skip-rx-copy
grep -q -- --gsro <<<"$IP_HELP" && IP_GSRO=--gsro

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
I2_PORT=$(free_port)
while [ "$I2_PORT" = "$HL_PORT" ] || [ "$I2_PORT" = "$IP_PORT" ]; do I2_PORT=$(free_port); done
"$HL" serve --bind 127.0.0.1 --port "$HL_PORT" >/dev/null 2>&1 &
HL_PID=$!; PIDS+=("$HL_PID")
"$IPERF3" -s -B 127.0.0.1 -p "$IP_PORT" >/dev/null 2>&1 &
IP_PID=$!; PIDS+=("$IP_PID")
iperf -s -B 127.0.0.1 -p "$I2_PORT" >/dev/null 2>&1 &
I2_PID=$!; PIDS+=("$I2_PID")
wait_listen "$HL_PORT"
wait_listen "$IP_PORT"
wait_listen "$I2_PORT"

ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

# run CLIENT(hl|ip|i2) SERVER(hl|ip|i2) ARGS… → "rx_gbps tx_gbps loss_pct cpu_pct_per_gbps"
# (i2: iperf2, whose client prints only what it sent: rx = tx there, loss 0)
run() {
    local client=$1 server=$2; shift 2
    local port=$HL_PORT spid=$HL_PID
    if [ "$server" = ip ]; then port=$IP_PORT spid=$IP_PID; fi
    if [ "$server" = i2 ]; then port=$I2_PORT spid=$I2_PID; fi
    local s0 s1
    s0=$(ticks "$spid")
    if ! (
        if [ "$client" = hl ]; then
            "$HL" --local --json bench net --peer "127.0.0.1:$port" -t "$T" -i 0 "$@"
        elif [ "$client" = i2 ]; then
            # CSV: one line a stream (and with -P a sum line, id -1); bit/s is field 9.
            iperf -c 127.0.0.1 -p "$port" -t "$T" -y C "$@" |
                awk -F, '$6 == -1 { sum = $9; s = 1 } $6 != -1 { t += $9 } END { b = s ? sum : t; printf "{\"end\":{\"sum_received\":{\"bits_per_second\":%s},\"sum_sent\":{\"bits_per_second\":%s}}}\n", b, b }'
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
    # --bidir: both directions, the second under the _bidir_reverse names.
    rx=$(jq '.end.sum_received.bits_per_second + (.end.sum_received_bidir_reverse.bits_per_second // 0)' "$TMP/out.json")
    tx=$(jq '.end.sum_sent.bits_per_second + (.end.sum_sent_bidir_reverse.bits_per_second // 0)' "$TMP/out.json")
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
# lossless CLIENT SERVER MBITS ARGS…: one TS-second UDP run at MBITS Mbit/s lost
# no datagram and received at least 98 % of the rate asked.
lossless() {
    local client=$1 server=$2 mbit=$3; shift 3
    local r
    r=$(T=$TS run "$client" "$server" -u -b "${mbit}M" "$@") || return 1
    awk -v m="$mbit" '{ exit !($3 == 0 && $1 * 1000 >= 0.98 * m) }' <<<"$r"
}

# udp_max CLIENT SERVER ARGS… → the highest lossless rate in Mbit/s: from 100
# doubling while lossless (up to 51200), then 4 halvings of the interval between
# the last lossless rate and the first lossy one.
udp_max() {
    local client=$1 server=$2; shift 2
    local lo=0 hi=100 i mid
    while lossless "$client" "$server" "$hi" "$@"; do
        lo=$hi; hi=$((hi * 2))
        [ "$hi" -gt 51200 ] && { echo "$lo"; return; }
    done
    for i in 1 2 3 4; do
        mid=$(((lo + hi) / 2))
        if lossless "$client" "$server" "$mid" "$@"; then lo=$mid; else hi=$mid; fi
    done
    echo "$lo"
}

# max_scenario NAME "CLIENT SERVER ARGS…" …: each variant's highest lossless rate
# (one search a variant, the variants one after the other), in Gbit/s.
max_scenario() {
    local name=$1; shift
    local v=0 spec
    if [ -n "$ONLY" ] && [ "$ONLY" != "$name" ]; then return 0; fi
    for spec in "$@"; do
        # shellcheck disable=SC2086
        udp_max $spec | awk '{ printf "%.3f\n", $1 / 1000 }' >"$TMP/$name.$v"
        v=$((v + 1))
    done
}

echo "hlctl vs iperf3 on loopback: $ROUNDS alternating rounds of $T s ($("$IPERF3" --version | head -1)); hlctl's client in-process (--local)" >&2
scenario tcp1 "hl hl" "ip ip"
scenario tcp4 "hl hl -P 4" "ip ip -P 4"
scenario bidir "hl hl --bidir -P 2" "ip ip --bidir -P 2"
scenario zc "hl hl -Z --skip-rx-copy" "ip ip -Z $IP_SKIP"
scenario mixed "hl ip" "ip hl" "ip ip"
scenario udp "hl hl -u -b 1G" "ip ip -u -b 1G"
scenario udpgsro "hl hl -u -b 1G --gsro" "ip ip -u -b 1G $IP_GSRO"
max_scenario udpmax "hl hl" "ip ip" "hl hl --gsro" "ip ip $IP_GSRO"
scenario iperf2 "hl hl" "i2 i2" "hl hl -P 4" "i2 i2 -P 4"

row() { printf "%-48s %12s %12s %8s   %s\n" "$@"; }
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
row "------------------------------------------------" "------------" "------------" "--------" "------"
# tcp ROW-LABEL SCENARIO TARGET-GBIT TARGET-CPU: throughput and CPU rows, hlctl→hlctl vs iperf3→iperf3.
tcp_rows() {
    local label=$1 s=$2 tg=$3 tc=$4
    ran "$s" || return 0
    med a 1 "$s.0" "hlctl $label Gbit/s"; med b 1 "$s.1" "iperf3 $label Gbit/s"
    row "$label throughput Gbit/s" "$a" "$b" "$(ratio "$a" "$b")" "$tg"
    med a 4 "$s.0" "hlctl $label CPU per Gbit/s"; med b 4 "$s.1" "iperf3 $label CPU per Gbit/s"
    row "$label CPU % per Gbit/s" "$a" "$b" "$(ratio "$a" "$b")" "$tc"
}
zc_label="TCP -Z --skip-rx-copy"
[ -z "$IP_SKIP" ] && zc_label="TCP -Z --skip-rx-copy (iperf3: -Z)"
tcp_rows "TCP -P 1" tcp1 ">= 1.05" "<= 0.90"
tcp_rows "TCP -P 4" tcp4 ">= 1.00" "<= 1.00"
tcp_rows "TCP --bidir -P 2" bidir ">= 1.00" "<= 1.00"
tcp_rows "$zc_label" zc ">= 1.00" "<= 1.00"
# The mixed pairs against iperf3→iperf3: throughput, and the pair's CPU
# (client + server) per Gbit/s.
if ran mixed; then
    med base 1 mixed.2 "iperf3→iperf3 Gbit/s"
    med cbase 4 mixed.2 "iperf3→iperf3 CPU per Gbit/s"
    for v in 0 1; do
        pair="hlctl→iperf3"
        [ "$v" = 1 ] && pair="iperf3→hlctl"
        med a 1 "mixed.$v" "$pair Gbit/s"
        row "$pair vs iperf3→iperf3 Gbit/s" "$a" "$base" "$(ratio "$a" "$base")" ">= 1.05"
        med a 4 "mixed.$v" "$pair CPU per Gbit/s"
        row "$pair CPU % per Gbit/s" "$a" "$cbase" "$(ratio "$a" "$cbase")" "<= 0.90"
    done
fi
# udp_rows LABEL SCENARIO: sent, received and loss at 1 Gbit/s.
udp_rows() {
    local label=$1 s=$2
    ran "$s" || return 0
    med a 2 "$s.0" "hlctl $label sent Gbit/s"; med b 2 "$s.1" "iperf3 $label sent Gbit/s"
    row "$label sent Gbit/s" "$a" "$b" "$(ratio "$a" "$b")" "within 2% of 1"
    med a 1 "$s.0" "hlctl $label received Gbit/s"; med b 1 "$s.1" "iperf3 $label received Gbit/s"
    row "$label received Gbit/s" "$a" "$b" "$(ratio "$a" "$b")" "within 2% of 1"
    med a 3 "$s.0" "hlctl $label loss %" zero; med b 3 "$s.1" "iperf3 $label loss %" zero
    row "$label loss %" "$a" "$b" "" "hlctl <= iperf3"
}
gsro_note=""
[ -z "$IP_GSRO" ] && gsro_note=" (iperf3: none)"
udp_rows "UDP -b 1G" udp
udp_rows "UDP -b 1G --gsro$gsro_note" udpgsro
if ran udpmax; then
    med a 1 udpmax.0 "hlctl UDP highest lossless Gbit/s"; med b 1 udpmax.1 "iperf3 UDP highest lossless Gbit/s"
    row "UDP highest lossless Gbit/s" "$a" "$b" "$(ratio "$a" "$b")" ">= 1.00"
    med a 1 udpmax.2 "hlctl UDP --gsro highest lossless Gbit/s"; med b 1 udpmax.3 "iperf3 UDP --gsro highest lossless Gbit/s"
    row "UDP --gsro$gsro_note highest lossless" "$a" "$b" "$(ratio "$a" "$b")" ">= 1.00"
    echo "  (highest lossless: the highest -b of one $TS s run with 0 datagrams lost and >= 98 % of -b received;"
    echo "   searched per tool from 100 Mbit/s doubling while lossless, then 4 halvings of the last interval)"
fi
if ran iperf2; then
    med a 2 iperf2.0 "hlctl -P 1 sent Gbit/s"; med b 2 iperf2.1 "iperf2 -P 1 sent Gbit/s"
    row "vs iperf2 2.1.8 -P 1 sent Gbit/s" "$a" "$b" "$(ratio "$a" "$b")" "(anchor)"
    med a 2 iperf2.2 "hlctl -P 4 sent Gbit/s"; med b 2 iperf2.3 "iperf2 -P 4 sent Gbit/s"
    row "vs iperf2 2.1.8 -P 4 sent Gbit/s" "$a" "$b" "$(ratio "$a" "$b")" "(anchor)"
fi
for f in "$TMP"/*.[0-9]; do
    case $f in */udpmax.*) continue ;; esac # one search a variant, not ROUNDS runs
    n=$(wc -l <"$f")
    [ "$n" -lt "$ROUNDS" ] && echo "note: $(basename "$f"): only $n of $ROUNDS runs succeeded" >&2
done
exit 0
