#!/usr/bin/env bash
# Side-by-side: hlctl's disk and CPU benchmarks against fio (io_uring) and sysbench.
#
#   sudo benches/compare_disk_cpu.sh [DIR | --ram]
#
# DIR (default: a fresh directory under /var/tmp) must be on the disk to measure.
# --ram runs the disk rows on an ext4 filesystem this script makes on a loop device
# over a file in /dev/shm (and removes at exit, also on failure): a device with no
# noise of its own, so the ratios show what the two tools cost, not what a shared
# host's disk did that second. On a virtual disk whose own figure moves by a third
# from one run to the next, only that comparison can tell tools apart by a few percent.
# Needs: root (hlctl runs in-process with --local, so that the process measured and timed
# is the one doing the work, never hlctld), fio, sysbench, jq, GNU time
# (apt-get install -y fio sysbench jq time), cargo; with --ram also losetup and mkfs.ext4.
# Environment: ROUNDS (default 5), DISK_SECS (5), CPU_SECS (5), DISK_SIZE (256M),
#              ONLY (a regular expression: run only the rows whose name matches),
#              HLCTL (a built hlctl to measure instead of building target/release/hlctl),
#              NOISE=1 (the peer tool on both sides, fio against fio and sysbench against
#              sysbench: the ratios then show how far two identical tools differ on this
#              machine, the least difference between the tools a run can resolve),
#              FIO_HUGE=1 (fio's I/O buffers on transparent huge pages, as hlctl's 1 MiB
#              buffers are: a file on a private tmpfs mounted huge=always, removed at exit;
#              on a virtual disk that charges per scatter-gather segment this is the
#              difference between the tools' 1 MiB rows, see benches/README.md).
#
# Builds hlctl in release mode once, then runs every measurement ROUNDS times, the two
# tools alternating (and swapping who goes first every round, to cancel drift), and
# prints the medians, the median of the per-round ratios hlctl/peer with their min-max
# spread, the verdict against the issue's target, and for each row how many rounds
# would pin its median ratio to +-3 % given the spread of this run's rounds.
#
# The same workload and the same starting state on both sides, every round:
# - the same directory, file size, block size, queue depth, O_DIRECT, io_uring,
#   time-based runtime;
# - the same file layout: each tool lays out a fresh file of its own in DIR the fio way
#   (hlctl never touches files it did not create, so fio's file is removed before each of
#   its runs): reads run on a file written in full, fsynced and dropped from the page
#   cache; writes on a freshly preallocated (fallocate, unwritten) file;
# - the same page cache and writeback state: `sync` before every run, so neither tool
#   pays for the other's (or its own layout's) dirty pages;
# - a quiet device: before every run, the discards of removed files that a `discard`
#   mount issues after the sync are waited for (settle, below), so that neither tool's
#   run overlaps them; how many there were is printed at the end.
set -euo pipefail

ROUNDS=${ROUNDS:-5}
DISK_SECS=${DISK_SECS:-5}
CPU_SECS=${CPU_SECS:-5}
DISK_SIZE=${DISK_SIZE:-256M}
ONLY=${ONLY:-.}
NOISE=${NOISE:-}
FIO_HUGE=${FIO_HUGE:-}
FIO_BUFFERS="malloc, fio's default"
US_NAME=hlctl
if [[ -n $NOISE ]]; then US_NAME="peer again"; fi

[ "$(id -u)" = 0 ] || { echo "run as root: hlctl runs in-process (--local) so that its own CPU time is measured" >&2; exit 2; }
for tool in fio sysbench jq cargo /usr/bin/time; do
    command -v "$tool" >/dev/null || { echo "missing $tool (apt-get install -y fio sysbench jq time)" >&2; exit 2; }
done

here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/benches/lib.sh"
if [[ -z ${HLCTL:-} ]]; then
    (cd "$here" && nice -n 10 cargo build --release --quiet --bin hlctl)
    HLCTL="$here/target/release/hlctl"
fi

