#!/usr/bin/env bash
# `hlctl bench file` against the tools a user would time the same copy with,
# alternating (swapping who goes first each round), in one run:
# - SSH: `hlctl bench file ssh://root@127.0.0.1:PORT/DIR --cipher C` against
#   `ssh -c C host 'cat > f' < file` and `ssh host 'cat f' > /dev/null`, and
#   against `scp` both ways (OpenSSH 9.2's scp speaks SFTP), all over an ssh
#   master connection (no key exchange in their time, as none is in
#   hlctl's), on a throwaway sshd on 127.0.0.1 (own config, host key and
#   client key; the system's sshd and ~/.ssh are not touched);
# - a directory: `hlctl bench file --dir DIR` against `dd oflag=direct` /
#   `dd iflag=direct` (bs=1M), or `conv=fdatasync` and dropped pages where
#   DIR refuses O_DIRECT, as hlctl reports it did.
#
#   sudo benches/file_vs_peers.sh [DIR]
#
# DIR defaults to a fresh directory under /var/tmp. Environment: ROUNDS (5),
# SIZE_MIB (1024: at 256 an SSH session's fixed costs, which the master
# connection spares the peers, weighed 0.69-0.74x on hlctl's write; at 1024
# 0.88-0.91x), CIPHER (aes128-gcm@openssh.com), SCP_FLAGS (e.g. -O for the
# legacy SCP protocol instead of SFTP), HLCTL (a built hlctl; else
# target/release/hlctl is built first). Target: every median ratio
# hlctl/peer within 0.90-1.10. Needs root (sshd), openssh-server, jq, dd.
# A figure that cannot be read stops the run with an error naming it.
set -euo pipefail
# A failing command inside $(...) stops the run too.
shopt -s inherit_errexit
cd "$(dirname "$0")/.."
. benches/lib.sh

ROUNDS=${ROUNDS:-5}
SIZE_MIB=${SIZE_MIB:-1024}
CIPHER=${CIPHER:-aes128-gcm@openssh.com}
if [ -z "${HLCTL:-}" ]; then
    nice -n 10 cargo build -q --release --bin hlctl
    HLCTL=$PWD/target/release/hlctl
fi
[ -x /usr/sbin/sshd ] || { echo "/usr/sbin/sshd is missing (scripts/setup.sh installs openssh-server)" >&2; exit 1; }

work=$(mktemp -d /var/tmp/hlctl-file-bench.XXXXXX)
dir=${1:-$work/dir}
mkdir -p "$dir" "$work/remote" "$work/state"
sshd_pid=
master_pid=
cleanup() {
    [ -n "$master_pid" ] && kill "$master_pid" 2>/dev/null || true
    [ -n "$sshd_pid" ] && kill "$sshd_pid" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

# The throwaway server and the client's config.
mkdir -p /run/sshd
for k in host client; do ssh-keygen -q -t ed25519 -N '' -f "$work/$k"; done
cp "$work/client.pub" "$work/authorized_keys"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat > "$work/sshd_config" <<CFG
ListenAddress 127.0.0.1
HostKey $work/host
AuthorizedKeysFile $work/authorized_keys
StrictModes no
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
PermitRootLogin prohibit-password
PidFile none
Subsystem sftp internal-sftp
CFG
cat > "$work/ssh_config" <<CFG
Host *
  IdentityFile $work/client
  IdentitiesOnly yes
  UserKnownHostsFile $work/known_hosts
  StrictHostKeyChecking no
  LogLevel ERROR
CFG
/usr/sbin/sshd -D -e -p "$port" -f "$work/sshd_config" 2>/dev/null & sshd_pid=$!
SSH=(ssh -F "$work/ssh_config" -o BatchMode=yes -p "$port")
for _ in $(seq 100); do "${SSH[@]}" root@127.0.0.1 true 2>/dev/null && break; sleep 0.1; done
"${SSH[@]}" -c "$CIPHER" -M -N -S "$work/mux" root@127.0.0.1 & master_pid=$!
for _ in $(seq 100); do "${SSH[@]}" -S "$work/mux" root@127.0.0.1 true 2>/dev/null && break; sleep 0.1; done
MUX=("${SSH[@]}" -S "$work/mux" -o ControlMaster=no root@127.0.0.1)

bytes=$((SIZE_MIB << 20))
head -c "$bytes" /dev/urandom > "$work/src.bin"
# secs CMD...: the seconds CMD took; a failing CMD stops the run (its time
# would be a figure of nothing).
secs() {
    local t0 t1
    t0=$(date +%s.%N)
    "$@" || { echo "failed, so no figure: $*" >&2; return 1; }
    t1=$(date +%s.%N)
    awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }'
}
rate() { awk -v b="$bytes" -v s="$1" 'BEGIN { printf "%.0f", b / s }'; }

