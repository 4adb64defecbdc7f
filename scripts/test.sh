#!/usr/bin/env bash
# The whole test suite: unit tests, netns/veth tests, iperf3/fio/sysbench interop,
# and the qemu VM tests with a real e1000e driver, after rustfmt and clippy.
# Needs root (namespaces, VMs).
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "run as root: the tests create network namespaces and VMs" >&2; exit 2; }
bash scripts/setup.sh
# The static build (fat LTO, ~4 min from nothing on 2 cores, mostly one core
# in its last step) starts now, beside fmt, clippy and the test build, under
# the lock tests/common/static_bin.rs takes; the tests start once it is done
# (no benchmark shares the machine with it), and those that need it rebuild
# (and report) it if it failed. Only for the whole suite (a run of chosen
# tests may not need it). In its own process group, so that an early exit
# (fmt, clippy) stops all of it.
if [ $# -eq 0 ]; then
    mkdir -p target/static
    setsid flock target/static/.build.lock scripts/build-static.sh > target/static/early-build.log 2>&1 &
    static_pid=$!
    trap 'kill -TERM -- "-$static_pid" 2>/dev/null || true' EXIT
fi
# Style and lints first, so they fail before the long tests: the [lints] of Cargo.toml at -D warnings.
cargo fmt --all -- --check
cargo clippy --all-targets --locked -- -D warnings
if [ -n "${static_pid:-}" ]; then
    cargo test --locked --all-targets --no-run
    wait "$static_pid" || echo "test.sh: the early static build failed (target/static/early-build.log)" >&2
fi
cargo test --locked --all-targets --no-fail-fast "$@"
