#!/bin/bash
# Build a gzip'ed cpio (newc) initramfs for the VM test rig.
#
# Usage: build-initramfs.sh -o OUT [-k MODULES_DIR] [-m MODULE]...
#            [-b PATH[:NAME]]... [-f SRC:DEST]... [-s SCRIPT] [-S]
#   -o OUT          the initramfs to write (gzip'ed cpio newc)
#   -k MODULES_DIR  where NAME.ko / NAME.deps live (fetch-kernel.sh's MODULES=)
#   -m MODULE       insmod this module at boot (its .deps are loaded first);
#                   modules built into the kernel are skipped
#   -b PATH[:NAME]  a host binary, installed as /opt/bin/NAME (default: its
#                   base name) with every library ldd lists; debug info is
#                   stripped from the copy unless -S
#   -f SRC:DEST     any other host file, installed at DEST
#   -s SCRIPT       the guest script; /init runs it with sh after setting up
#   -S              do not strip binaries
#   -r ROOTDEV      boot a real root instead of a script: after the modules,
#                   mount ROOTDEV (ext4) and switch_root to its /sbin/init
#
# What /init does: mounts devtmpfs, proc, sysfs, tmpfs on /run (with
# /run/netns) and /tmp; silences kernel messages on the console; insmods the
# modules; brings lo up; prints ===HLCTL-GUEST-START===, runs the script,
# prints ===HLCTL-GUEST-EXIT rc=N=== and powers off. The guest script sees
# PATH=/opt/bin:/bin:..., and a shell function per -b binary so that e.g.
# `ip` runs /opt/bin/ip rather than busybox's applet of the same name, and
# the function `section NAME CMD...` (stdout of CMD between ===BEGIN NAME===
# and ===END NAME rc=N===, for the host to parse), and `wait_carrier IFACE
# [SECONDS]`.
# Needs: busybox (static: Debian's busybox-static), cpio, gzip, ldd; strip
# (binutils) unless -S.
set -euo pipefail

die() { echo "build-initramfs: error: $*" >&2; exit 1; }

out='' moddir='' script='' strip=1 rootdev=
modules=() bins=() files=()
while getopts "o:k:m:b:f:s:Sr:" opt; do
    case $opt in
    o) out=$OPTARG ;;
    k) moddir=$OPTARG ;;
    m) modules+=("${OPTARG//-/_}") ;;
    b) bins+=("$OPTARG") ;;
    f) files+=("$OPTARG") ;;
    s) script=$OPTARG ;;
    S) strip= ;;
    r) rootdev=$OPTARG ;;
    *) die "bad option (see the header of $0)" ;;
    esac
