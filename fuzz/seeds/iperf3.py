#!/usr/bin/env python3
"""Capture real iperf3 control exchanges on 127.0.0.1 as fuzz seeds.

A relay between `iperf3 -c` and `iperf3 -s` records the control connection
(the first connection of each test): what the client sent becomes a seed of
corpus/iperf_server/ (hlctl's server reads it), what the server sent one of
corpus/iperf_client/ (hlctl's client reads it). Data connections are relayed
but not recorded; UDP goes straight to the server.
"""
import os, socket, subprocess, sys, threading, time

OUT = sys.argv[1]
SPORT, RPORT = 15310, 15309


def pump(a, b, rec):
    try:
        while True:
            d = a.recv(65536)
            if not d:
                break
            if rec is not None:
                rec.append(d)
            b.sendall(d)
    except OSError:
        pass
    finally:
        try:
            b.shutdown(socket.SHUT_WR)
        except OSError:
            pass


def relay(name, args, port):
    lst = socket.socket()
    lst.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    lst.bind(("127.0.0.1", port))
    lst.listen(16)
    c2s, s2c, threads = [], [], []

    def accept():
        first = True
        while True:
            try:
                c, _ = lst.accept()
            except OSError:
                return
            s = socket.create_connection(("127.0.0.1", SPORT))
            for a, b, rec in [(c, s, c2s if first else None), (s, c, s2c if first else None)]:
                t = threading.Thread(target=pump, args=(a, b, rec), daemon=True)
                t.start()
                threads.append(t)
            first = False

    threading.Thread(target=accept, daemon=True).start()
    # UDP tests: the client's datagrams go to the relay port; forward them.
    subprocess.run(["iperf3", "-c", "127.0.0.1", "-p", str(port)] + args,
                   stdout=subprocess.DEVNULL, timeout=30)
    time.sleep(0.5)
    lst.close()
    for d, rec in [("iperf_server", c2s), ("iperf_client", s2c)]:
        os.makedirs(os.path.join(OUT, d), exist_ok=True)
        with open(os.path.join(OUT, d, f"iperf3-{name}"), "wb") as f:
            f.write(b"".join(rec))


srv = subprocess.Popen(["iperf3", "-s", "-B", "127.0.0.1", "-p", str(SPORT)],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
time.sleep(0.5)
try:
    for i, (name, args) in enumerate([
        ("tcp", ["-t", "1"]),
        ("tcp-reverse-parallel", ["-t", "1", "-R", "-P", "2"]),
        ("tcp-bidir", ["-t", "1", "--bidir"]),
        ("tcp-bytes-omit", ["-n", "1M", "-O", "1", "-l", "64K", "-w", "256K", "-C", "cubic"]),
    ]):
        relay(name, args, RPORT - i)
finally:
    srv.terminate()
    srv.wait()
