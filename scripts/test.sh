#!/usr/bin/env bash
# The whole test suite: unit tests, netns/veth tests, iperf3/fio/sysbench interop,
# and the qemu VM tests with a real e1000e driver, after rustfmt and clippy.
# Needs root (namespaces, VMs).
#
#   scripts/test.sh            the whole suite, timed: setup, fmt, clippy, the
#                              builds and every test binary; a table at the end
#                              (slowest first) against the budgets of
#                              docs/tests.md, then "suite: N passed, N failed"
#   scripts/test.sh ARGS...    cargo test --locked --all-targets --no-fail-fast ARGS
#                              (e.g. `--test vm_netmgr`), untimed
set -euo pipefail
. "$(dirname "$0")/as-root.sh"
cd "$(dirname "$0")/.."

if [ $# -gt 0 ]; then
    bash scripts/setup.sh
    cargo fmt --all -- --check
    cargo clippy --all-targets --locked -- -D warnings
    exec cargo test --locked --all-targets --no-fail-fast "$@"
fi

# shellcheck source=scripts/test_timing.sh
. scripts/test_timing.sh

# The static build (fat LTO, ~10 min from nothing on 2 cores beside the
# rest, mostly one core in its last step) starts first, beside setup (it
# needs no Debian package: apt's downloads leave the cores to it), fmt,
# clippy and the test build, under the lock tests/common/static_bin.rs
# takes; the tests start once it is done (no benchmark shares the machine
# with it), and those that need it rebuild (and report) it if it failed. In
# its own process group, so that an early exit (setup, fmt, clippy) stops
# all of it.
mkdir -p target/static
static_start=$(now)
setsid bash -c 'flock target/static/.build.lock scripts/build-static.sh; echo "rc=$?" > target/static/early-build.rc' \
    > target/static/early-build.log 2>&1 &
static_pid=$!
images_pid=
trap 'kill -TERM -- "-$static_pid" ${images_pid:+"-$images_pid"} 2>/dev/null || true' EXIT
timed setup bash scripts/setup.sh
# Style first, so it fails before anything long.
timed fmt cargo fmt --all -- --check
# The images the booted-system and package tests share (tests/images.rs:
# debootstraps, ~6 min on a bare machine, mostly downloads and dpkg) are
# made beside clippy and the build of the other binaries, as soon as their
# own binary is built (the dependencies and the library it compiles are the
# build's first part anyway).
timed "build (images)" cargo test --locked --test images --no-run
images_exe=$(test_executables --test images | awk '{ print $2 }')
setsid bash -c '. scripts/test_timing.sh && run_one images "$1"' _ "$images_exe" \
    >"$RESULTS_DIR/images.out" 2>&1 &
images_pid=$!
# Lints: the [lints] of Cargo.toml at -D warnings.
timed clippy cargo clippy --all-targets --locked -- -D warnings
timed "build (tests)" cargo test --locked --all-targets --no-run
wait "$static_pid" || true
record "build (static, overlapped)" "$(elapsed "$static_start")"
grep -qx 'rc=0' target/static/early-build.rc 2>/dev/null ||
    echo "test.sh: the early static build failed (target/static/early-build.log)" >&2

wait "$images_pid" || true
cat "$RESULTS_DIR/images.out"
run_test_binaries
print_times
print_summary