done
[ -n "$out" ] || die "-o OUT is required"
[ ${#modules[@]} -eq 0 ] || [ -d "$moddir" ] || die "-m needs -k MODULES_DIR"

busybox=$(command -v busybox) || die "busybox not found (apt-get install busybox-static)"

stage=$(mktemp -d "${TMPDIR:-/tmp}/hlctl-initramfs.XXXXXX")
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage"/{bin,sbin,usr/bin,usr/sbin,opt/bin,lib/modules,dev,proc,sys,run,tmp,root,etc/hlctl}

# Copy the libraries (and the loader) ldd lists for a binary, at the same paths.
copy_libs() {
    local lib
    # "name => /path (addr)" and "/lib64/ld-linux-x86-64.so.2 (addr)"
    for lib in $(ldd "$1" 2>/dev/null | awk '{for (i = 1; i <= NF; i++) if ($i ~ /^\//) print $i}'); do
        [ -e "$stage$lib" ] && continue
        mkdir -p "$stage$(dirname "$lib")"
        cp -L "$lib" "$stage$lib"
    done
}

# Busybox with every applet as a link.
cp "$busybox" "$stage/bin/busybox"
copy_libs "$busybox"
for applet in $("$busybox" --list-full); do
    [ -e "$stage/$applet" ] || ln -s /bin/busybox "$stage/$applet"
done

# Host binaries, outside /bin.
wrappers=
for spec in "${bins[@]}"; do
    path=${spec%%:*}
    name=${spec#"$path"}
    name=${name#:}
    [ -n "$name" ] || name=$(basename "$path")
    [ -f "$path" ] || die "binary $path not found"
    cp -L "$path" "$stage/opt/bin/$name"
    chmod 755 "$stage/opt/bin/$name"
    if [ -n "$strip" ] && [ ! -L "$path" ]; then
        strip --strip-debug "$stage/opt/bin/$name" 2>/dev/null || true
    fi
    copy_libs "$path"
    case $name in
    *[!A-Za-z0-9_]*) ;; # not a valid shell function name: call it by path
    *) wrappers+="$name() { /opt/bin/$name \"\$@\"; }"$'\n' ;;
    esac
done

for spec in "${files[@]}"; do
    src=${spec%%:*}
    dest=${spec#*:}
    if [ "$src" = "$spec" ] || [ -z "$dest" ]; then die "-f wants SRC:DEST, got $spec"; fi
    [ -e "$src" ] || die "file $src not found"
    mkdir -p "$stage$(dirname "$dest")"
    cp -rL "$src" "$stage$dest"
done

# Modules in load order: dependencies first.
declare -A loaded=()
order=()
add_module() {
    local m=$1 d deps=()
    [ -n "${loaded[$m]:-}" ] && return 0
    loaded[$m]=1
    if [ ! -f "$moddir/$m.ko" ]; then
        if grep -qsx "$m" "$moddir/../modules.builtin"; then
            return 0
        fi
        die "module $m not in $moddir (run fetch-kernel.sh $m)"
    fi
    if [ -s "$moddir/$m.deps" ]; then read -r -a deps <"$moddir/$m.deps" || true; fi
    for d in "${deps[@]}"; do add_module "$d"; done
    cp "$moddir/$m.ko" "$stage/lib/modules/$m.ko"
    order+=("$m")
}
for m in "${modules[@]}"; do add_module "$m"; done
printf '%s\n' "${order[@]}" >"$stage/etc/hlctl/modules"

cat >"$stage/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/bin/sh
nobody:x:65534:65534:nobody:/nonexistent:/bin/false
EOF
cat >"$stage/etc/group" <<'EOF'
root:x:0:
nogroup:x:65534:
EOF
echo "127.0.0.1 localhost" >"$stage/etc/hosts"
echo "hosts: files" >"$stage/etc/nsswitch.conf"

{
    echo "#!/bin/sh"
    echo "# Host binaries win over busybox applets of the same name."
    printf '%s' "$wrappers"
    cat <<'PRELUDE'
# section NAME CMD...: CMD's stdout between ===BEGIN NAME=== and
# ===END NAME rc=N===; its stderr follows as section NAME.stderr if any.
section() {
    _sn=$1
    shift
    echo "===BEGIN $_sn==="
    "$@" 2>/tmp/.section.err
    _src=$?
    echo "===END $_sn rc=$_src==="
    if [ -s /tmp/.section.err ]; then
        echo "===BEGIN $_sn.stderr==="
        cat /tmp/.section.err
        echo "===END $_sn.stderr rc=0==="
    fi
    return $_src
}
# wait_carrier IFACE [SECONDS]: wait (default 10 s) until IFACE has carrier.
wait_carrier() {
    _wi=0
    while [ "$(cat "/sys/class/net/$1/carrier" 2>/dev/null)" != 1 ]; do
        [ $_wi -ge $((${2:-10} * 10)) ] && return 1
        sleep 0.1
        _wi=$((_wi + 1))
    done
}
PRELUDE
    echo "# ---- guest script ----"
    if [ -n "$script" ]; then cat "$script"; fi
} >"$stage/guest.sh"
chmod 755 "$stage/guest.sh"

cat >"$stage/init" <<'EOF'
#!/bin/sh
/bin/busybox mount -t devtmpfs devtmpfs /dev
exec </dev/console >/dev/console 2>&1
export PATH=/opt/bin:/bin:/sbin:/usr/bin:/usr/sbin HOME=/root
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t tmpfs tmpfs /run
mkdir -p /run/netns
mount -t tmpfs tmpfs /tmp
# Only emergencies on the console, so kernel lines do not split guest output.
echo 1 >/proc/sys/kernel/printk
for m in $(cat /etc/hlctl/modules); do
    insmod /lib/modules/$m.ko || echo "===HLCTL-INSMOD-FAILED $m==="
done
if [ -s /etc/hlctl/rootdev ]; then
    # A real system: its own init mounts what it needs.
    mkdir -p /newroot
    rootdev=$(cat /etc/hlctl/rootdev)
    # Disks are probed asynchronously: wait (10 s at most) for it.
    i=0
    while [ ! -b "$rootdev" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
    if mount -t ext4 "$rootdev" /newroot; then
        umount /tmp /run /sys /proc
        mount --move /dev /newroot/dev
        exec switch_root /newroot /sbin/init
    fi
    echo "===HLCTL-ROOT-MOUNT-FAILED==="
    poweroff -f
fi
ip link set lo up
echo "===HLCTL-GUEST-START==="
sh /guest.sh
rc=$?
echo "===HLCTL-GUEST-EXIT rc=$rc==="
sync
poweroff -f
EOF
chmod 755 "$stage/init"
printf '%s' "$rootdev" >"$stage/etc/hlctl/rootdev"

mkdir -p "$(dirname "$out")"
(cd "$stage" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) | gzip -1 >"$out.tmp"
mv "$out.tmp" "$out"
echo "$out"
