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