RAM_IMG="" RAM_LOOP="" CLEAN_DIR="" DIR="" FIO_FILE="" FIO_MEM_DIR="" FIO_MEM=""
TIMES=$(mktemp) SETTLED=$(mktemp) DURING=$(mktemp)
cleanup() {
    if [[ -n $FIO_FILE ]]; then rm -f "$FIO_FILE"; fi
    if [[ -n $FIO_MEM_DIR ]]; then
        umount "$FIO_MEM_DIR" 2>/dev/null || true
        rmdir "$FIO_MEM_DIR" 2>/dev/null || true
    fi
    rm -f "$TIMES" "$SETTLED" "$DURING"
    if [[ -n $RAM_LOOP ]]; then
        # A run still holding a file there (we were signalled mid-run) ends within
        # DISK_SECS; the filesystem can be unmounted only then.
        for _ in $(seq $((DISK_SECS * 10 + 50))); do
            umount "$DIR" 2>/dev/null && break
            mountpoint -q "$DIR" || break
            sleep 0.1
        done
        losetup -d "$RAM_LOOP" 2>/dev/null || true
    fi
    if [[ -n $RAM_IMG ]]; then rm -f "$RAM_IMG"; fi
    if [[ -n $CLEAN_DIR ]]; then rmdir "$CLEAN_DIR" 2>/dev/null || true; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ram_ext4: an ext4 filesystem on a loop device over a file in /dev/shm, mounted on a
# fresh directory; room for both tools' files and hlctl's 64 MiB margin.
ram_ext4() {
    for tool in losetup mkfs.ext4; do
        command -v "$tool" >/dev/null || { echo "--ram needs $tool (apt-get install -y mount e2fsprogs)" >&2; exit 2; }
    done
    local bytes
    bytes=$(numfmt --from=iec "$DISK_SIZE")
    RAM_IMG=$(mktemp /dev/shm/hlctl-compare.XXXXXX)
    truncate -s $((2 * bytes + 512 * 1024 * 1024)) "$RAM_IMG"
    RAM_LOOP=$(losetup --find --show "$RAM_IMG")
    mkfs.ext4 -q "$RAM_LOOP"
    DIR=$(mktemp -d /tmp/hlctl-compare-ram.XXXXXX)
    CLEAN_DIR=$DIR
    mount "$RAM_LOOP" "$DIR"
}

# fio_huge_buffers: fio's I/O buffers from a file on a tmpfs of our own mounted with
# huge=always (a mount option, no system setting), so that a 1 MiB buffer is one
# physically contiguous piece as hlctl's is (AlignedBuf::for_block_io). fio maps the
# file MAP_SHARED with --mem=mmapshared:FILE and does not size it, so it is sized here.
fio_huge_buffers() {
    local thp=/sys/kernel/mm/transparent_hugepage
    if [[ ! -d $thp ]] || grep -q '\[deny\]' "$thp/shmem_enabled" 2>/dev/null; then
        echo "FIO_HUGE=1 needs transparent huge pages for tmpfs ($thp/shmem_enabled must not be [deny]); run without it" >&2
        exit 2
    fi
    FIO_MEM_DIR=$(mktemp -d /tmp/hlctl-compare-fiomem.XXXXXX)
    mount -t tmpfs -o huge=always,size=64M,mode=0700 hlctl-compare-fiomem "$FIO_MEM_DIR"
    truncate -s 48M "$FIO_MEM_DIR/buffers"
    FIO_MEM=--mem=mmapshared:$FIO_MEM_DIR/buffers
    FIO_BUFFERS="huge pages (FIO_HUGE=1, $FIO_MEM)"
}
if [[ -n $FIO_HUGE ]]; then fio_huge_buffers; fi

if [[ ${1:-} == --ram ]]; then
    ram_ext4
    WHERE="ext4 on $RAM_LOOP over $RAM_IMG (RAM: the tools' own cost, no device noise)"
else
    if [[ $# -ge 1 ]]; then
        DIR=$1
    else
        DIR=$(mktemp -d /var/tmp/hlctl-compare.XXXXXX)
        CLEAN_DIR=$DIR
    fi
    WHERE="$DIR ($(findmnt -no FSTYPE,SOURCE -T "$DIR" | tr -s ' ' ' '))"
fi
FIO_FILE="$DIR/fio-compare.$$"
# The block device under DIR, for settle (none for filesystems without one, e.g. btrfs).
DEV_STAT=/sys/dev/block/$(findmnt -no MAJ:MIN -T "$DIR" | tr -d ' ')/stat
[[ -r $DEV_STAT ]] || DEV_STAT=""

# settle: start from a quiet device. `sync` writes back dirty pages and commits the
# journal; on a filesystem mounted with `discard` the blocks of files removed since (the
# other tool's, or this tool's last one) are then discarded, partly by a kernel worker
# after sync has returned and after a tool's exit: hundreds of discards of a 256 MiB file
# on a virtual disk, which would otherwise run into the next measurement. So wait until
# the device's discard count (/sys/dev/block/M:m/stat, field 12) has not moved for 0.5 s
# with nothing in flight (field 9), at most 30 s. The discards waited for go to
# $SETTLED; those that still ran during a measurement, per tool, to $DURING.
discards() { if [[ -n $DEV_STAT ]]; then awk '{print $12}' "$DEV_STAT"; else echo 0; fi; }
settle() {
    local first last now inflight stable=0 i=0
    first=$(discards)
    sync
    if [[ -n $DEV_STAT ]]; then
        last=$(discards)
        for ((i = 0; i < 300 && stable < 5; i++)); do
            sleep 0.1
            read -r now inflight < <(awk '{print $12, $9}' "$DEV_STAT")
            if [[ $now == "$last" && $inflight == 0 ]]; then stable=$((stable + 1)); else stable=0; fi
            last=$now
        done
    fi
    echo "$(($(discards) - first)) $i" >>"$SETTLED"
}
# during WHO BEFORE: note the discards that ran since BEFORE (during WHO's run).
during() { echo "$1 $(($(discards) - $2))" >>"$DURING"; }

# --- one measurement each; every function prints one number -------------------------

# us_disk RW BS QD JQ: hlctl in-process, on a fresh file it lays out itself.
us_disk() {
    local before
    settle
    before=$(discards)
    "$HLCTL" --local --json bench disk --dir "$DIR" --rw "$1" --bs "$2" --size "$DISK_SIZE" \
        --iodepth "$3" --runtime "$DISK_SECS" --time-based --engine io_uring | jq "$4"
    during hlctl "$before"
}
# peer_disk RW BS QD JQ: fio on a fresh file it lays out (fallocate=native, create_fsync=1,
# invalidate=1: its defaults, spelled out).
peer_disk() {
    local before
    rm -f "$FIO_FILE"
    settle
    before=$(discards)
    fio --name="$1" --filename="$FIO_FILE" --rw="$1" --bs="$2" --size="$DISK_SIZE" \
        --iodepth="$3" --direct=1 --ioengine=io_uring --runtime="$DISK_SECS" --time_based \
        --fallocate=native --create_fsync=1 --invalidate=1 ${FIO_MEM:+"$FIO_MEM"} --output-format=json | jq "$4"
    during fio "$before"
}
us_randread() { us_disk randread 4k 32 '.iops'; }
peer_randread() { peer_disk randread 4k 32 '.jobs[0].read.iops'; }
us_randwrite() { us_disk randwrite 4k 32 '.iops'; }
peer_randwrite() { peer_disk randwrite 4k 32 '.jobs[0].write.iops'; }
us_seqread() { us_disk read 1M 8 '.bytes_per_second / 1e6'; }
peer_seqread() { peer_disk read 1M 8 '.jobs[0].read.bw_bytes / 1e6'; }
us_seqwrite() { us_disk write 1M 8 '.bytes_per_second / 1e6'; }
peer_seqwrite() { peer_disk write 1M 8 '.jobs[0].write.bw_bytes / 1e6'; }
# CPU runs print two numbers: events/s (wall clock, what sysbench reports) and events per
# CPU-second of the process (user + system time from /usr/bin/time), which other jobs on
# a shared machine disturb far less.
us_cpu() {
    /usr/bin/time -f '%U %S' -o "$TIMES" "$HLCTL" --local --json bench cpu --threads "$1" --time "$CPU_SECS" --no-single \
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

# row NAME TARGET US_VALUES PEER_VALUES: medians, the median of the per-round ratios
# with their min-max spread, verdict (on the median ratio).
ROWS=() NEEDS=()
row() {
    local mu mp stats pairs
    mu=$(printf '%s\n' $3 | median)
    mp=$(printf '%s\n' $4 | median)
    pairs=$(paste -d' ' <(printf '%s\n' $3) <(printf '%s\n' $4))
    stats=$(awk '{print ($2 > 0) ? $1 / $2 : 0}' <<<"$pairs" | sort -g \
        | awk '{a[NR]=$1} END {m = (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2; print m, a[1], a[NR]}')
    ROWS+=("$(awk -v n="$1" -v u="$mu" -v p="$mp" -v t="$2" -v s="$stats" 'BEGIN {
        split(s, r, " "); ratio = r[1]
        if (t ~ /^>=/) { lo = substr(t, 3) + 0; ok = (ratio >= lo) }
        else { split(t, b, "-"); ok = (ratio >= b[1] && ratio <= b[2]) }
        printf "%-32s %11.1f %11.1f %7.3f  %5.3f-%5.3f  %-10s %s", n, u, p, ratio, r[2], r[3], t, ok ? "met" : "MISSED"
    }')")
    NEEDS+=("$(awk -v n="$1" '
        $1 > 0 && $2 > 0 { x[++k] = log($1 / $2); s += x[k] }
        END {
            if (k < 3) { printf "  %-32s (needs 3 rounds or more to tell)", n; exit }
            for (i = 1; i <= k; i++) v += (x[i] - s / k) ^ 2
            sd = sqrt(v / (k - 1)); need = (1.96 * 1.25 * sd / 0.03) ^ 2
            printf "  %-32s sigma %.3f: %d rounds (this run: %d)", n, sd, (need == int(need)) ? need : int(need) + 1, k
        }' <<<"$pairs")")
}

# compare NAME TARGET US_CMD PEER_CMD [NAME2]: alternate ROUNDS times (swapping who goes
# first each round); a second number per run, when NAME2 is given, makes a second row.
compare() {
    local name=$1 target=$2 us_cmd=$3 peer_cmd=$4 name2=${5:-} us=() peer=() us2=() peer2=() r u p
    [[ $name =~ $ONLY ]] || return 0
    if [[ -n $NOISE ]]; then us_cmd=$peer_cmd; fi
    for ((r = 1; r <= ROUNDS; r++)); do
        if ((r % 2)); then
            u=$(eval "$us_cmd"); p=$(eval "$peer_cmd")
        else
            p=$(eval "$peer_cmd"); u=$(eval "$us_cmd")
        fi
        read -r u1 u2 <<<"$u"
        read -r p1 p2 <<<"$p"
        figure "$name ($US_NAME, round $r)" "${u1-}"
        figure "$name (peer, round $r)" "${p1-}"
        if [[ -n $name2 ]]; then
            figure "$name2 ($US_NAME, round $r)" "${u2-}"
            figure "$name2 (peer, round $r)" "${p2-}"
        fi
        us+=("$u1"); peer+=("$p1"); us2+=("${u2:-0}"); peer2+=("${p2:-0}")
        printf '  %-28s round %d: %s %s   peer %s   ratio %s\n' "$name" "$r" "$US_NAME" "$u" "$p" \
            "$(awk -v a="$u1" -v b="$p1" 'BEGIN {printf "%.3f", (b > 0) ? a / b : 0}')" >&2
    done
    row "$name" "$target" "${us[*]}" "${peer[*]}"
    if [[ -n $name2 ]]; then row "$name2" "$target" "${us2[*]}" "${peer2[*]}"; fi
}

if [[ -n $NOISE ]]; then
    echo "NOISE=1: the peer tools against themselves ($(fio --version) / $(sysbench --version)); $ROUNDS alternating rounds, disk ${DISK_SECS} s on $DISK_SIZE, cpu ${CPU_SECS} s" >&2
else
    echo "hlctl (in-process, --local) vs $(fio --version) / $(sysbench --version); $ROUNDS alternating rounds, disk ${DISK_SECS} s on $DISK_SIZE, cpu ${CPU_SECS} s" >&2
fi
DISK_ROWS="disk rows on $WHERE; fio's I/O buffers: $FIO_BUFFERS"
echo "$DISK_ROWS" >&2
compare "disk randread 4k QD32 IOPS" ">=0.95" us_randread peer_randread
compare "disk randwrite 4k QD32 IOPS" ">=0.95" us_randwrite peer_randwrite
compare "disk seq read 1M QD8 MB/s" ">=0.95" us_seqread peer_seqread
compare "disk seq write 1M QD8 MB/s" ">=0.95" us_seqwrite peer_seqwrite
rm -f "$FIO_FILE"
compare "cpu 1 thread events/s" "0.95-1.05" "us_cpu 1" "peer_cpu 1" "cpu 1 thread events/CPU-s"
compare "cpu 2 threads events/s" "0.95-1.05" "us_cpu 2" "peer_cpu 2" "cpu 2 threads events/CPU-s"

if [[ -n $NOISE ]]; then
    echo "NOISE=1: both columns are the peer tool; the ratios are this machine's own noise, not hlctl's"
else
    echo "hlctl ran in-process (--local): its figures and CPU times are its own process's"
fi
if [[ -s $SETTLED ]]; then
    awk '{n += $1; w += $2; if ($1 > 0) k++} END {
        printf "before the %d disk runs: waited for %d discards of removed files (before %d runs), %.1f s in all\n", NR, n, k, w / 10
    }' "$SETTLED"
    awk '{n[$1] += $2} END {printf "discards while each tool ran: hlctl %d (with its file'"'"'s removal at exit), fio %d\n", n["hlctl"], n["fio"]}' "$DURING"
fi
echo "$DISK_ROWS"
printf '\n%-32s %11s %11s %7s  %-11s  %-10s %s\n' "metric (median of $ROUNDS)" "$US_NAME" "peer" "ratio" "min-max" "target" "result"
printf '%s\n' "${ROWS[@]}"
# How many rounds would pin each median ratio to +-3 % (95 %), from this run's own
# spread: the median of n rounds has a standard error of about 1.25 sigma / sqrt(n),
# sigma being the standard deviation of the rounds' log ratios. Separate runs agree
# within a few percent only with about that many rounds (benches/README.md, "How
# close two runs can agree").
printf '\nrounds for a median ratio within +-3 %% (95 %%), from the spread of this run'"'"'s rounds:\n'
printf '%s\n' "${NEEDS[@]}"
