#!/usr/bin/python3
"""An hlctld client written against the published XML only, with GLib's
Gio.DBusObjectManagerClient (Debian's python3-gi), as a web console's bridge
would watch the service.

    objects_client.py BUS_ADDRESS NETNS NEW_A NEW_B BENCH_LINK

It lists every Link object with its typed properties, creates a veth pair
NEW_A/NEW_B in NETNS and deletes it again while it watches, then starts a
CPU benchmark on BENCH_LINK and follows the job object from
InterfacesAdded to InterfacesRemoved. It prints what it saw as JSON; the
Rust test compares it with `ip` and the kernel.
"""
import json
import subprocess
import sys
import time

from gi.repository import Gio, GLib

BUS_NAME = "org.hlctl.Daemon1"
ROOT = "/org/hlctl/Daemon1"
LINK = "org.hlctl.Daemon1.Link"
JOB = "org.hlctl.Daemon1.Job"
MANAGER = "org.hlctl.Daemon1.Manager"


def prop(obj, iface, name):
    p = obj.get_interface(iface)
    v = p.get_cached_property(name) if p else None
    return None if v is None else (v.get_type_string(), v.unpack())


def run_until(cond, seconds):
    """Dispatch bus messages until cond() holds or `seconds` pass."""
    ctx = GLib.MainContext.default()
    end = time.monotonic() + seconds
    while not cond() and time.monotonic() < end:
        if not ctx.iteration(False):
            time.sleep(0.01)
    return cond()


def main():
    address, netns, new_a, new_b, bench_link = sys.argv[1:6]
    conn = Gio.DBusConnection.new_for_address_sync(
        address,
        Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT
        | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION,
        None,
        None,
    )
    om = Gio.DBusObjectManagerClient.new_sync(
        conn, Gio.DBusObjectManagerClientFlags.NONE, BUS_NAME, ROOT, None, None, None
    )
    events = []
    job_progress = []

    def added(_om, obj):
        path = obj.get_object_path()
        kinds = [i.get_interface_name() for i in obj.get_interfaces()]
        name = prop(obj, LINK, "Name")
        events.append(["added", path, kinds, name[1] if name else None])
        job = obj.get_interface(JOB)
        if job is not None:
            job.connect(
                "g-properties-changed",
                lambda p, changed, _inv: job_progress.append(
                    changed.unpack().get("Progress")
                ),
            )

    def removed(_om, obj):
        events.append(["removed", obj.get_object_path()])

    om.connect("object-added", added)
    om.connect("object-removed", removed)

    out = {"links": {}}
    for obj in om.get_objects():
        if obj.get_interface(LINK) is None:
            continue
        out["links"][prop(obj, LINK, "Name")[1]] = {
            "path": obj.get_object_path(),
            "Mtu": prop(obj, LINK, "Mtu"),
            "Mac": prop(obj, LINK, "Mac"),
            "Ifindex": prop(obj, LINK, "Ifindex"),
            "Features": prop(obj, LINK, "Features")[0],
        }

    ip = ["ip", "-n", netns, "link"]
    subprocess.run(ip + ["add", new_a, "type", "veth", "peer", "name", new_b], check=True)
    seen = lambda kind, name: any(e[0] == kind and name in (e[3:4] or [None]) for e in events)
    out["saw_added"] = run_until(lambda: seen("added", new_a) and seen("added", new_b), 10)
    paths = {e[3]: e[1] for e in events if e[0] == "added"}
    subprocess.run(ip + ["del", new_a], check=True)
    gone = lambda: all(any(e[0] == "removed" and e[1] == paths.get(n) for e in events) for n in (new_a, new_b))
    out["saw_removed"] = run_until(gone, 10)

    manager = Gio.DBusProxy.new_sync(
        conn, Gio.DBusProxyFlags.NONE, None, BUS_NAME, ROOT, MANAGER, None
    )
    params = {
        "time_s": GLib.Variant("d", 2.0),
        "threads": GLib.Variant("u", 1),
        "no_single": GLib.Variant("b", True),
    }
    options = {"link": GLib.Variant("s", bench_link)}
    job_path = manager.call_sync(
        "StartBenchmark",
        GLib.Variant("(sa{sv}a{sv})", ("cpu", params, options)),
        Gio.DBusCallFlags.NONE,
        -1,
        None,
    ).unpack()[0]
    out["job"] = job_path
    run_until(lambda: any(e[0] == "added" and e[1] == job_path for e in events), 10)
    job = om.get_object(job_path)
    out["job_interfaces"] = [e[2] for e in events if e[0] == "added" and e[1] == job_path]
    if job is not None:
        for name in ("StartedByUID", "Objects", "StartTime", "Cancelable", "ProgressValid", "Kind"):
            out[name] = prop(job, JOB, name)
    out["job_removed"] = run_until(
        lambda: any(e[0] == "removed" and e[1] == job_path for e in events), 30
    )
    out["progress"] = [p for p in job_progress if p is not None]
    out["events"] = events
    print(json.dumps(out))


if __name__ == "__main__":
    main()
