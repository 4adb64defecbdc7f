#!/usr/bin/env bash
# What link-usage sampling costs (issue 29): hlctld's CPU time with sampling
# on (every one of PAIRS veth ends named in [usage] links) against the same
# hlctld with sampling off ([usage] enable = false), ROUNDS alternating runs
# of SECS each at a test interval of INTERVAL_MS, scaled to the real interval
# (10 s) and an hour; then the database a year of one link takes (the
# synthetic year of src/usage/store.rs, printed by its unit test).
#
# Runs as root on a private bus with hlctld in a throw-away namespace;
# everything is removed at exit.
# Usage: benches/usage.sh [PAIRS] [SECS] [ROUNDS] [INTERVAL_MS]   (defaults 20 30 2 200)
#        PROFILE=debug ... to measure an existing debug build
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "run as root (namespaces)" >&2; exit 2; }
. benches/lib.sh
PAIRS=${1:-20}
SECS=${2:-30}
ROUNDS=${3:-2}
INTERVAL_MS=${4:-200}
release_bins
daemon_work usage
private_bus "$work"
veth_namespace "$ns" us "$PAIRS"

links=$(for i in $(seq "$PAIRS"); do printf '"usa%s:1G",' "$i"; done)
printf '[usage]\nlinks = [%s]\n' "${links%,}" > "$work/on.toml"
printf '[usage]\nenable = false\n' > "$work/off.toml"

# cpu_of MODE: hlctld's user+system seconds over SECS with config MODE.toml.
cpu_of() {
    rm -rf "$work/state"
    ip netns exec "$ns" "$BIN/hlctld" --bus "$addr" --state-dir "$work/state" \
        --sysctl-dir "$work/sysctl.d" --config "$work/$1.toml" \
        --test-usage-interval-ms "$INTERVAL_MS" 2>"$work/hlctld-$1.log" &
    daemon_pid=$!
    for _ in $(seq 500); do
        "$BIN/hlctl" --bus "$addr" show --json >/dev/null 2>&1 && break
        sleep 0.02
    done
    local t0 t1
    t0=$(awk '{print $14 + $15}' "/proc/$daemon_pid/stat")
    sleep "$SECS"
    t1=$(awk '{print $14 + $15}' "/proc/$daemon_pid/stat")
    kill "$daemon_pid"; wait "$daemon_pid" || true; daemon_pid=
    echo $(( t1 - t0 ))
}

tck=$(getconf CLK_TCK)
on=0; off=0
for r in $(seq "$ROUNDS"); do
    a=$(cpu_of on); b=$(cpu_of off)
    figure "round $r: hlctld CPU ticks with sampling on" "$a"
    figure "round $r: hlctld CPU ticks with sampling off" "$b" zero
    echo "round $r: sampling on $a ticks, off $b ticks (of $tck/s) in $SECS s"
    on=$((on + a)); off=$((off + b))
done
python3 - "$on" "$off" "$tck" "$SECS" "$ROUNDS" "$INTERVAL_MS" "$PAIRS" <<'PY'
import sys
on, off, tck, secs, rounds, ms, links = map(float, sys.argv[1:])
samples = rounds * secs * 1000 / ms
per_sample = (on - off) / tck / samples
print(f"{links:.0f} links sampled, {samples:.0f} samples: {per_sample * 1e3:.3f} ms of CPU per sample "
      f"({per_sample / links * 1e6:.1f} us per link)")
print(f"at the real 10 s interval: {per_sample * 360:.2f} s of CPU per hour for {links:.0f} links, "
      f"{per_sample * 360 / links * 1e3:.1f} ms per link per hour")
PY
mkdir -p "$work/year"
HLCTL_USAGE_YEAR_DIR="$work/year" cargo test -q --lib usage::store::tests::a_synthetic_year \
    -- --nocapture 2>/dev/null | grep "a year" \
    || { echo "usage.sh: figure 'a year' (usage::store's synthetic year) is missing" >&2; exit 1; }
# `hlctl usage --days 365` on that year, five times (the answer a user waits for).
for i in 1 2 3 4 5; do
    /usr/bin/time -f "hlctl usage enp1s0 --days 365: %e s, %M KiB max RSS" \
        "$BIN/hlctl" --local --state-dir "$work/year" usage enp1s0 --days 365 >/dev/null
done
