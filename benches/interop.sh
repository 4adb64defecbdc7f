#!/usr/bin/env bash
# Interoperability with a given iperf3 build, both ways, on 127.0.0.1:
#   iperf3 -c … → hlctl serve --one-off      (its client, our server)
#   hlctl bench net --local -c … → iperf3 -s -1   (our client, its server)
# for every flag case: -P 1, -P 4, -R, --bidir -P 4, -u -b 1G, -u --gsro (when
# the build has GSO/GRO), --skip-rx-copy (both directions), --cntl-ka,
# --fq-rate 2G, -Z, --json-stream, -t/-O, -u -O, and authentication (when the build
# has it; OAEP and --use-pkcs1-padding, as the build's version allows). Each
# case prints PASS or FAIL with the error (SKIP where the build cannot do it). A case passes when the client exits 0 without an error, the
# server served it, and the figures the two ends report agree within 10 %:
# the sender's own count of bytes (.end.sum_sent) against the receiver's own
# count (.end.sum_received, sent over by the other end; for UDP plus the
# datagrams it declared lost; and its datagrams after the omit period make
# its bytes), both directions for --bidir. A case that ran but lacks a figure stops the script with an error
# naming it (benches/lib.sh's `figure`).
# Needs: root (bench net --local), iperf3 (or IPERF3=PATH), jq, ss, openssl and
# sha256sum for the authentication cases; cargo unless HLCTL=PATH is given.
# Usage: IPERF3=/path/to/iperf3 HLCTL=target/release/hlctl benches/interop.sh
# (T=SECS per test, 3 by default). Exit 1 if any case failed.
set -euo pipefail

T=${T:-3}
cd "$(dirname "$0")/.."
. benches/lib.sh
IPERF3=${IPERF3:-iperf3}
[ "$(id -u)" = 0 ] || { echo "interop.sh: run as root: hlctl's client runs in-process (--local)" >&2; exit 2; }
for tool in "$IPERF3" jq ss awk; do
    command -v "$tool" >/dev/null || { echo "interop.sh: needs $tool" >&2; exit 2; }
done
# A build installed under a prefix finds its libiperf beside it.
IPERF3_LIB=$(dirname "$(dirname "$(command -v "$IPERF3")")")/lib
export LD_LIBRARY_PATH=$IPERF3_LIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
if [ -n "${HLCTL:-}" ]; then
    HL=$HLCTL
else
    nice -n 10 cargo build --release --quiet --bin hlctl
    HL=$PWD/target/release/hlctl
fi
TMP=$(mktemp -d)
SERVER_PID=
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
    if [ -n "$SERVER_PID" ]; then
        kill "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
    fi
    rm -rf "$TMP"
}
trap cleanup EXIT

VERSION=$("$IPERF3" --version 2>&1)
has() { grep -q "$1" <<<"$VERSION"; }
# 3.17 changed authentication's padding to OAEP: its clients always use it,
# and only its servers take --use-pkcs1-padding (for older clients); before
# 3.17 both ends use PKCS#1 v1.5 and have no such flag.
MINOR=$(sed -n 's/^iperf 3\.\([0-9]*\).*/\1/p' <<<"$VERSION" | head -1)
OAEP=no
[ "${MINOR:-0}" -ge 17 ] && OAEP=yes
echo "iperf3: $(head -1 <<<"$VERSION") ($IPERF3)"
echo "hlctl:  $("$HL" --version 2>&1 | head -1) ($HL)"

free_port() {
    local p
    while :; do
        p=$((20000 + RANDOM % 40000))
        if [ -z "$(ss -Htanu "( sport = :$p )")" ]; then echo "$p"; return; fi
    done
}
wait_listen() {
    for _ in $(seq 100); do
        [ -n "$(ss -Htln "( sport = :$1 )")" ] && return 0
        sleep 0.05
    done
    return 1
}

# Authentication material, made the way iperf3's docs make it.
AUTH_SERVER=()
AUTH_CLIENT=()
if has authentication && command -v openssl >/dev/null; then
    openssl genrsa -out "$TMP/private.pem" 2048 2>/dev/null
    openssl rsa -in "$TMP/private.pem" -pubout -out "$TMP/public.pem" 2>/dev/null
    echo "mario,$(printf '%s' '{mario}rossi' | sha256sum | cut -d' ' -f1)" > "$TMP/users.csv"
    AUTH_SERVER=(--rsa-private-key-path "$TMP/private.pem" --authorized-users-path "$TMP/users.csv")
    AUTH_CLIENT=(--username mario --rsa-public-key-path "$TMP/public.pem")
fi
export IPERF3_PASSWORD=rossi

