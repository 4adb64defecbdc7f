# Sourced by scripts/test.sh: time each step of the suite and every test
# binary, hold them against the budgets in docs/tests.md, and close with one
# "suite: N passed, N failed, N skipped" line.
#
# Lanes: every test binary runs once, in one of two lanes (the machine's two
# cores) that take the next binary from one queue, longest budget first, as
# each lane becomes free; lane `solo` in docs/tests.md runs alone before the
# others, lane `prepare` is run by test.sh itself beside the build (the
# images). HLCTL_TEST_LANES=N runs N lanes (1: one after another). Each
# binary's output is printed whole when it ends, so that two lanes never
# interleave their lines.

# Exported: a step run in a process of its own (the images) records here too.
TIMES_FILE=${TIMES_FILE:-$(mktemp /tmp/hlctl-test-times.XXXXXX)}
RESULTS_DIR=${RESULTS_DIR:-$(mktemp -d /tmp/hlctl-test-results.XXXXXX)}
BUDGETS=docs/tests.md
export TIMES_FILE RESULTS_DIR

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.0f", b - a }'; }
record() { printf '%s\t%s\n' "$2" "$1" >>"$TIMES_FILE"; }

# timed NAME CMD...: run CMD, record its wall time as NAME; CMD's exit code.
timed() {
    local name=$1 start rc=0
    shift
    start=$(now)
    "$@" || rc=$?
    record "$name" "$(elapsed "$start")"
    return "$rc"
}

# A column of the budget table's row for a binary: budget seconds (2) or lane (3).
budget_field() {
    awk -F'|' -v n="\`$1\`" -v c="$2" '
        { gsub(/^ +| +$/, "", $2) }
        $2 == n { v = $(c + 1); gsub(/[^a-z0-9]/, "", v); print v; exit }' "$BUDGETS"
}

# "LABEL EXECUTABLE" for every test executable cargo builds with ARGS
# (default --all-targets): LABEL is a test's name (vm_netmgr), else
# KIND:NAME (lib:hlctl, bin:hlctld).
test_executables() {
    [ $# -gt 0 ] || set -- --all-targets
    cargo test --locked "$@" --no-run --message-format=json 2>/dev/null |
        jq -r 'select(.reason == "compiler-artifact" and .profile.test and .executable != null)
               | (if .target.kind[0] == "test" then .target.name
                  else "\(.target.kind[0]):\(.target.name)" end) + " " + .executable' | sort
}

# Run one test executable as cargo test would (from the package root), its
# output kept in RESULTS_DIR/NAME.log, its wall time and counts recorded.
run_one() {
    local label=$1 exe=$2 start rc=0 log
    log="$RESULTS_DIR/$label.log"
    say "test.sh: running $label"
    start=$(now)
    "$exe" >"$log" 2>&1 </dev/null || rc=$?
    local secs
    secs=$(elapsed "$start")
    record "$label" "$secs"
    echo "$rc" >"$log.rc"
    {
        echo "==== $label: ${secs} s, exit $rc"
        cat "$log"
    } | say_block
}

# Print a line, or stdin as one block, whole: two lanes never interleave.
say() { printf '%s\n' "$*" | say_block; }
say_block() { flock "$RESULTS_DIR/.print.lock" cat; }

# One lane: the binaries named on stdin ("LABEL EXECUTABLE"), one after another.
run_lane() {
    local label exe
    while read -r label exe; do
        run_one "$label" "$exe"
    done
}

# The next line of the queue file $1, taken out of it under its lock (the
# lanes share one queue); fails when the queue is empty.
take_next() {
    local queue=$1 line
    line=$(flock "$queue.lock" sh -c 'head -n1 "$1" && sed -i 1d "$1"' _ "$queue")
    [ -n "$line" ] && printf '%s\n' "$line"
}

# One lane of the shared queue: the next binary whenever this lane is free.
run_queue_lane() {
    local queue=$1 budget label exe
    while read -r budget label exe < <(take_next "$queue"); do
        run_one "$label" "$exe"
    done
}

# Every test binary once: lane `solo` first and alone, lane `prepare` not
# here (test.sh ran it beside the build), then all the others from one queue,
# longest budget first, that $HLCTL_TEST_LANES lanes (2) take from as each
# becomes free: the long VM tests start first, and the short ones fill in
# wherever a lane ends early.
run_test_binaries() {
    local all solo= queue="$RESULTS_DIR/queue" lanes=${HLCTL_TEST_LANES:-2} label exe
    all=$(test_executables)
    [ -n "$all" ] || { echo "test.sh: cargo listed no test executable" >&2; exit 1; }
    : >"$queue.unsorted"
    while read -r label exe; do
        case "$(budget_field "$label" 3)" in
        solo) solo+="$label $exe"$'\n' ;;
        prepare) ;;
        *) printf '%s %s %s\n' "$(budget_field "$label" 2 | grep . || echo 20)" "$label" "$exe" >>"$queue.unsorted" ;;
        esac
    done <<<"$all"
    sort -k1,1nr -k2,2 "$queue.unsorted" >"$queue"
    local start pids=() n
    start=$(now)
    printf '%s' "$solo" | run_lane
    for ((n = 0; n < lanes; n++)); do
        run_queue_lane "$queue" &
        pids+=($!)
    done
    wait "${pids[@]}" || true
    record "tests (wall, $lanes lanes)" "$(elapsed "$start")"
}

