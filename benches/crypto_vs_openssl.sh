#!/usr/bin/env bash
# This CPU's AEADs and SMB3's signing MAC per core: hlctl's in-process
# figures (`hlctl bench file --crypto-only`, RustCrypto's aes-gcm, ccm,
# chacha20poly1305, cmac) against `openssl speed -evp` (`-cmac aes-128-cbc`
# for AES-128-CMAC) on 1 MiB buffers, alternating (swapping who goes first
# each round), one core each.
#
#   benches/crypto_vs_openssl.sh
#
# Environment: ROUNDS (default 5), HLCTL (a built hlctl; else
# target/release/hlctl is built first, niced). Prints per AEAD the median
# Gbit/s of both and the median of the per-round ratios hlctl/openssl.
# A figure that cannot be read stops the run with an error naming it.
set -euo pipefail
cd "$(dirname "$0")/.."
. benches/lib.sh

ROUNDS=${ROUNDS:-5}
if [ -z "${HLCTL:-}" ]; then
    nice -n 10 cargo build -q --release --bin hlctl
    HLCTL=$PWD/target/release/hlctl
fi
command -v openssl >/dev/null || { echo "openssl is missing (apt-get install -y openssl)" >&2; exit 1; }
AEADS="aes-128-gcm aes-128-ccm aes-256-gcm chacha20-poly1305 aes-128-cmac"

# ours FILE: one hlctl run, "aead gbit" lines appended to FILE.
ours() {
    "$HLCTL" --json bench file --crypto-only | jq -r '.[] | "\(.aead) \(.gbit_per_s)"' >> "$1"
}

# theirs AEAD FILE: openssl speed on 1 MiB for 1 s, its k (1000 bytes)/s as Gbit/s.
theirs() {
    local k how=(-evp "$1")
    [ "$1" = aes-128-cmac ] && how=(-cmac aes-128-cbc)
    k=$(openssl speed -elapsed -seconds 1 -bytes 1048576 "${how[@]}" 2>/dev/null | tail -1 | awk '{print $NF}' | tr -d k)
    figure "openssl $1" "$k"
    echo "$1 $(awk -v k="$k" 'BEGIN { printf "%.4f", k * 1000 * 8 / 1e9 }')" >> "$2"
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for r in $(seq "$ROUNDS"); do
    if (( r % 2 )); then
        ours "$work/us.$r"
        for a in $AEADS; do theirs "$a" "$work/peer.$r"; done
    else
        for a in $AEADS; do theirs "$a" "$work/peer.$r"; done
        ours "$work/us.$r"
    fi
done

median() { sort -g | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
printf '%-20s %12s %12s %8s\n' "AEAD (1 MiB, 1 core)" "hlctl Gbit/s" "openssl" "ratio"
for a in $AEADS; do
    ratios=
    us=
    peer=
    for r in $(seq "$ROUNDS"); do
        u=$(awk -v a="$a" '$1 == a { print $2 }' "$work/us.$r")
        p=$(awk -v a="$a" '$1 == a { print $2 }' "$work/peer.$r")
        figure "hlctl $a round $r" "$u"
        figure "openssl $a round $r" "$p"
        us="$us $u"
        peer="$peer $p"
        ratios="$ratios $(awk -v u="$u" -v p="$p" 'BEGIN { printf "%.4f", u / p }')"
    done
    printf '%-20s %12.2f %12.2f %8.3f\n' "$a" \
        "$(printf '%s\n' $us | median)" "$(printf '%s\n' $peer | median)" "$(printf '%s\n' $ratios | median)"
done
