#!/usr/bin/env bash
# hlctld's memory: resident set size of the release daemon when idle and while
# it serves `hlctl show` to CLIENTS clients at once, with a breakdown of what
# holds it (heap, thread stacks, other anonymous maps, the binary and its
# libraries) from /proc/PID/smaps, and the RSS once idle again.
# Targets (issue 14): idle <= 6 MiB, serving 10 clients at once <= 10 MiB.
#
# Runs as root on a private bus (never the system bus; our bus policy is read
# from this run's temp directory, nothing is installed) with hlctld serving a
# throw-away network namespace of PAIRS veth pairs (2 x PAIRS links, plus lo);
# everything is removed at exit. Uses only ip, dbus-daemon and python3.
# Usage: benches/daemon_memory.sh [PAIRS] [CLIENTS] [BURSTS]   (defaults 4 10 5)
#        PROFILE=debug ... to measure an existing debug build (not what the targets mean)
#        BIN=DIR ... to measure the hlctl and hlctld in DIR as they are (e.g. an older build)
#        HLCTLD_ENV="MALLOC_ARENA_MAX=4" ... to try a glibc tunable
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "run as root (namespaces)" >&2; exit 2; }
. benches/lib.sh
PAIRS=${1:-4}
CLIENTS=${2:-10}
BURSTS=${3:-5}
release_bins
daemon_work mem

# A private system bus (our policy read from $work, nothing installed) and
# the namespace hlctld serves.
private_bus "$work"
veth_namespace "$ns" mv "$PAIRS"

# shellcheck disable=SC2086
env ${HLCTLD_ENV:-} ip netns exec "$ns" "$BIN/hlctld" --bus "$addr" \
    --state-dir "$work/state" --sysctl-dir "$work/sysctl.d" 2>"$work/hlctld.log" &
daemon_pid=$!
for _ in $(seq 500); do
    ip netns exec "$ns" "$BIN/hlctl" --bus "$addr" show --json >/dev/null 2>&1 && break
    sleep 0.02
done

export BIN addr ns CLIENTS BURSTS daemon_pid PAIRS
python3 - <<'PY'
import os, subprocess, threading, time
import os, sys
sys.path.insert(0, os.path.join(os.getcwd(), "benches"))
from figure import figure

BIN, addr, ns = os.environ["BIN"], os.environ["addr"], os.environ["ns"]
clients, bursts = int(os.environ["CLIENTS"]), int(os.environ["BURSTS"])
# `ip netns exec` execs the daemon: the pid we started is hlctld's.
pid = int(os.environ["daemon_pid"])
comm = open(f"/proc/{pid}/comm").read().strip()
assert comm == "hlctld", comm

def status(key):
    for l in open(f"/proc/{pid}/status"):
        if l.startswith(key + ":"):
            return int(l.split()[1])

def breakdown():
    """KiB resident per kind of mapping, from /proc/PID/smaps."""
    kinds, cur = {}, None
    exe = os.readlink(f"/proc/{pid}/exe")
    for l in open(f"/proc/{pid}/smaps"):
        f = l.split()
        if not f[0].endswith(":") or "-" in f[0]:
            path = f[5] if len(f) > 5 else ""
            if path == exe:
                cur = "binary (text, data)"
            elif path.startswith("/"):
                cur = "shared libraries"
            elif path == "[heap]":
                cur = "heap (brk)"
            elif path.startswith("[stack"):
                cur = "main stack"
            elif path.startswith("["):
                cur = "kernel ([vdso] ...)"
            else:
                cur = "anonymous maps (thread stacks, malloc arenas, rings)"
            continue
        if f[0] == "Rss:":
            kinds[cur] = kinds.get(cur, 0) + int(f[1])
    return kinds

def rollup():
    out = {}
    for l in open(f"/proc/{pid}/smaps_rollup"):
        f = l.split()
        if f[0] in ("Rss:", "Pss_Anon:", "Pss_File:", "Anonymous:"):
            out[f[0][:-1]] = int(f[1])
    return out

def show():
    r = subprocess.run(["ip", "netns", "exec", ns, f"{BIN}/hlctl", "--bus", addr, "show", "--json"],
                       capture_output=True)
    assert r.returncode == 0, r.stderr

def threads():
    return len(os.listdir(f"/proc/{pid}/task"))

def report(title):
    r = rollup()
    print(f"{title:<34} VmRSS {status('VmRSS') / 1024:5.1f} MiB  (anon {r['Anonymous'] / 1024:.1f}, "
          f"file {r['Pss_File'] / 1024:.1f} MiB PSS)  threads {threads()}")
    for k, v in sorted(breakdown().items(), key=lambda kv: -kv[1]):
        print(f"    {k:<54} {v / 1024:5.2f} MiB")

time.sleep(2)
idle = figure("idle VmRSS", status("VmRSS"))
report("idle (2 s after the first show)")

peak = [0]
stop = threading.Event()
def sample():
    while not stop.is_set():
        peak[0] = max(peak[0], status("VmRSS"))
        time.sleep(0.002)
t = threading.Thread(target=sample); t.start()
for _ in range(bursts):
    ts = [threading.Thread(target=show) for _ in range(clients)]
    for x in ts: x.start()
    for x in ts: x.join()
stop.set(); t.join()
report(f"just after {bursts} bursts of {clients} clients")
time.sleep(7)                    # the blocking pool's threads end after 5 s idle
after = figure("VmRSS 7 s after the bursts", status("VmRSS"))
figure("peak VmRSS", peak[0])
report("idle again (7 s after the bursts)")
links = int(os.environ["PAIRS"]) * 2 + 1
print()
print(f"links served                      {links} (incl. lo)")
print(f"idle RSS                          {idle / 1024:.1f} MiB   (target <= 6 MiB)   {'met' if idle <= 6 * 1024 else 'MISSED'}")
print(f"peak RSS, {clients} clients at once      {peak[0] / 1024:.1f} MiB   (target <= 10 MiB)  {'met' if peak[0] <= 10 * 1024 else 'MISSED'}")
print(f"idle RSS 7 s after serving        {after / 1024:.1f} MiB")
PY
