#!/usr/bin/env bash
# A soak of hlctld (issue 39 §6): for HOURS, everything a busy home lab does
# to it at once, and whether it stays flat.
#
#   sudo benches/soak.sh HOURS [CLIENTS]          (HOURS may be a fraction: 0.05)
#        EVERY=S      seconds between two samples of RSS, fds and threads (600)
#        BIN=DIR      the hlctl and hlctld to soak (default: a release build)
#
# What runs meanwhile, against the release hlctld on a private bus (our bus
# policy read from the run's temp directory; nothing is installed) serving a
# throw-away namespace:
#   - links coming and going: a veth pair added and deleted every second;
#   - CLIENTS (20) clients reading: `hlctl show --json` in a loop each;
#   - a benchmark job every minute: `hlctl bench cpu --time 2` (a history row
#     each);
#   - `--try` changes every 30 s, confirmed and abandoned in turn (the
#     abandoned one restored by hlctld at its deadline);
#   - usage sampling at its shortest interval (100 ms) on every veth named in
#     `[usage] links`;
#   - a network manager setting a persisted MTU back every 20 s (played by
#     `ip link set`: hlctld re-applies once, then warns and leaves it).
# Printed: every EVERY seconds hlctld's RSS, open fds and threads; at the end
# the range of each after the first sample (warm-up), jobs started against
# finished, history rows written against expected, and every warning or
# error hlctld logged, counted by kind. Cleans up everything at exit.
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "run as root (namespaces)" >&2; exit 2; }
HOURS=${1:?usage: benches/soak.sh HOURS [CLIENTS]}
CLIENTS=${2:-20}
EVERY=${EVERY:-600}
. benches/lib.sh
figure HOURS "$HOURS"
release_bins
daemon_work soak
pids=()
# Stops the load loops (by pid), then hlctld and the bus, and removes the
# namespace and the directory. (A bare `wait` here would wait for hlctld.)
soak_cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    if [ -n "$daemon_pid" ]; then   # hlctld stores its last minute on SIGTERM: let it end
        kill "$daemon_pid" 2>/dev/null || true
        for _ in $(seq 100); do kill -0 "$daemon_pid" 2>/dev/null || break; sleep 0.1; done
    fi
    daemon_cleanup
}
trap soak_cleanup EXIT

private_bus "$work"
veth_namespace "$ns" sk 4
links=$(printf '"ska%s:1G", ' 1 2 3 4)
printf '[usage]\nlinks = [%s]\n' "${links%, }" > "$work/hlctl.toml"
ip netns exec "$ns" "$BIN/hlctld" --bus "$addr" --config "$work/hlctl.toml" \
    --state-dir "$work/state" --sysctl-dir "$work/sysctl.d" \
    --test-usage-interval-ms 100 2>"$work/hlctld.log" &
daemon_pid=$!
hl() { ip netns exec "$ns" "$BIN/hlctl" --bus "$addr" "$@"; }
for _ in $(seq 500); do hl show --json >/dev/null 2>&1 && break; sleep 0.02; done
hl set ska2 mtu 1450 --persist >/dev/null

mkdir -p "$work/count"
count() { echo x >> "$work/count/$1"; }
lines() { [ -f "$work/count/$1" ] && wc -l < "$work/count/$1" || echo 0; }

# Links coming and going.
( while :; do
    ip -n "$ns" link add skchurn type veth peer name skchurnp 2>/dev/null && count churn
    sleep 0.5
    ip -n "$ns" link del skchurn 2>/dev/null || true
    sleep 0.5
  done ) & pids+=($!)
# Clients reading.
for i in $(seq "$CLIENTS"); do
    ( while :; do
        if hl show --json >/dev/null 2>&1; then count reads; else count read-errors; fi
        sleep 0.5
      done ) & pids+=($!)
done
# A benchmark job every minute.
( while :; do
    count bench-started
    if hl bench cpu --time 2 --json >/dev/null 2>"$work/bench.err"; then count bench-finished
    else cat "$work/bench.err" >> "$work/bench-errors"; fi
    sleep 58
  done ) & pids+=($!)
