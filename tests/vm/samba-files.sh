#!/bin/bash
# samba-files.sh ROOT BIN...: the files a guest needs to run Samba's BINs
# (paths inside ROOT, e.g. usr/sbin/smbd) unpacked by fetch-debs.sh into ROOT,
# one "SRC:DEST" a line for Vm::builder().file(): each BIN at its own path,
# and every library ldd resolves for it: Samba's own (ROOT's lib dirs, which
# the host's ldd finds only through LD_LIBRARY_PATH) at their path without
# ROOT, the host's at their own path. Fails naming a library ldd cannot find.
# Samba loads no module at run time for tests/vm_stacks_nfs.rs's smb.conf
# (tdbsam, no VFS objects), so nothing else is needed.
set -euo pipefail
R=$1; shift
export LD_LIBRARY_PATH=$R/usr/lib/x86_64-linux-gnu:$R/usr/lib/x86_64-linux-gnu/samba
{
for b in "$@"; do
    echo "$R/$b:/$b"
    out=$(ldd "$R/$b")
    if grep -q "not found" <<<"$out"; then
        echo "samba-files.sh: $b: $(grep 'not found' <<<"$out" | tr '\n' ' ')(install the host's package of that library)" >&2
        exit 1
    fi
    awk '{for (i = 1; i <= NF; i++) if ($i ~ /^\//) print $i}' <<<"$out" | while read -r lib; do
        case $lib in
        "$R"/*) echo "$lib:${lib#"$R"}" ;;
        *) echo "$lib:$lib" ;;
        esac
    done
done
} | sort -u
