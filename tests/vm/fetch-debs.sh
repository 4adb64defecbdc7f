#!/bin/bash
# Fetch Debian packages and unpack them (no install, no maintainer scripts)
# into a cache dir, for programs the VM tests copy into the guest (e.g. the
# NFS server and client tools of nfs-kernel-server and nfs-common).
#
# Usage: fetch-debs.sh PKG...
# Env:   HLCTL_DEBS_CACHE (default /var/tmp/hlctl-debs)
# Output (stdout): ROOT=<dir the packages are unpacked into>
# The dir is keyed by the packages' candidate versions; instant when cached.
# Needs: apt-get (with package lists), apt-cache, dpkg-deb, flock.
set -euo pipefail

CACHE=${HLCTL_DEBS_CACHE:-/var/tmp/hlctl-debs}
log() { echo "fetch-debs: $*" >&2; }
die() { log "error: $*"; exit 1; }
[ $# -gt 0 ] || die "usage: fetch-debs.sh PKG..."

mkdir -p "$CACHE"
exec 9>"$CACHE/.lock"
flock 9

key=
for p in "$@"; do
    v=$(apt-cache policy "$p" 2>/dev/null | awk '/Candidate:/{print $2; exit}')
    if [ -z "$v" ] || [ "$v" = "(none)" ]; then
        log "apt knows no $p yet; running apt-get update"
        apt-get update -qq >&2 || true
        v=$(apt-cache policy "$p" 2>/dev/null | awk '/Candidate:/{print $2; exit}')
    fi
    [ -n "$v" ] && [ "$v" != "(none)" ] || die "no candidate version of $p"
    key="$key $p=$v"
done
dir="$CACHE/$(echo "$key" | sha256sum | cut -c1-16)"
if [ -f "$dir/.complete" ]; then
    echo "ROOT=$dir/root"
    exit 0
fi
tmp=$(mktemp -d "$CACHE/.extract.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
log "downloading$key"
(cd "$tmp" && apt-get download -q -o APT::Sandbox::User=root "$@" >&2)
for deb in "$tmp"/*.deb; do
    dpkg-deb -x "$deb" "$tmp/root"
done
rm -f "$tmp"/*.deb
echo "$key" >"$tmp/packages"
rm -rf "$dir"
mv "$tmp" "$dir"
trap - EXIT
touch "$dir/.complete"
echo "ROOT=$dir/root"