hl_ssh() {
    "$HLCTL" --local --json bench file "ssh://root@127.0.0.1:$port$work/remote" --ssh-config "$work/ssh_config" \
        --cipher "$CIPHER" --size "${SIZE_MIB}M" --no-net --no-disk --no-crypto \
        | jq -r '"\(.file.write.bytes_per_second) \(.file.read.bytes_per_second) \(.file.ssh.cipher_client_to_server)"'
}
peer_ssh() {
    local w r
    w=$(secs sh -c '"$@" < "$0"' "$work/src.bin" "${MUX[@]}" "cat > $work/remote/ref.bin")
    r=$(secs sh -c '"$@" > /dev/null' x "${MUX[@]}" "cat $work/remote/ref.bin")
    echo "$(rate "$w") $(rate "$r")"
}
peer_scp() {
    local w r
    w=$(secs scp -q ${SCP_FLAGS:-} -F "$work/ssh_config" -o ControlPath="$work/mux" -P "$port" "$work/src.bin" "root@127.0.0.1:$work/remote/scp.bin")
    r=$(secs scp -q ${SCP_FLAGS:-} -F "$work/ssh_config" -o ControlPath="$work/mux" -P "$port" "root@127.0.0.1:$work/remote/scp.bin" /dev/null)
    rm -f "$work/remote/scp.bin"
    echo "$(rate "$w") $(rate "$r")"
}
hl_dir() {
    "$HLCTL" --local --json bench file --dir "$dir" --size "${SIZE_MIB}M" --no-crypto \
        | jq -r '"\(.file.write.bytes_per_second) \(.file.read.bytes_per_second) \(.file.io.direct)"'
}
dd_rate() { dd "$@" 2>&1 | tail -1 | awk -F', ' '{ for (i = 1; i <= NF; i++) if ($i ~ / s$/) s = $i; split($0, f, " "); sub(/ s$/, "", s); printf "%.0f", f[1] / s }'; }
peer_dir() {
    local w r direct=$1
    if [ "$direct" = true ]; then
        w=$(dd_rate if=/dev/zero of="$dir/dd.bin" bs=1M count="$SIZE_MIB" oflag=direct)
        r=$(dd_rate if="$dir/dd.bin" of=/dev/null bs=1M iflag=direct)
    else
        w=$(dd_rate if=/dev/zero of="$dir/dd.bin" bs=1M count="$SIZE_MIB" conv=fdatasync)
        dd if="$dir/dd.bin" iflag=nocache count=0 status=none
        r=$(dd_rate if="$dir/dd.bin" of=/dev/null bs=1M)
    fi
    rm -f "$dir/dd.bin"
    echo "$w $r"
}

declare -A us peer
for r in $(seq "$ROUNDS"); do
    if (( r % 2 )); then a=$(hl_ssh); b=$(peer_ssh); e=$(peer_scp); c=$(hl_dir); d=$(peer_dir "$(echo "$c" | cut -d' ' -f3)")
    else e=$(peer_scp); b=$(peer_ssh); a=$(hl_ssh); d=$(peer_dir "$(hl_dir | cut -d' ' -f3)"); c=$(hl_dir); fi
    read -r sw sr cipher <<< "$a"; read -r pw pr <<< "$b"; read -r cw cr <<< "$e"
    read -r dw dr direct <<< "$c"; read -r qw qr <<< "$d"
    [ "$cipher" = "$CIPHER" ] || { echo "hlctl named cipher '$cipher', forced '$CIPHER'" >&2; exit 1; }
    for f in sw sr pw pr cw cr dw dr qw qr; do figure "$f round $r" "${!f}"; done
    echo "round $r: ssh write $sw/$pw read $sr/$pr; scp write $sw/$cw read $sr/$cr; dir (direct=$direct) write $dw/$qw read $dr/$qr B/s (hlctl/peer)"
    us[ssh_write]+=" $sw"; peer[ssh_write]+=" $pw"; us[ssh_read]+=" $sr"; peer[ssh_read]+=" $pr"
    us[scp_write]+=" $sw"; peer[scp_write]+=" $cw"; us[scp_read]+=" $sr"; peer[scp_read]+=" $cr"
    us[dir_write]+=" $dw"; peer[dir_write]+=" $qw"; us[dir_read]+=" $dr"; peer[dir_read]+=" $qr"
    rm -f "$work/remote/ref.bin"
done

median() { sort -g | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
printf '\n%-12s %12s %12s %8s  %s\n' "row (MB/s)" "hlctl" "peer" "ratio" "target 0.90-1.10"
for row in ssh_write ssh_read scp_write scp_read dir_write dir_read; do
    read -ra u <<< "${us[$row]}"; read -ra p <<< "${peer[$row]}"
    ratios=$(for i in "${!u[@]}"; do awk -v a="${u[$i]}" -v b="${p[$i]}" 'BEGIN { print a / b }'; done | median)
    mu=$(printf '%s\n' "${u[@]}" | median); mp=$(printf '%s\n' "${p[@]}" | median)
    verdict=$(awk -v r="$ratios" 'BEGIN { print (r >= 0.9 && r <= 1.1) ? "met" : "MISSED" }')
    printf '%-12s %12.1f %12.1f %8.3f  %s\n' "$row" "$(awk -v x="$mu" 'BEGIN{print x/1e6}')" "$(awk -v x="$mp" 'BEGIN{print x/1e6}')" "$ratios" "$verdict"
done
echo "(peer: ssh -c $CIPHER over a master connection, 'cat > f' < file and 'cat f' > /dev/null; scp over the same connection; dd bs=1M in $dir)"
