#!/usr/bin/env bash
# Build hlctl as one statically linked executable (glibc static-pie) for boxes
# without apt (Synology DSM, TrueNAS SCALE, Unraid) and for the OCI image
# (scripts/build-image.sh): target/static/hlctl, stripped, no NEEDED entries.
#
# --target x86_64-unknown-linux-gnu keeps build scripts and proc-macros host
# (dynamic) programs: RUSTFLAGS then reach only the target's crates. Its own
# target directory (target/static-build) leaves the debug and release builds
# of the tests and of the .deb untouched.
#
# Usage: scripts/build-static.sh [--print-path]
#   Prints the path of the binary on its last line.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
triple=x86_64-unknown-linux-gnu
export CARGO_TARGET_DIR="$here/target/static-build"
export RUSTFLAGS="-C target-feature=+crt-static"
export CARGO_PROFILE_RELEASE_STRIP=symbols
start=$(date +%s)
cargo build --release --locked --target "$triple" --bin hlctl >&2
out="$here/target/static"
mkdir -p "$out"
src="$CARGO_TARGET_DIR/$triple/release/hlctl"
# Copy only when it changed, so the image build's cache key (mtime) holds.
if ! cmp -s "$src" "$out/hlctl"; then
    cp "$src" "$out/hlctl.tmp.$$"
    mv "$out/hlctl.tmp.$$" "$out/hlctl"
fi
if readelf -d "$out/hlctl" | grep -q NEEDED; then
    echo "build-static: $out/hlctl has NEEDED entries:" >&2
    readelf -d "$out/hlctl" | grep NEEDED >&2
    exit 1
fi
echo "build-static: $(stat -c %s "$out/hlctl") bytes in $(( $(date +%s) - start )) s" >&2
echo "$out/hlctl"
