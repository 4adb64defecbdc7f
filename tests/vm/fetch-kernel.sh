#!/bin/bash
# Fetch Debian's stock kernel (the one package linux-image-amd64 depends on)
# and keep only vmlinuz plus the modules the VM tests need, in a cache dir.
#
# Usage: fetch-kernel.sh [MODULE...]
#   MODULE: extra module names to keep besides the default set (every
#   module of tests/vm/modules.txt); a trailing
#   '?' marks a module as optional (skipped when the package lacks it).
# Env:   HLCTL_VM_CACHE (default /var/tmp/hlctl-vm)
#        HLCTL_VM_REFRESH=1: ask apt which kernel package is current instead
#        of reusing the cached one
# Output (stdout, one per line):
#   KERNEL=<path to vmlinuz>
#   MODULES=<dir holding NAME.ko and NAME.deps for each kept module>
#   KVER=<kernel release>
# Idempotent and fast when everything asked for is cached already.
# Needs: apt-get (with package lists), dpkg-deb, flock, xz/zstd only if the
# package ships compressed modules.
set -euo pipefail

CACHE=${HLCTL_VM_CACHE:-/var/tmp/hlctl-vm}
# Every module any VM test loads (tests/vm/modules.txt), so one fetch serves all.
DEFAULT_MODULES=$(grep -v '^#' "$(dirname "$0")/modules.txt" | tr '\n' ' ')

log() { echo "fetch-kernel: $*" >&2; }
die() { log "error: $*"; exit 1; }
norm() { echo "${1//-/_}"; }

mkdir -p "$CACHE"
exec 9>"$CACHE/.lock"
flock 9

resolve_pkg() {
    apt-cache depends linux-image-amd64 2>/dev/null |
        awk '/Depends: linux-image-/{print $2; exit}'
}

# Fast path: reuse the cached kernel without asking apt (apt-cache alone
# takes over a second). HLCTL_VM_REFRESH=1 re-checks which package is current.
pkg=
if [ -z "${HLCTL_VM_REFRESH:-}" ] && [ -f "$CACHE/current/.complete" ]; then
    pkg=$(readlink "$CACHE/current")
fi
[ -n "$pkg" ] || pkg=$(resolve_pkg || true)
if [ -z "$pkg" ]; then
    if [ -L "$CACHE/current" ] && [ -f "$CACHE/current/.complete" ]; then
        pkg=$(readlink "$CACHE/current")
        log "apt has no linux-image-amd64; using cached $pkg"
    else
        log "apt has no linux-image-amd64 yet; running apt-get update"
        apt-get update -qq >&2 || true
        pkg=$(resolve_pkg || true)
        [ -n "$pkg" ] || die "cannot resolve the kernel package linux-image-amd64 depends on"
    fi
fi
dir="$CACHE/$pkg"
mods="$dir/modules"

# Module names wanted (normalised), and which of them are optional.
wanted=()
declare -A optional=()
for m in $DEFAULT_MODULES "$@"; do
    case $m in
    *\?) m=$(norm "${m%\?}"); optional[$m]=1 ;;
    *) m=$(norm "$m") ;;
    esac
    wanted+=("$m")
done

# True when every wanted module is kept, built in, or known absent and optional.
all_cached() {
    [ -f "$dir/.complete" ] || return 1
    local m
    for m in "${wanted[@]}"; do
        [ -f "$mods/$m.ko" ] && continue
        grep -qx "$m" "$dir/modules.builtin" && continue
        # In the package but not kept yet: extract again.
        awk -v m="$m" '$1==m{f=1} END{exit !f}' "$dir/modules.index" && return 1
        [ -n "${optional[$m]:-}" ] && continue
        die "module $m is not in $pkg"
    done
}

print_paths() {
    echo "KERNEL=$dir/vmlinuz"
    echo "MODULES=$mods"
    echo "KVER=$(cat "$dir/kver")"
}

if all_cached; then
    print_paths
    exit 0
fi

