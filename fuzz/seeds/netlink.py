#!/usr/bin/env python3
"""Capture real netlink reply datagrams as fuzz seeds (run as root by
fuzz/seeds/capture.sh inside a throw-away network namespace).

Writes every datagram the kernel sends back, whole (nlmsghdr included):
  corpus/netlink_rtnl/    RTM_GETLINK dumps and gets, errors with extended ack
  corpus/netlink_ethtool/ CTRL_CMD_GETFAMILY "ethtool", every ethtool GET
                          (compact and verbose bitsets), STRSET_GET, errors
"""
import os, socket, struct, sys

OUT = sys.argv[1]
NLM_F_REQUEST, NLM_F_ACK, NLM_F_DUMP = 1, 4, 0x300
NETLINK_EXT_ACK = 11
seq = 100


def attr(kind, payload):
    n = 4 + len(payload)
    return struct.pack("=HH", n, kind) + payload + b"\0" * ((4 - n % 4) % 4)


def nest(kind, *attrs):
    return attr(kind | 0x8000, b"".join(attrs))


def save(target, name, datagrams):
    d = os.path.join(OUT, target)
    os.makedirs(d, exist_ok=True)
    for i, g in enumerate(datagrams):
        with open(os.path.join(d, f"{name}-{i}"), "wb") as f:
            f.write(g)


def request(sock, kind, flags, payload, dump=False):
    """Send one request; return the reply datagrams until DONE/ACK/ERROR."""
    global seq
    seq += 1
    msg = struct.pack("=IHHII", 16 + len(payload), kind, flags, seq, 0) + payload
    sock.send(msg)
    out = []
    while True:
        g = sock.recv(65536)
        out.append(g)
        at, end = 0, False
        while at + 16 <= len(g):
            ln, t, fl, sq, _ = struct.unpack_from("=IHHII", g, at)
            if t in (2, 3):  # ERROR (also the ACK), DONE
                end = True
            if ln < 16:
                break
            at += (ln + 3) & ~3
        if end or not dump and len(out) > 4:
            return out


def rtnl():
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)
    s.setsockopt(270, NETLINK_EXT_ACK, 1)
    s.bind((0, 0))
    ifi = struct.pack("=BxHiII", 0, 0, 0, 0, 0)
    save("netlink_rtnl", "dump", request(s, 18, NLM_F_REQUEST | NLM_F_DUMP, ifi, dump=True))
    for name in ["lo", "vfz0", "brfz0", "mvfz0"]:
        g = request(s, 18, NLM_F_REQUEST | NLM_F_ACK, ifi + attr(3, name.encode() + b"\0"))
        save("netlink_rtnl", f"get-{name}", g)
    g = request(s, 18, NLM_F_REQUEST | NLM_F_ACK, ifi + attr(3, b"nosuchif\0"))
    save("netlink_rtnl", "get-missing", g)
    # RTM_SETLINK with a bad MTU: an error with extended ack.
    idx = socket.if_nametoindex("vfz0")
    bad = struct.pack("=BxHiII", 0, 0, idx, 0, 0) + attr(4, struct.pack("=I", 70000))
    save("netlink_rtnl", "set-mtu-refused", request(s, 19, NLM_F_REQUEST | NLM_F_ACK, bad))


def genl():
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 16)
    s.setsockopt(270, NETLINK_EXT_ACK, 1)
    s.bind((0, 0))
    g = request(s, 0x10, NLM_F_REQUEST | NLM_F_ACK, struct.pack("=BBH", 3, 1, 0) + attr(2, b"ethtool\0"))
    save("netlink_ethtool", "ctrl-getfamily", g)
    at, fam = 16 + 4, None
    msg = g[0]
    while at < len(msg):
        ln, kind = struct.unpack_from("=HH", msg, at)
        if kind == 1:
            fam = struct.unpack_from("=H", msg, at + 4)[0]
        at += (ln + 3) & ~3
    cmds = {
        "strset": 1, "linkinfo": 2, "linkmodes": 4, "linkstate": 6, "features": 11,
        "rings": 15, "channels": 17, "coalesce": 19, "pause": 21,
    }
    for dev in ["lo", "vfz0", "tfz0", "brfz0"]:
        for name, cmd in cmds.items():
            for flags, tag in [(1, "compact"), (0, "verbose")]:
                if name == "strset":
                    body = nest(1, attr(2, dev.encode() + b"\0"), attr(3, struct.pack("=I", flags))) + \
                        nest(2, nest(1, attr(1, struct.pack("=I", 4))))  # ETH_SS_FEATURES
                    if dev != "lo":
                        continue
                else:
                    body = nest(1, attr(2, dev.encode() + b"\0"), attr(3, struct.pack("=I", flags)))
                g = request(s, fam, NLM_F_REQUEST | NLM_F_ACK, struct.pack("=BBH", cmd, 1, 0) + body)
                save("netlink_ethtool", f"{name}-{dev}-{tag}", g)


rtnl()
genl()
