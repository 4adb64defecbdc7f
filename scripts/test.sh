#!/usr/bin/env bash
# The whole test suite: unit tests, netns/veth tests, iperf3/fio/sysbench interop,
# and the qemu VM tests with a real e1000e driver, after rustfmt and clippy.
# Needs root (namespaces, VMs).
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "run as root: the tests create network namespaces and VMs" >&2; exit 2; }
bash scripts/setup.sh
# Style and lints first, so they fail before the long tests: the [lints] of Cargo.toml at -D warnings.
cargo fmt --all -- --check
cargo clippy --all-targets --locked -- -D warnings
cargo test --locked --all-targets --no-fail-fast "$@"
