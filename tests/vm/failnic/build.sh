#!/bin/bash
# Build failnic.ko (tests/vm/failnic/failnic.c: a NIC that refuses setting
# requests on demand) for the kernel the VM tests boot, once per source and
# kernel, into the VM cache.
#
# Usage: build.sh KVER        (KVER: the release fetch-kernel.sh printed)
# Env:   HLCTL_VM_CACHE (default /var/tmp/hlctl-vm)
# Output (stdout): FAILNIC=<path to failnic.ko>
# Needs: Debian's linux-headers-KVER (scripts/setup.sh installs it), make, gcc.
set -euo pipefail

log() { echo "failnic: $*" >&2; }
die() { log "error: $*"; exit 1; }
[ $# -eq 1 ] || die "usage: build.sh KVER"
kver=$1
src=$(cd "$(dirname "$0")" && pwd)
headers=/usr/src/linux-headers-$kver
[ -f "$headers/Makefile" ] ||
    die "no kernel headers for $kver in $headers: apt-get install linux-headers-$kver (scripts/setup.sh does)"

CACHE=${HLCTL_VM_CACHE:-/var/tmp/hlctl-vm}
key=$(cat "$src/failnic.c" "$src/Kbuild" | sha256sum | cut -c1-16)
out="$CACHE/failnic-$kver-$key"
mkdir -p "$CACHE"
exec 9>"$CACHE/.failnic.lock"
flock 9
if [ ! -f "$out/failnic.ko" ]; then
    tmp=$(mktemp -d "$CACHE/.failnic.XXXXXX")
    trap 'rm -rf "$tmp"' EXIT
    cp "$src/failnic.c" "$src/Kbuild" "$tmp/"
    log "building for $kver"
    make -s -C "$headers" M="$tmp" modules >"$tmp/build.log" 2>&1 ||
        { cat "$tmp/build.log" >&2; die "the module did not build"; }
    rm -rf "$out"
    mkdir -p "$out"
    cp "$tmp/failnic.ko" "$out/"
fi
echo "FAILNIC=$out/failnic.ko"
