#!/bin/bash
# Fuzz every target of fuzz/ for MINUTES (default 30) or 10 million
# executions, whichever comes first, one target after the other (nice'd),
# and print per target: executions, time, edges (libFuzzer's `cov:`),
# features (`ft:`) and crashes. Exits non-zero when a target crashed, hung
# or ran out of memory; the input is in fuzz/artifacts/<target>/.
#
#   benches/fuzz.sh [MINUTES] [TARGET...]
#
# Needs cargo-fuzz (`cargo install --locked cargo-fuzz`) and a C++ compiler
# (libfuzzer-sys builds libFuzzer); the stable toolchain is enough: the
# targets are built without a sanitizer (`-s none`, see benches/README.md,
# "Fuzzing"). New inputs go to fuzz/work/<target>/ (not committed); the
# committed seeds in fuzz/corpus/<target>/ are read, not written.
# Environment: FUZZ_RUNS (default 10000000), FUZZ_JOBS_NICE (default 10),
# FUZZ_RSS_MB (default 2048), FUZZ_TIMEOUT_S (one input, default 10).
set -uo pipefail
cd "$(dirname "$0")/../fuzz"
. ../benches/lib.sh

minutes=${1:-30}
shift || true
runs=${FUZZ_RUNS:-10000000}
nice_n=${FUZZ_JOBS_NICE:-10}
rss=${FUZZ_RSS_MB:-2048}
timeout_s=${FUZZ_TIMEOUT_S:-10}

if [ $# -gt 0 ]; then
    targets=("$@")
else
    mapfile -t targets < <(ls fuzz_targets | sed 's/\.rs$//' | sort)
fi

nice -n "$nice_n" cargo fuzz build -s none || exit 2

failed=0
summary=()
for t in "${targets[@]}"; do
    mkdir -p "work/$t" "artifacts/$t"
    log="work/$t.log"
    start=$(date +%s)
    nice -n "$nice_n" cargo fuzz run -s none "$t" "work/$t" "corpus/$t" -- \
        -max_total_time=$((minutes * 60)) -runs="$runs" -rss_limit_mb="$rss" \
        -timeout="$timeout_s" -print_final_stats=1 \
        -artifact_prefix="artifacts/$t/" >"$log" 2>&1
    rc=$?
    secs=$(($(date +%s) - start))
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    last=$(grep -E '^#[0-9]+' "$log" | tail -1)
    edges=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
    ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
    crashes=$(find "artifacts/$t" -type f -newermt "@$start" | wc -l)
    if [ "$rc" -eq 0 ] && [ "$crashes" -eq 0 ]; then
        # A clean run prints its statistics: without them the run is unread.
        figure "$t: executions (stat::number_of_executed_units)" "${execs-}"
        figure "$t: edges (cov:)" "${edges-}"
    fi
    if [ "$rc" -ne 0 ] || [ "$crashes" -gt 0 ]; then
        failed=1
        status="FAILED (exit $rc; see fuzz/$log, fuzz/artifacts/$t/)"
    else
        status=ok
    fi
    line=$(printf '%-16s %12s execs %6s s  edges %6s  ft %6s  crashes %s  %s' \
        "$t" "${execs:-?}" "$secs" "${edges:-?}" "${ft:-?}" "$crashes" "$status")
    echo "$line"
    summary+=("$line")
done

echo
echo "target               executions   time    edges         features  crashes"
printf '%s\n' "${summary[@]}"
exit $failed
