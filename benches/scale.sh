#!/usr/bin/env bash
# A hypervisor's worth of links (issue 26, item 8): `hlctl show --json` as an
# unprivileged user (nobody) through the release hlctld while its namespace
# holds PAIRS veth pairs (2 x PAIRS links and lo), ROUNDS times, against
# `ip -j link show` of the same namespace (the peer figure: the kernel's own
# dump, no daemon) and `hlctl --local show --json` (the same model built in
# the client); and hlctld's RSS idle (lo only), with the links, and after
# they went.
# Target: show through hlctld with 600 links under 1 s.
#
# Runs as root on a private bus (never the system bus; our bus policy is read
# from this run's temp directory, nothing is installed) with hlctld serving a
# throw-away network namespace; everything is removed at exit.
# Usage: benches/scale.sh [PAIRS] [ROUNDS]     (defaults 300 7)
#        PROFILE=debug ... to measure an existing debug build
#        BIN=DIR ... to measure the hlctl and hlctld in DIR as they are
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "run as root (namespaces)" >&2; exit 2; }
. benches/lib.sh
PAIRS=${1:-300}
ROUNDS=${2:-7}
release_bins
daemon_work scale

# A private system bus and a namespace with lo only; the pairs come later.
private_bus "$work"
veth_namespace "$ns" sv 0

ip netns exec "$ns" "$BIN/hlctld" --bus "$addr" \
    --state-dir "$work/state" --sysctl-dir "$work/sysctl.d" 2>"$work/hlctld.log" &
daemon_pid=$!
for _ in $(seq 500); do
    "$BIN/hlctl" --bus "$addr" show --json >/dev/null 2>&1 && break
    sleep 0.02
done

export BIN addr ns PAIRS ROUNDS daemon_pid
# Debian's python3, with python3-dbus (a pyenv python3 on PATH lacks it).
/usr/bin/python3 - <<'PY'
import json, os, statistics, subprocess, time
import os, sys
sys.path.insert(0, os.path.join(os.getcwd(), "benches"))
from figure import figure

BIN, addr, ns = os.environ["BIN"], os.environ["addr"], os.environ["ns"]
pairs, rounds = int(os.environ["PAIRS"]), int(os.environ["ROUNDS"])
# `ip netns exec` execs the daemon: the pid we started is hlctld's.
pid = int(os.environ["daemon_pid"])
assert open(f"/proc/{pid}/comm").read().strip() == "hlctld"
NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]

def rss_mib():
    for l in open(f"/proc/{pid}/status"):
        if l.startswith("VmRSS:"):
            return int(l.split()[1]) / 1024

def cpu_s():
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")

def timed(cmd):
    t = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, env=dict(os.environ, HOME="/"))
    dt = time.perf_counter() - t
    assert out.returncode == 0, (cmd, out.stderr)
    return dt, out.stdout

def show():
    return timed(NOBODY + [f"{BIN}/hlctl", "--bus", addr, "show", "--json"])

def batch(lines):
    subprocess.run(["ip", "-n", ns, "-batch", "-"], input="".join(lines).encode(), check=True)

def listed():
    return len(json.loads(show()[1])["interfaces"])

def wait_listed(want):
    t = time.perf_counter()
    while (n := listed()) != want:
        assert time.perf_counter() - t < 120, f"hlctld lists {n}, not {want}"
        time.sleep(0.2)
    return time.perf_counter() - t

time.sleep(2)
idle = rss_mib()
cpu0 = cpu_s()
t = time.perf_counter()
batch(f"link add sva{i} type veth peer name svb{i}\n" for i in range(pairs))
created = time.perf_counter() - t
wait_listed(2 * pairs)             # every link but lo
listed_after = time.perf_counter() - t
cpu_burst = cpu_s() - cpu0

import sys
sys.path = [p for p in sys.path if p not in ("", ".")]  # not ./dbus/, python3-dbus
import dbus
manager = dbus.Interface(dbus.bus.BusConnection(addr).get_object(
    "org.hlctl.Daemon1", "/org/hlctl/Daemon1"), "org.hlctl.Daemon1.Manager")

def describe():
    # hlctld's side alone: one DescribeLinks call from this process (a
    # read: no polkit, the same path as nobody's).
    t = time.perf_counter()
    n = len(json.loads(str(manager.DescribeLinks(dbus.Array([], signature="s")))))
    assert n == 2 * pairs + 1, n      # lo too: hlctl show leaves it out
    return time.perf_counter() - t

bus, peer, local, daemon = [], [], [], []
for r in range(rounds):           # alternating rounds
    # Each call finds every link's counters older than hlctld's 0.5 s (it
    # reads each link again then): the figure of a client that asks now
    # and then, not of one that keeps the model fresh for the next.
    time.sleep(0.6)
    dt, out = show()
    assert len(json.loads(out)["interfaces"]) == 2 * pairs
    bus.append(dt)
    time.sleep(0.6)
    daemon.append(describe())
    peer.append(timed(["ip", "-n", ns, "-j", "link", "show"])[0])
    local.append(timed(["ip", "netns", "exec", ns] + NOBODY + [f"{BIN}/hlctl", "--local", "show", "--json"])[0])
busy = rss_mib()

batch(f"link del sva{i}\n" for i in range(pairs))
wait_listed(0)
time.sleep(2)
after2 = rss_mib()
time.sleep(8)
after10 = rss_mib()

for n, xs in (("hlctl show --json", bus), ("DescribeLinks", daemon), ("ip -j link show", peer), ("hlctl --local show", local)):
    figure(f"{n} median", statistics.median(xs) if xs else None)
for n, v in (("RSS idle", idle), ("RSS with the links", busy), ("RSS 10 s after", after10)):
    figure(n, v)
ms = lambda xs: f"median {statistics.median(xs) * 1000:7.1f} ms  min {min(xs) * 1000:7.1f}  max {max(xs) * 1000:7.1f}"
print(f"links                       {2 * pairs + 1} (lo and {pairs} veth pairs)")
print(f"listed after the burst      {listed_after:.2f} s (ip -batch took {created:.2f} s), hlctld CPU {cpu_burst:.2f} s")
print(f"hlctl show --json, nobody   {ms(bus)}   (target < 1000 ms), {rounds} rounds")
print(f"  of it DescribeLinks alone {ms(daemon)}   (python3-dbus: hlctld's side)")
print(f"ip -j link show (peer)      {ms(peer)}")
print(f"hlctl --local show, nobody  {ms(local)}")
print(f"hlctld RSS idle (lo only)   {idle:.1f} MiB")
print(f"  with {2 * pairs + 1} links          {busy:.1f} MiB")
print(f"  2 s / 10 s after they went {after2:.1f} / {after10:.1f} MiB")
PY
