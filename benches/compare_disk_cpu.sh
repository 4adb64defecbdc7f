#!/usr/bin/env bash
# Side-by-side: hlctl's disk and CPU benchmarks against fio (io_uring) and sysbench.
#
#   benches/compare_disk_cpu.sh [DIR]
#
# DIR (default: a fresh directory under /var/tmp) must be on the disk to measure.
# Needs: fio, sysbench, jq, GNU time (apt-get install -y fio sysbench jq time), cargo.
# Environment: ROUNDS (default 3), DISK_SECS (5), CPU_SECS (5), DISK_SIZE (256M).
#
# Builds hlctl in release mode once, then runs every measurement ROUNDS times, the two
# tools alternating (and swapping who goes first every round, to cancel drift), and
# prints the medians and the ratio hlctl/peer next to the issue's target.
#
# Same workload on both sides: the same directory, file size, block size, queue depth,
# O_DIRECT, io_uring, time-based. Each tool lays out its own file in DIR (hlctl never
# touches files it did not create), both the fio way: reads on a file written in full,
# fsynced and dropped from the page cache; writes on a freshly preallocated file.
set -euo pipefail

ROUNDS=${ROUNDS:-3}
DISK_SECS=${DISK_SECS:-5}
CPU_SECS=${CPU_SECS:-5}
DISK_SIZE=${DISK_SIZE:-256M}

for tool in fio sysbench jq cargo /usr/bin/time; do
    command -v "$tool" >/dev/null || { echo "missing $tool (apt-get install -y fio sysbench jq time)" >&2; exit 2; }
done

here=$(cd "$(dirname "$0")/.." && pwd)
(cd "$here" && cargo build --release --quiet --bin hlctl)
HLCTL="$here/target/release/hlctl"

if [[ $# -ge 1 ]]; then
    DIR=$1
    CLEAN_DIR=""
else
    DIR=$(mktemp -d /var/tmp/hlctl-compare.XXXXXX)
    CLEAN_DIR=$DIR
fi
FIO_FILE="$DIR/fio-compare.$$"
TIMES=$(mktemp)
cleanup() {
    rm -f "$FIO_FILE" "$TIMES"
    if [[ -n $CLEAN_DIR ]]; then rmdir "$CLEAN_DIR" 2>/dev/null || true; fi
}
trap cleanup EXIT

# --- one measurement each; every function prints one number -------------------------

us_randread() {
    "$HLCTL" --json bench disk --dir "$DIR" --rw randread --bs 4k --size "$DISK_SIZE" \
        --iodepth 32 --runtime "$DISK_SECS" --time-based --engine io_uring | jq '.iops'
}
peer_randread() {
    fio --name=randread --filename="$FIO_FILE" --rw=randread --bs=4k --size="$DISK_SIZE" \
        --iodepth=32 --direct=1 --ioengine=io_uring --runtime="$DISK_SECS" --time_based \
        --output-format=json | jq '.jobs[0].read.iops'
}
us_seqwrite() {
    "$HLCTL" --json bench disk --dir "$DIR" --rw write --bs 1M --size "$DISK_SIZE" \
        --iodepth 8 --runtime "$DISK_SECS" --time-based --engine io_uring | jq '.bytes_per_second / 1e6'
}
peer_seqwrite() {
    fio --name=seqwrite --filename="$FIO_FILE" --rw=write --bs=1M --size="$DISK_SIZE" \
        --iodepth=8 --direct=1 --ioengine=io_uring --runtime="$DISK_SECS" --time_based \
        --output-format=json | jq '.jobs[0].write.bw_bytes / 1e6'
}
# CPU runs print two numbers: events/s (wall clock, what sysbench reports) and events per
# CPU-second of the process (user + system time from /usr/bin/time), which other jobs on
# a shared machine disturb far less.
us_cpu() {
    /usr/bin/time -f '%U %S' -o "$TIMES" "$HLCTL" --json bench cpu --threads "$1" --time "$CPU_SECS" --no-single \
        | jq -r '"\(.events_per_second) \(.events)"' | per_cpu_second
}
peer_cpu() {
    /usr/bin/time -f '%U %S' -o "$TIMES" sysbench cpu --threads="$1" --time="$CPU_SECS" run \
        | awk '/events per second/ {e=$4} /total number of events/ {n=$5} END {print e, n}' | per_cpu_second
}
per_cpu_second() {
    read -r eps events
    read -r user sys <"$TIMES"
    awk -v e="$eps" -v n="$events" -v u="$user" -v s="$sys" 'BEGIN {print e, (u + s > 0) ? n / (u + s) : 0}'
}

median() { sort -g | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }

# row NAME TARGET US_VALUES PEER_VALUES: medians, ratio, verdict.
ROWS=()
row() {
    local mu mp
    mu=$(printf '%s\n' $3 | median)
    mp=$(printf '%s\n' $4 | median)
    ROWS+=("$(awk -v n="$1" -v u="$mu" -v p="$mp" -v t="$2" 'BEGIN {
        ratio = (p > 0) ? u / p : 0
        if (t ~ /^>=/) { lo = substr(t, 3) + 0; ok = (ratio >= lo) }
        else { split(t, b, "-"); ok = (ratio >= b[1] && ratio <= b[2]) }
        printf "%-34s %12.1f %12.1f %7.3f  %-10s %s", n, u, p, ratio, t, ok ? "met" : "MISSED"
    }')")
}

# compare NAME TARGET US_CMD PEER_CMD [NAME2]: alternate ROUNDS times (swapping who goes
# first each round); a second number per run, when NAME2 is given, makes a second row.
compare() {
    local name=$1 target=$2 us_cmd=$3 peer_cmd=$4 name2=${5:-} us=() peer=() us2=() peer2=() r u p
    for ((r = 1; r <= ROUNDS; r++)); do
        if ((r % 2)); then
            u=$(eval "$us_cmd"); p=$(eval "$peer_cmd")
        else
            p=$(eval "$peer_cmd"); u=$(eval "$us_cmd")
        fi
        read -r u1 u2 <<<"$u"
        read -r p1 p2 <<<"$p"
        us+=("$u1"); peer+=("$p1"); us2+=("${u2:-0}"); peer2+=("${p2:-0}")
        printf '  %-28s round %d: hlctl %s   peer %s\n' "$name" "$r" "$u" "$p" >&2
    done
    row "$name" "$target" "${us[*]}" "${peer[*]}"
    if [[ -n $name2 ]]; then row "$name2" "$target" "${us2[*]}" "${peer2[*]}"; fi
}

echo "hlctl vs fio $(fio --version) / $(sysbench --version); $ROUNDS rounds, dir $DIR" >&2
compare "disk randread 4k QD32 IOPS" ">=0.95" us_randread peer_randread
rm -f "$FIO_FILE"
compare "disk seq write 1M MB/s" ">=0.95" us_seqwrite peer_seqwrite
rm -f "$FIO_FILE"
compare "cpu 1 thread events/s" "0.95-1.05" "us_cpu 1" "peer_cpu 1" "cpu 1 thread events/CPU-s"
compare "cpu 2 threads events/s" "0.95-1.05" "us_cpu 2" "peer_cpu 2" "cpu 2 threads events/CPU-s"

printf '\n%-34s %12s %12s %7s  %-10s %s\n' "metric (median of $ROUNDS)" "hlctl" "peer" "ratio" "target" "result"
printf '%s\n' "${ROWS[@]}"
