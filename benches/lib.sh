# Shared by the benches/ scripts (sourced, not run): a private D-Bus system bus
# and a throw-away namespace of veth pairs. The caller owns the cleanup: it
# kills $dbus_pid and deletes the namespace in its EXIT trap.

# private_bus WORK: start a dbus-daemon with the system configuration on
# WORK/bus, reading our bus policy from WORK/policy (nothing is installed under
# /usr/share or /etc). Sets dbus_pid and addr.
private_bus() {
    local work=$1
    mkdir -p "$work/policy"
    cp dbus/org.hlctl.Daemon1.conf "$work/policy/"
    sed -e "s|<listen>.*</listen>|<listen>unix:path=$work/bus</listen>|" \
        -e '/<user>/d' -e '/<pidfile>/d' -e '/<fork\/>/d' -e '/<standard_system_servicedirs\/>/d' \
        -e "s|<includedir>system.d</includedir>|<includedir>/usr/share/dbus-1/system.d</includedir><includedir>$work/policy</includedir>|" \
        /usr/share/dbus-1/system.conf > "$work/bus.conf"
    dbus-daemon --config-file="$work/bus.conf" --nofork --nosyslog & dbus_pid=$!
    for _ in $(seq 200); do [ -S "$work/bus" ] && break; sleep 0.01; done
    [ -S "$work/bus" ] || { echo "dbus-daemon did not start on $work/bus" >&2; return 1; }
    addr="unix:path=$work/bus"
}

# veth_namespace NS PREFIX PAIRS: namespace NS with lo and PAIRS veth pairs
# PREFIXa1/PREFIXb1 ... up.
veth_namespace() {
    local ns=$1 prefix=$2 pairs=$3 i
    ip netns add "$ns"
    ip -n "$ns" link set lo up
    for i in $(seq "$pairs"); do
        ip -n "$ns" link add "${prefix}a$i" type veth peer name "${prefix}b$i"
        ip -n "$ns" link set "${prefix}a$i" up
        ip -n "$ns" link set "${prefix}b$i" up
    done
}

# release_bins: BIN, the directory of the hlctl and hlctld to measure: as
# given, else target/$PROFILE (PROFILE=release, the default, is built first,
# niced; a debug build is taken as it is).
release_bins() {
    PROFILE=${PROFILE:-release}
    if [ -z "${BIN:-}" ]; then
        if [ "$PROFILE" = release ]; then
            nice -n 10 cargo build -q --release --bin hlctl --bin hlctld
        fi
        BIN=$PWD/target/$PROFILE
    fi
}

# daemon_work NAME: a temp directory $work (mode 755: nobody and polkitd
# reach the bus socket in it) and the namespace name $ns for this run, and
# the EXIT trap that stops hlctld ($daemon_pid) and the bus ($dbus_pid),
# deletes the namespace and the directory.
daemon_work() {
    work=$(mktemp -d "/tmp/hlctl-$1.XXXXXX")
    chmod 755 "$work"
    ns=hl$1$$
    dbus_pid=
    daemon_pid=
    trap daemon_cleanup EXIT
}

daemon_cleanup() {
    [ -n "$daemon_pid" ] && kill "$daemon_pid" 2>/dev/null || true
    [ -n "$dbus_pid" ] && kill "$dbus_pid" 2>/dev/null || true
    ip netns del "$ns" 2>/dev/null || true
    rm -rf "$work"
}

# figure NAME VALUE [zero]: the self-check every bench script makes of what it
# read: stop the whole run (exit 1, even from inside a function's `|| true`)
# with an error naming NAME when VALUE is missing, `null`, not a number, or 0
# (0 is let through only with a third argument `zero`: a loss, a crash count).
# A bench that cannot read a figure fails rather than print 0.0000.
figure() {
    local name=$1 value=${2-} zero=${3-}
    if [[ ! $value =~ ^[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?$ ]]; then
        echo "$(basename "$0"): figure '$name' is missing or not a number (read '${value}')" >&2
        exit 1
    fi
    if [[ $zero != zero ]] && awk -v v="$value" 'BEGIN { exit !(v + 0 == 0) }'; then
        echo "$(basename "$0"): figure '$name' is 0: the run measured nothing or the figure was misread" >&2
        exit 1
    fi
}
