#!/usr/bin/python3
"""A small hlctld client in Python with python3-dbus (Debian's package).

Reads a link's typed settings groups, applies one change (an offload off)
and reads the group again, then writes it back on under the key the reply's
row named; prints what it saw, with the D-Bus types, as JSON.

    typed_client.py BUS_ADDRESS IFACE FEATURE
"""
import json
import sys

import dbus

BUS_NAME = "org.hlctl.Daemon1"
LINK = "org.hlctl.Daemon1.Link"


def main():
    address, iface, feature = sys.argv[1:4]
    bus = dbus.bus.BusConnection(address)
    manager = bus.get_object(BUS_NAME, "/org/hlctl/Daemon1")
    path = manager.GetLink(iface, dbus_interface="org.hlctl.Daemon1.Manager")
    link = bus.get_object(BUS_NAME, path)
    props = dbus.Interface(link, "org.freedesktop.DBus.Properties")

    rings = props.Get(LINK, "Rings")
    channels = props.Get(LINK, "Channels")
    features = props.Get(LINK, "Features")
    pause = props.Get(LINK, "Pause")
    modes = props.Get(LINK, "LinkModes")
    out = {
        "rings_signature": str(rings.signature),
        "rings": {str(k): int(v) for k, v in rings.items()},
        "channels_signature": str(channels.signature),
        "channels": {str(k): int(v) for k, v in channels.items()},
        "channel_value_types": sorted({type(v).__name__ for v in channels.values()}),
        "features_signature": str(features.signature),
        "features": {str(k): [bool(x) for x in v] for k, v in features.items()},
        "feature_value_types": sorted(
            {type(x).__name__ for v in features.values() for x in v}
        ),
        "pause": [bool(x) for x in pause],
        "pause_type": type(pause).__name__,
        "speed": int(modes["speed"]),
        "speed_type": type(modes["speed"]).__name__,
        "duplex": str(modes["duplex"]),
    }

    rows, summary = link.ApplyChanges(
        {"feature." + feature: dbus.Boolean(False)},
        dbus.Dictionary({}, signature="sv"),
        dbus_interface=LINK,
    )
    out["rows"] = [[str(x) for x in row] for row in rows]
    out["changed"] = int(summary["changed"])
    out["changed_type"] = type(summary["changed"]).__name__
    out["statuses"] = {str(k): int(v) for k, v in summary["statuses"].items()}
    out["after"] = [bool(x) for x in props.Get(LINK, "Features")[feature]]
    # Write it back on under the key the reply's row named: a key read is
    # the key written.
    key = str(rows[0][0])
    back, _ = link.ApplyChanges(
        {key: dbus.Boolean(True)},
        dbus.Dictionary({}, signature="sv"),
        dbus_interface=LINK,
    )
    out["back_key"] = key
    out["back_rows"] = [[str(x) for x in row] for row in back]
    out["back"] = [bool(x) for x in props.Get(LINK, "Features")[feature]]
    print(json.dumps(out))


if __name__ == "__main__":
    main()