tmp=$(mktemp -d "$CACHE/.extract.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# The package stays in the cache: a module asked for later is extracted from
# it without a second download.
mkdir -p "$dir"
deb=$(ls "$dir"/*.deb 2>/dev/null | head -n1 || true)
if [ -z "$deb" ]; then
    log "downloading $pkg"
    (cd "$tmp" && apt-get download -q -o APT::Sandbox::User=root "$pkg" >&2)
    mv "$tmp"/*.deb "$dir/"
    deb=$(ls "$dir"/*.deb | head -n1)
fi
log "extracting $(basename "$deb")"
dpkg-deb -x "$deb" "$tmp/root"

mkdir -p "$mods"
vmlinuz=
for f in "$tmp"/root/boot/vmlinuz-*; do [ -f "$f" ] && vmlinuz=$f && break; done
[ -n "$vmlinuz" ] || die "no boot/vmlinuz-* in $pkg"
kver=${vmlinuz##*/vmlinuz-}
moddir=
for d in "$tmp/root/lib/modules/$kver" "$tmp/root/usr/lib/modules/$kver"; do
    [ -d "$d" ] && moddir=$d && break
done
[ -n "$moddir" ] || die "no lib/modules/$kver in $pkg"

# Index of every module in the package: "<name> <path relative to moddir>".
(cd "$moddir" && find . -name '*.ko' -o -name '*.ko.xz' -o -name '*.ko.zst' -o -name '*.ko.gz') |
    sed 's|^\./||' |
    awk '{n=$0; sub(/.*\//, "", n); sub(/\.ko(\.(xz|zst|gz))?$/, "", n); gsub(/-/, "_", n); print n, $0}' |
    sort >"$tmp/modules.index"
# Modules compiled into the kernel (e.g. sch_fq_codel): nothing to load.
sed 's|.*/||; s|\.ko$||; s|-|_|g' "$moddir/modules.builtin" | sort >"$tmp/modules.builtin"

# Copy one module (decompressed) into the cache; echo its dependencies.
keep_module() {
    local name=$1 rel out
    rel=$(awk -v m="$name" '$1==m{print $2; exit}' "$tmp/modules.index")
    [ -n "$rel" ] || return 1
    out="$mods/$name.ko"
    case $rel in
    *.xz) xz -dc "$moddir/$rel" >"$out.tmp" ;;
    *.zst) zstd -qdc "$moddir/$rel" >"$out.tmp" ;;
    *.gz) gzip -dc "$moddir/$rel" >"$out.tmp" ;;
    *) cp "$moddir/$rel" "$out.tmp" ;;
    esac
    # The modinfo section holds NUL-separated key=value strings.
    tr '\0' '\n' <"$out.tmp" | sed -n 's/^depends=//p' | head -n1 | tr ',' ' ' |
        sed 's/-/_/g' >"$mods/$name.deps.tmp"
    mv "$mods/$name.deps.tmp" "$mods/$name.deps"
    mv "$out.tmp" "$out"
    cat "$mods/$name.deps"
}

# Keep the wanted modules and, transitively, what their depends= lines name.
queue=("${wanted[@]}")
declare -A seen=()
while [ ${#queue[@]} -gt 0 ]; do
    m=${queue[0]}
    queue=("${queue[@]:1}")
    [ -n "${seen[$m]:-}" ] && continue
    seen[$m]=1
    if grep -qx "$m" "$tmp/modules.builtin"; then
        log "module $m is built into the kernel"
    elif deps=$(keep_module "$m"); then
        for d in $deps; do queue+=("$d"); done
    elif [ -n "${optional[$m]:-}" ]; then
        log "optional module $m not in $pkg; skipped"
    else
        die "module $m not in $pkg"
    fi
done

cp "$vmlinuz" "$dir/vmlinuz.tmp"
mv "$dir/vmlinuz.tmp" "$dir/vmlinuz"
echo "$kver" >"$dir/kver"
mv "$tmp/modules.index" "$dir/modules.index"
mv "$tmp/modules.builtin" "$dir/modules.builtin"
cp "$tmp/root/boot/config-$kver" "$dir/config" 2>/dev/null || true
touch "$dir/.complete"
ln -sfn "$pkg" "$CACHE/current"
log "cached $pkg in $dir ($(du -sh "$dir" | cut -f1))"
print_paths
