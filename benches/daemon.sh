#!/usr/bin/env bash
# hlctld figures: idle RSS, time from start to the bus name, and `hlctl show`
# (all links) through the daemon versus in-process (--local), median and p99.
# Targets: idle RSS <= 15 MiB, start <= 100 ms, show through the daemon <= 30 ms median.
#
# Runs as root on a private bus (never the system bus) with hlctld serving a
# throw-away network namespace of veth pairs; everything is removed at exit.
# Usage: benches/daemon.sh [ROUNDS] [PAIRS]     (PROFILE=release for a release build)
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "run as root (namespaces)" >&2; exit 2; }
. benches/lib.sh
ROUNDS=${1:-40}
PAIRS=${2:-4}
PROFILE=${PROFILE:-debug}
if [ "$PROFILE" = release ]; then
    cargo build -q --release --bin hlctl --bin hlctld
else
    cargo build -q --bin hlctl --bin hlctld
fi
BIN=$PWD/target/$PROFILE

work=$(mktemp -d /tmp/hlctl-bench.XXXXXX)
chmod 755 "$work"
ns=hlbench$$
dbus_pid=
cleanup() {
    [ -n "${daemon_pid:-}" ] && kill "$daemon_pid" 2>/dev/null || true
    [ -n "$dbus_pid" ] && kill "$dbus_pid" 2>/dev/null || true
    ip netns del "$ns" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

# A private system bus (our policy read from $work, nothing installed) and
# the namespace hlctld serves.
private_bus "$work"
veth_namespace "$ns" bv "$PAIRS"

export BIN addr ns ROUNDS work
python3 - <<'PY'
import os, socket, statistics, subprocess, time
import os, sys
sys.path.insert(0, os.path.join(os.getcwd(), "benches"))
from figure import figure

BIN, addr, ns, rounds, work = (os.environ[k] for k in ("BIN", "addr", "ns", "ROUNDS", "work"))
rounds = int(rounds)

# Start time: spawn → READY=1, which hlctld sends right after owning its name.
notify = os.path.join(work, "notify")
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(notify)
s.settimeout(10)
env = dict(os.environ, NOTIFY_SOCKET=notify)
t0 = time.perf_counter()
d = subprocess.Popen(["ip", "netns", "exec", ns, f"{BIN}/hlctld", "--bus", addr,
                      "--state-dir", f"{work}/state", "--sysctl-dir", f"{work}/sysctl.d"],
                     env=env, stderr=open(f"{work}/hlctld.log", "w"))
msg = s.recv(64)
start_ms = (time.perf_counter() - t0) * 1000
assert msg == b"READY=1", msg
open(f"{work}/daemon.pid", "w").write(str(d.pid))

def show(local):
    cmd = ["ip", "netns", "exec", ns, f"{BIN}/hlctl"]
    cmd += ["--local"] if local else ["--bus", addr]
    cmd += ["show", "--json"]
    t = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True)
    dt = (time.perf_counter() - t) * 1000
    assert out.returncode == 0, out.stderr
    return dt, out.stdout

# Both paths must show the same links.
import json
names = lambda b: [i["name"] for i in json.loads(b)["interfaces"]]
_, a = show(False); _, b = show(True)
assert names(a) == names(b), (names(a), names(b))
links = len(names(a))

bus, local = [], []
for _ in range(rounds):          # alternating rounds: A B A B
    bus.append(show(False)[0])
    local.append(show(True)[0])

time.sleep(2)                    # idle
rss_kib = next(int(l.split()[1]) for l in open(f"/proc/{d.pid}/status") if l.startswith("VmRSS:"))

def p(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]

for n, v in (("links shown", links), ("idle RSS", rss_kib), ("start to bus name", start_ms),
             ("show via daemon median", statistics.median(bus)), ("show --local median", statistics.median(local))):
    figure(n, v)
print(f"links shown             {links}")
print(f"idle RSS                {rss_kib / 1024:.1f} MiB   (target <= 15 MiB)")
print(f"start to bus name       {start_ms:.1f} ms    (target <= 100 ms)")
print(f"show via daemon         median {statistics.median(bus):.1f} ms  p99 {p(bus, .99):.1f} ms   (target median <= 30 ms)")
print(f"show --local            median {statistics.median(local):.1f} ms  p99 {p(local, .99):.1f} ms")
print(f"daemon / local          {statistics.median(bus) / statistics.median(local):.2f}x (median), {rounds} alternating rounds")
d.terminate()
d.wait(timeout=10)
print(f"SIGTERM exit status     {d.returncode}")
PY
