#!/usr/bin/python3
"""A polkit authentication agent that opens a prompt and never answers it.

Registers with polkitd (org.freedesktop.PolicyKit1.Authority.
RegisterAuthenticationAgent) for one process, the way pkttyagent --process
does; BeginAuthentication never returns (as when a user leaves a password
dialog open). Prints one line per event, flushed:

    registered PID
    begin COOKIE ACTION_ID
    cancel COOKIE

    stuck_agent.py BUS_ADDRESS PID
"""
import sys

import dbus
import dbus.service
from dbus.mainloop.glib import DBusGMainLoop
from gi.repository import GLib

AGENT = "org.freedesktop.PolicyKit1.AuthenticationAgent"
PATH = "/org/hlctl/test/StuckAgent"


class Agent(dbus.service.Object):
    def __init__(self, bus):
        super().__init__(bus, PATH)
        self.open = {}

    @dbus.service.method(
        AGENT,
        in_signature="sssa{ss}sa(sa{sv})",
        out_signature="",
        async_callbacks=("ok", "err"),
    )
    def BeginAuthentication(self, action_id, message, icon, details, cookie, identities, ok, err):
        # The prompt stays open: no reply until polkitd cancels it.
        self.open[str(cookie)] = err
        print("begin", cookie, action_id, flush=True)

    @dbus.service.method(AGENT, in_signature="s", out_signature="")
    def CancelAuthentication(self, cookie):
        print("cancel", cookie, flush=True)
        err = self.open.pop(str(cookie), None)
        if err is not None:
            err(dbus.DBusException("dismissed", name="org.freedesktop.PolicyKit1.Error.Cancelled"))


def start_time(pid):
    # Field 22 of /proc/PID/stat, counted after the command name's ")".
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[19])


def main():
    address, pid = sys.argv[1], int(sys.argv[2])
    DBusGMainLoop(set_as_default=True)
    bus = dbus.bus.BusConnection(address)
    agent = Agent(bus)
    authority = bus.get_object(
        "org.freedesktop.PolicyKit1", "/org/freedesktop/PolicyKit1/Authority"
    )
    subject = (
        "unix-process",
        {"pid": dbus.UInt32(pid), "start-time": dbus.UInt64(start_time(pid))},
    )
    authority.RegisterAuthenticationAgent(
        subject,
        "C",
        PATH,
        dbus_interface="org.freedesktop.PolicyKit1.Authority",
    )
    print("registered", pid, flush=True)
    GLib.MainLoop().run()


if __name__ == "__main__":
    main()