# --try changes, confirmed and abandoned in turn.
( n=0; while :; do
    sleep 30; n=$((n + 1))
    if [ $((n % 2)) = 1 ]; then
        echo | hl set ska3 mtu 1400 --try 10 >/dev/null 2>&1 && count try-confirmed
        hl set ska3 mtu 1500 >/dev/null 2>&1 || true
    else
        hl set ska3 mtu 1300 --try 3 </dev/null >/dev/null 2>&1 || true
        [ "$(ip netns exec "$ns" cat /sys/class/net/ska3/mtu)" = 1500 ] \
            && count try-restored || count try-not-restored
    fi
  done ) & pids+=($!)
# The network manager setting the persisted MTU back.
( while :; do sleep 20; ip -n "$ns" link set ska2 mtu 1500 && count manager-resets; done ) & pids+=($!)

sample() {
    local rss fds thr
    rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$daemon_pid/status")
    fds=$(ls "/proc/$daemon_pid/fd" | wc -l)
    thr=$(ls "/proc/$daemon_pid/task" | wc -l)
    figure "VmRSS" "$rss"
    printf '%8s  %9.1f MiB  %4d fds  %3d threads  %6d reads  %4d jobs\n' \
        "$(( SECONDS - start ))s" "$(awk -v r="$rss" 'BEGIN { print r / 1024 }')" "$fds" "$thr" "$(lines reads)" "$(lines bench-finished)"
    echo "$rss $fds $thr" >> "$work/samples"
}

start=$SECONDS
end=$(awk -v h="$HOURS" -v s="$SECONDS" 'BEGIN { printf "%d", s + h * 3600 }')
echo "soak: $HOURS h, $CLIENTS clients, a sample every $EVERY s (hlctld pid $daemon_pid)"
printf '%8s  %13s  %8s  %11s  %12s  %9s\n' time RSS fds threads reads jobs
while [ "$SECONDS" -lt "$end" ]; do
    kill -0 "$daemon_pid" || { echo "soak: hlctld died" >&2; tail -20 "$work/hlctld.log" >&2; exit 1; }
    sample
    left=$(( end - SECONDS ))
    sleep $(( left < EVERY ? (left > 0 ? left : 0) : EVERY ))
done
sample
for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
wait "${pids[@]}" 2>/dev/null || true
pids=()
sleep 3  # the last bench job's row

rows=$(python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute(\"SELECT COUNT(*) FROM results WHERE kind='cpu'\").fetchone()[0])" "$work/state/history.db")
echo
echo "after warm-up (every sample but the first), min - max:"
tail -n +2 "$work/samples" | awk '
    NR == 1 { r0 = r1 = $1; f0 = f1 = $2; t0 = t1 = $3 }
    { if ($1 < r0) r0 = $1; if ($1 > r1) r1 = $1; if ($2 < f0) f0 = $2; if ($2 > f1) f1 = $2; if ($3 < t0) t0 = $3; if ($3 > t1) t1 = $3 }
    END { if (NR) printf "  RSS %.1f - %.1f MiB, fds %d - %d, threads %d - %d (%d samples)\n", r0/1024, r1/1024, f0, f1, t0, t1, NR;
          else print "  (one sample only: run longer than EVERY)" }'
printf '  links added and deleted    %d\n' "$(lines churn)"
printf '  reads                      %d (failed %d)\n' "$(lines reads)" "$(lines read-errors)"
printf '  bench jobs                 started %d, finished %d\n' "$(lines bench-started)" "$(lines bench-finished)"
printf '  history rows (cpu)         written %d, expected %d\n' "$rows" "$(lines bench-finished)"
printf '  --try                      confirmed %d, abandoned and restored %d, not restored %d\n' \
    "$(lines try-confirmed)" "$(lines try-restored)" "$(lines try-not-restored)"
printf '  manager resets             %d\n' "$(lines manager-resets)"
echo "hlctld's warnings and errors, by message (numbers and names masked):"
if [ -S /run/systemd/journal/socket ]; then   # hlctld logs to journald when it is there
    journalctl -q -o cat -p warning "_PID=$daemon_pid" > "$work/warnings" || true
else
    grep -E ' (WARN|ERROR) ' "$work/hlctld.log" | sed -E 's/^[^ ]+ +//' > "$work/warnings" || true
fi
sed -E 's/[0-9]+/N/g' "$work/warnings" | sort | uniq -c | sort -rn | head -20
[ -s "$work/bench-errors" ] && { echo "bench errors:"; sort "$work/bench-errors" | uniq -c | head; }
figure reads "$(lines reads)"
