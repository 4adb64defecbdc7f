#!/usr/bin/env bash
# How long a default `hlctl tune` takes, old build against new, on the demo's
# scenario (scripts/demo.sh): two throw-away network namespaces joined by a
# veth pair, offloads planted off on lab0 (tso, gso, sg), `hlctl serve` on
# the peer, then `hlctl --local tune lab0 --peer 10.99.0.2 --yes` with the
# default budget (--runs 3, --time 5). Each tune gets fresh namespaces and
# fresh state, so every one starts from the same planted problem. Old and new
# alternate (the first of each round swaps) and the script prints per tune
# the wall time, the kept set, how many runs each step took and why a
# measured candidate was reverted, then the
# median times and new/old. Target (issue 14): new <= 50% of old, same kept set.
#
# Runs as root; touches nothing outside its namespaces; removes them at exit.
# Usage: HLCTL_OLD=PATH benches/tune_time.sh [ROUNDS]       (default 1 round)
#        HLCTL_OLD  an hlctl built from the commit to compare with (required)
#        HLCTL      the new hlctl (default: build target/release/hlctl)
#        TUNE_ARGS  extra tune arguments for both (e.g. "--runs 3 --time 2")
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "run as root (namespaces)" >&2; exit 2; }
ROUNDS=${1:-1}
: "${HLCTL_OLD:?set HLCTL_OLD to an hlctl built from the commit to compare with}"
if [ -z "${HLCTL:-}" ]; then
    nice -n 10 cargo build -q --release --bin hlctl
    HLCTL=$PWD/target/release/hlctl
fi
TUNE_ARGS=${TUNE_ARGS:-}
NS=hlctl-tt-$$
PEER=hlctl-ttp-$$
WORK=$(mktemp -d)
SERVER_PID=
teardown() {
    [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null
    SERVER_PID=
    ip netns del "$NS" 2>/dev/null || true
    ip netns del "$PEER" 2>/dev/null || true
}
trap 'teardown; rm -rf "$WORK"' EXIT

# The demo's lab, offloads planted off, a server on the peer.
setup() {
    ip netns add "$NS"
    ip netns add "$PEER"
    ip -n "$NS" link set lo up
    ip -n "$PEER" link set lo up
    ip -n "$NS" link add lab0 type veth peer name lab1 netns "$PEER"
    ip -n "$NS" addr add 10.99.0.1/24 dev lab0
    ip -n "$PEER" addr add 10.99.0.2/24 dev lab1
    ip -n "$NS" link set lab0 up
    ip -n "$PEER" link set lab1 up
    ip netns exec "$NS" "$HLCTL" --local --state-dir "$WORK/plant" --sysctl-dir "$WORK/plant.d" \
        set lab0 feature tso off gso off sg off >/dev/null
    ip netns exec "$PEER" "$HLCTL" serve --bind 10.99.0.2 --port 5201 --idle-timeout 600 >/dev/null 2>&1 &
    SERVER_PID=$!
    sleep 0.5
}

# tune NAME BIN: one default tune; prints a line, appends "NAME SECONDS KEPT" to $WORK/times.
tune() {
    local name=$1 bin=$2 n=$3 t0 t1 secs kept runs
    rm -rf "$WORK/state" "$WORK/sysctl.d"
    setup
    t0=$(date +%s.%N)
    # shellcheck disable=SC2086
    ip netns exec "$NS" "$bin" --local --json --state-dir "$WORK/state" --sysctl-dir "$WORK/sysctl.d" \
        tune lab0 --peer 10.99.0.2 --yes $TUNE_ARGS > "$WORK/$name-$n.json" || true
    t1=$(date +%s.%N)
    teardown
    secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}')
    figure "$name round $n: tune's steps (.steps in its --json)" "$(jq '.steps | length' "$WORK/$name-$n.json" 2>/dev/null || true)"
    figure "$name round $n: tune's runs (.runs in its --json)" "$(jq '.runs' "$WORK/$name-$n.json" 2>/dev/null || true)"
    kept=$(jq -r '[.steps[] | select(.status == "kept") | .candidate] | join(",")' "$WORK/$name-$n.json")
    runs=$(jq -r --argjson b "$(jq .runs "$WORK/$name-$n.json")" \
        '[.steps[] | "\(.candidate)=\(.status)@\(.runs // (if .deltas == [] then 0 else $b end))"] | join(" ")' \
        "$WORK/$name-$n.json")
    printf '%-4s round %d: %6.1f s  kept [%s]  steps: %s\n' "$name" "$n" "$secs" "${kept:-nothing}" "$runs"
    # Why a measured candidate was reverted (a changed kept set needs it).
    jq -r '.steps[] | select(.status == "reverted" and (.runs // 0) > 0) | "       \(.candidate) reverted: \(.reason)"' \
        "$WORK/$name-$n.json"
    echo "$name $secs ${kept:--}" >> "$WORK/times"
}

echo "tune timing: old=$HLCTL_OLD new=$HLCTL rounds=$ROUNDS args='${TUNE_ARGS:-(defaults)}' (load: $(cut -d' ' -f1-3 /proc/loadavg))"
: > "$WORK/times"
for n in $(seq "$ROUNDS"); do
    if [ $((n % 2)) = 1 ]; then
        tune old "$HLCTL_OLD" "$n"; tune new "$HLCTL" "$n"
    else
        tune new "$HLCTL" "$n"; tune old "$HLCTL_OLD" "$n"
    fi
done
median() { sort -n | awk '{v[NR]=$1} END {print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }
old=$(awk '$1=="old"{print $2}' "$WORK/times" | median)
new=$(awk '$1=="new"{print $2}' "$WORK/times" | median)
figure "median wall time of old" "$old"
figure "median wall time of new" "$new"
same=$(awk '{k[$1]=k[$1] " " $3} END {print (k["old"]==k["new"]) ? "yes" : "no"}' "$WORK/times")
printf 'median wall time: old %.1f s, new %.1f s, new/old %.2f (target <= 0.50); same kept set every round: %s\n' \
    "$old" "$new" "$(awk -v a="$old" -v b="$new" 'BEGIN {print b / a}')" "$same"