# The table: every recorded step and binary, slowest first, with its budget.
print_times() {
    echo
    echo "test.sh: wall time of each step and test binary (budgets: $BUDGETS)"
    printf '%8s  %8s  %s\n' seconds budget name
    local over=0 secs name budget flag
    while IFS=$'\t' read -r secs name; do
        budget=$(budget_field "$name" 2)
        flag=
        if [ -z "$budget" ]; then
            budget=-
        elif [ "$secs" -gt "$budget" ]; then
            flag="  OVER BUDGET"
            over=$((over + 1))
        fi
        printf '%8s  %8s  %s%s\n' "$secs" "$budget" "$name" "$flag"
    done < <(sort -t$'\t' -k1,1nr "$TIMES_FILE")
    [ "$over" = 0 ] || echo "test.sh: $over step(s) over their budget in $BUDGETS"
}

# Sum the harness' "test result:" lines; a binary without one failed whole.
print_summary() {
    local passed=0 failed=0 ignored=0 broken=() f line p x i
    for f in "$RESULTS_DIR"/*.log; do
        line=$(grep -E '^test result: ' "$f" | tail -n1 || true)
        if [ "$(cat "$f.rc")" != 0 ] && ! grep -qE ' [1-9][0-9]* failed' <<<"$line"; then
            broken+=("$(basename "$f" .log)")
        fi
        p=$(sed -nE 's/.* ([0-9]+) passed.*/\1/p' <<<"$line")
        x=$(sed -nE 's/.* ([0-9]+) failed.*/\1/p' <<<"$line")
        i=$(sed -nE 's/.* ([0-9]+) ignored.*/\1/p' <<<"$line")
        passed=$((passed + ${p:-0}))
        failed=$((failed + ${x:-0}))
        ignored=$((ignored + ${i:-0}))
    done
    failed=$((failed + ${#broken[@]}))
    # Every binary whose exit code was not 0 (test.sh runs under set -e and
    # pipefail: nothing here may fail when all of them passed).
    local failing= rc_file
    for rc_file in "$RESULTS_DIR"/*.log.rc; do
        [ ! -e "$rc_file" ] || [ "$(cat "$rc_file")" = 0 ] || failing+="$(basename "$rc_file" .log.rc) "
    done
    [ -z "$failing" ] || echo "test.sh: failing test binaries: $failing"
    [ ${#broken[@]} = 0 ] || echo "test.sh: ended without a test result (counted as one failure each): ${broken[*]}"
    echo "test.sh: $ignored test(s) did not run (#[ignore], each with its reason in its binary's output)"
    echo "suite: $passed passed, $failed failed, $ignored skipped"
    [ -z "$failing" ]
}