# The client's -J (or --json-stream's end event) as one -J document.
as_document() {
    jq -s 'if length == 1 then .[0]
           else { end: (map(select(.event == "end"))[0].data // null),
                  error: (map(select(.event == "error"))[0].data // null) } end' "$1"
}

# agree CASE DOC SENT RECEIVED: the two ends' counts of bytes within 10 %
# (bytes, not bit/s: each end divides by its own duration, and a server
# starved on a busy machine ends its clock late). UDP: the receiver's bytes
# plus the datagrams it declared lost (× the block) against the sender's, so
# that a lossy receiver still agrees when it counted what it lost.
agree() {
    local name=$1 doc=$2 s r sb rb lost
    s=$(jq ".end.$3.bits_per_second" "$doc")
    r=$(jq ".end.$4.bits_per_second" "$doc")
    sb=$(jq ".end.$3.bytes" "$doc")
    rb=$(jq ".end.$4.bytes" "$doc")
    figure "$name: .end.$3.bits_per_second" "$s"
    figure "$name: .end.$4.bits_per_second" "$r"
    figure "$name: .end.$3.bytes" "$sb"
    figure "$name: .end.$4.bytes" "$rb"
    lost=$(jq 'if .end.sum.lost_packets != null and ("'"$3"'" == "sum_sent") then .end.sum.lost_packets * .start.test_start.blksize else 0 end' "$doc")
    figure "$name: lost bytes" "$lost" zero
    awk -v s="$sb" -v r="$rb" -v l="$lost" 'BEGIN { r += l; d = (s > r ? s - r : r - s) / (s > r ? s : r); exit !(d <= 0.10) }' ||
        { echo "the ends disagree: $3 $sb bytes, $4 $rb bytes (+ $lost declared lost)"; return 1; }
    # UDP: the datagrams the receiver counted after the omit period, less
    # those it declared lost, make its bytes (counts exchanged from the
    # wrong origin are off by the omit period's datagrams).
    if [ "$(jq -r '.start.test_start.protocol' "$doc")" = UDP ]; then
        local pk gone blk
        pk=$(jq ".end.$4.packets" "$doc")
        gone=$(jq ".end.$4.lost_packets" "$doc")
        blk=$(jq '.start.test_start.blksize' "$doc")
        figure "$name: .end.$4.packets" "$pk"
        figure "$name: .end.$4.lost_packets" "$gone" zero
        figure "$name: .start.test_start.blksize" "$blk"
        awk -v p="$pk" -v g="$gone" -v b="$blk" -v r="$rb" 'BEGIN { if (g < 0) g = 0; d = (p - g) * b - r; if (d < 0) d = -d; exit !(d <= 0.02 * r) }' ||
            { echo "the receiver's datagrams do not make its bytes: ($pk - $gone lost) × $blk against $rb bytes"; return 1; }
    fi
    printf '%s %.3f/%.3f Gbit/s' "$3/$4" "$(awk -v v="$s" 'BEGIN{print v/1e9}')" "$(awk -v v="$r" 'BEGIN{print v/1e9}')"
    [ "$lost" = 0 ] || printf ' (%s bytes declared lost)' "$lost"
}

# check CASE OUT STATUS SERVER_STATUS BIDIR: PASS or FAIL on one line.
FAILED=0
check() {
    local name=$1 out=$2 status=$3 sstatus=$4 bidir=$5 doc err figs
    doc=$TMP/doc.json
    if ! as_document "$out" > "$doc" 2>/dev/null; then
        echo "FAIL $name: the client printed no JSON: $(head -c 300 "$TMP/client.err" "$out" | tr '\n' ' ')"
        FAILED=1; return
    fi
    err=$(jq -r '.error // empty' "$doc")
    if [ "$status" != 0 ] || [ -n "$err" ]; then
        echo "FAIL $name: client exit $status: ${err:-$(head -c 300 "$TMP/client.err" | tr '\n' ' ')}"
        FAILED=1; return
    fi
    if [ "$sstatus" != 0 ]; then
        echo "FAIL $name: the server failed (exit $sstatus): $(tail -c 300 "$TMP/server.out" | tr '\n' ' ')"
        FAILED=1; return
    fi
    if ! figs=$(agree "$name" "$doc" sum_sent sum_received); then
        echo "FAIL $name: $figs"; FAILED=1; return
    fi
    if [ "$bidir" = bidir ]; then
        local back
        if ! back=$(agree "$name" "$doc" sum_sent_bidir_reverse sum_received_bidir_reverse); then
            echo "FAIL $name: $back"; FAILED=1; return
        fi
        figs="$figs; $back"
    fi
    echo "PASS $name: $figs"
}

# run_case WAY NAME ARGS…: one test, WAY = to-hlctl (iperf3 -c → hlctl serve)
# or to-iperf3 (hlctl bench net → iperf3 -s).
run_case() {
    local way=$1 name=$2 port status sstatus bidir=no auth=no
    shift 2
    local args=()
    for a in "$@"; do
        case $a in
            AUTH | AUTH_PKCS1) auth=$a ;;
            *) args+=("$a") ;;
        esac
    done
    [[ " ${args[*]} " == *" --bidir "* ]] && bidir=bidir
    port=$(free_port)
    local sauth=() cauth=()
    if [ "$auth" != no ]; then sauth=("${AUTH_SERVER[@]}"); cauth=("${AUTH_CLIENT[@]}"); fi
    if [ "$auth" = AUTH_PKCS1 ]; then
        # hlctl's end says --use-pkcs1-padding; iperf3's end only when it
        # has the flag, which a 3.17+ client has not (it always uses OAEP).
        if [ "$way" = to-hlctl ]; then
            sauth+=(--use-pkcs1-padding)
            if [ "$OAEP" = yes ]; then
                echo "SKIP $way $name: iperf3 3.17+'s client always pads with OAEP (--use-pkcs1-padding is server-only there)"
                return
            fi
        else
            cauth+=(--use-pkcs1-padding)
            [ "$OAEP" = yes ] && sauth+=(--use-pkcs1-padding)
        fi
    fi
    if [ "$way" = to-hlctl ]; then
        "$HL" serve --bind 127.0.0.1 --port "$port" --one-off "${sauth[@]}" > "$TMP/server.out" 2>&1 &
    else
        "$IPERF3" -s -1 -B 127.0.0.1 -p "$port" "${sauth[@]}" > "$TMP/server.out" 2>&1 &
    fi
    SERVER_PID=$!
    if ! wait_listen "$port"; then
        echo "FAIL $way $name: the server did not listen: $(head -c 300 "$TMP/server.out" | tr '\n' ' ')"
        kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true
        SERVER_PID=; FAILED=1; return
    fi
    status=0
    if [ "$way" = to-hlctl ]; then
        timeout $((T + 30)) "$IPERF3" -c 127.0.0.1 -p "$port" -J "${cauth[@]}" "${args[@]}" \
            > "$TMP/client.out" 2> "$TMP/client.err" || status=$?
    else
        timeout $((T + 30)) "$HL" bench net --local -c 127.0.0.1 -p "$port" -J "${cauth[@]}" "${args[@]}" \
            > "$TMP/client.out" 2> "$TMP/client.err" || status=$?
    fi
    # A one-off server returns by itself after its test.
    sstatus=0
    for _ in $(seq 50); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$SERVER_PID" 2>/dev/null; then
        kill "$SERVER_PID" 2>/dev/null || true
        sstatus="(still running 5 s after the test)"
    fi
    wait "$SERVER_PID" 2>/dev/null || { [ "$sstatus" = 0 ] && sstatus=$?; }
    SERVER_PID=
    check "$way $name" "$TMP/client.out" "$status" "$sstatus" "$bidir"
}

# NAME|the iperf3 3.x whose client has the flags|ARGS
CASES=(
    "-P 1|12|-t $T"
    "-P 4|12|-t $T -P 4"
    "-R|12|-t $T -R"
    "--bidir -P 4|12|-t $T --bidir -P 4"
    "-u -b 1G|12|-t $T -u -b 1G"
    "--skip-rx-copy|19|-t $T --skip-rx-copy"
    "--skip-rx-copy -R|19|-t $T --skip-rx-copy -R"
    "--cntl-ka|19|-t $T --cntl-ka"
    "--fq-rate 2G|12|-t $T --fq-rate 2G"
    "-Z|12|-t $T -Z"
    "--json-stream|17|-t $T --json-stream"
    "-t/-O|12|-t $T -O 1"
    "-u -O|12|-t $T -u -b 100M -O 1"
)
has "GSO/GRO" && CASES+=("-u --gsro -b 1G|21|-t $T -u --gsro -b 1G")
if [ ${#AUTH_SERVER[@]} -gt 0 ]; then
    # Before 3.17 iperf3 pads with PKCS#1 v1.5 only: no OAEP case.
    [ "$OAEP" = yes ] && CASES+=("auth (OAEP)|17|-t $T AUTH")
    CASES+=("auth --use-pkcs1-padding|12|-t $T AUTH_PKCS1")
else
    echo "(no authentication cases: $IPERF3 has no authentication or openssl is missing)"
fi

for way in to-hlctl to-iperf3; do
    for c in "${CASES[@]}"; do
        IFS='|' read -r name since flags <<<"$c"
        if [ "$way" = to-hlctl ] && [ "${MINOR:-0}" -lt "$since" ]; then
            # Its server takes the parameters; its client has no such flag.
            echo "SKIP $way $name: iperf3 3.$MINOR's client has no such flag (3.$since+)"
            continue
        fi
        # shellcheck disable=SC2206 # the flags split on spaces
        args=($flags)
        run_case "$way" "$name" "${args[@]}"
    done
done
[ "$FAILED" = 0 ] || { echo "interop.sh: some cases failed" >&2; exit 1; }
echo "interop.sh: every case passed"
