#!/usr/bin/env bash
# What the per-core sampling around every transfer costs (issue 36): `hlctl
# bench net` to an `iperf3 -s` on loopback, with sampling (the default) and
# without (HLCTL_NO_CPU_SAMPLING=1), alternately (A B A B ..., ROUNDS rounds
# of T seconds). Prints the medians of throughput and of hlctl's own CPU
# (iperf3's host_total, percent of one CPU) and the ratios with/without.
# Stops with an error when a run gives no figure, or when the sampled run
# has no `hlctl.cores` (or the unsampled one has).
# Needs: root (--local runs the client in this process), iperf3, jq, ss.
# Usage: sudo ROUNDS=7 T=3 benches/cpu_sampling.sh   (HLCTL=PATH: that hlctl
# instead of building a release one)
set -euo pipefail

ROUNDS=${ROUNDS:-7}
T=${T:-3}
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "cpu_sampling.sh: run as root (hlctl's client runs in-process, --local)" >&2; exit 2; }
for tool in iperf3 jq ss awk; do
    command -v "$tool" >/dev/null || { echo "cpu_sampling.sh: needs $tool" >&2; exit 2; }
done
if [ -n "${HLCTL:-}" ]; then
    HL=$HLCTL
else
    nice -n 10 cargo build --release --quiet --bin hlctl
    HL=$PWD/target/release/hlctl
fi
TMP=$(mktemp -d)
SERVER=
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
    if [ -n "$SERVER" ]; then kill "$SERVER" 2>/dev/null || true; wait "$SERVER" 2>/dev/null || true; fi
    rm -rf "$TMP"
}
trap cleanup EXIT

while :; do
    PORT=$((20000 + RANDOM % 40000))
    [ -z "$(ss -Htanu "( sport = :$PORT )")" ] && break
done
iperf3 -s -B 127.0.0.1 -p "$PORT" >/dev/null 2>&1 & SERVER=$!
for _ in $(seq 100); do ss -Htln "( sport = :$PORT )" | grep -q . && break; sleep 0.05; done

median() { sort -g | awk '{v[NR]=$1} END {if (NR==0) exit 1; if (NR%2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }

# run VARIANT: one test; appends "bps cpu" to $TMP/VARIANT.
run() {
    local v=$1 out=$TMP/out.json try
    for try in 1 2 3; do
        if [ "$v" = off ]; then
            HLCTL_NO_CPU_SAMPLING=1 "$HL" --local --json bench net -c 127.0.0.1 -p "$PORT" -t "$T" >"$out" 2>"$TMP/err" && break
        else
            "$HL" --local --json bench net -c 127.0.0.1 -p "$PORT" -t "$T" >"$out" 2>"$TMP/err" && break
        fi
        sleep 1 # the server still tearing down the previous test
        [ "$try" = 3 ] && { echo "cpu_sampling.sh: $v run failed: $(cat "$TMP/err")" >&2; exit 1; }
    done
    local bps cpu cores
    bps=$(jq -e '.end.sum_received.bits_per_second' "$out") || { echo "cpu_sampling.sh: no throughput in the $v run" >&2; exit 1; }
    cpu=$(jq -e '.end.cpu_utilization_percent.host_total' "$out") || { echo "cpu_sampling.sh: no CPU figure in the $v run" >&2; exit 1; }
    cores=$(jq '.hlctl.cores | length' "$out")
    if [ "$v" = on ] && [ "$cores" = 0 ]; then echo "cpu_sampling.sh: the sampled run has no hlctl.cores" >&2; exit 1; fi
    if [ "$v" = off ] && [ "$cores" != 0 ]; then echo "cpu_sampling.sh: the unsampled run has hlctl.cores" >&2; exit 1; fi
    echo "$bps $cpu" >>"$TMP/$v"
}

for r in $(seq "$ROUNDS"); do
    # Alternate which goes first, so neither always follows the other.
    if [ $((r % 2)) = 1 ]; then run on; run off; else run off; run on; fi
done

for v in on off; do
    bps=$(cut -d' ' -f1 "$TMP/$v" | median)
    cpu=$(cut -d' ' -f2 "$TMP/$v" | median)
    eval "${v}_bps=$bps ${v}_cpu=$cpu"
    printf 'sampling %-3s: median %.2f Gbit/s, hlctl CPU %.1f %% of one CPU (%d runs of %d s)\n' \
        "$v" "$(awk -v b="$bps" 'BEGIN{print b/1e9}')" "$cpu" "$ROUNDS" "$T"
done
# shellcheck disable=SC2154 # set by the eval above
awk -v a="$on_bps" -v b="$off_bps" -v c="$on_cpu" -v d="$off_cpu" \
    'BEGIN { printf "ratio with/without sampling: throughput %.3f, hlctl CPU %.3f\n", a/b, (d > 0 ? c/d : 0) }'
