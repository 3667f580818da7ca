#!/usr/bin/env python3
"""A recording TCP relay between Kafka clients and one Kafka broker, on
127.0.0.1, stdlib only. Used by capture_kafka4.py for the Apache Kafka 4.4.0
golden frames.

The relay forwards every byte unchanged in both directions and, while a case
label is set, keeps a copy of both streams of each connection it accepted.
It rewrites nothing: the broker is started with
advertised.listeners=PLAINTEXT://127.0.0.1:<relay port>, so the Metadata the
broker sends names the relay, and the client's bootstrap connection and its
connection to the broker's node id both come through here.

Frames are cut from a recorded stream by the 4-byte big-endian size prefix
(split_stream), and requests are paired with responses by correlation id.

    python3 kafka4_relay.py LISTEN_PORT TARGET_PORT   # relay in the foreground, prints frames
"""
import socket
import struct
import sys
import threading
import time

HOST = "127.0.0.1"


class Connection:
    def __init__(self, index, case):
        self.index = index
        self.case = case  # None: forwarded but not recorded
        self.accepted_at = time.time()
        self.c2s = bytearray()  # client -> broker
        self.s2c = bytearray()  # broker -> client
        self.done = threading.Event()
        self._open = 2


class Relay:
    def __init__(self, listen_port, target_port, host=HOST):
        self.host = host
        self.listen_port = listen_port
        self.target_port = target_port
        self.case = None
        self.connections = []
        self._lock = threading.Lock()
        self._sock = None
        self._stop = False

    def start(self):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((self.host, self.listen_port))
        s.listen(64)
        s.settimeout(0.2)
        self._sock = s
        threading.Thread(target=self._accept_loop, name="relay-accept", daemon=True).start()
        return self

    def stop(self):
        self._stop = True
        if self._sock:
            self._sock.close()

    def set_case(self, case):
        with self._lock:
            self.case = case

    def connections_of(self, case):
        with self._lock:
            return [c for c in self.connections if c.case == case]

    def wait_closed(self, case, timeout=10.0):
        deadline = time.time() + timeout
        for c in self.connections_of(case):
            if not c.done.wait(max(0.0, deadline - time.time())):
                return False
        return True

    def _accept_loop(self):
        while not self._stop:
            try:
                client, _ = self._sock.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            try:
                server = socket.create_connection((self.host, self.target_port), timeout=5)
                server.settimeout(None)
            except OSError:
                client.close()
                continue
            for s in (client, server):
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self._lock:
                conn = Connection(len(self.connections), self.case)
                self.connections.append(conn)
            threading.Thread(target=self._pump, args=(conn, client, server, conn.c2s),
                             daemon=True).start()
            threading.Thread(target=self._pump, args=(conn, server, client, conn.s2c),
                             daemon=True).start()

    def _pump(self, conn, src, dst, record):
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                if conn.case is not None:
                    record += data
                dst.sendall(data)
        except OSError:
            pass
        finally:
            try:
                dst.shutdown(socket.SHUT_WR)
            except OSError:
                pass
            with self._lock:
                conn._open -= 1
                last = conn._open == 0
            if last:
                for s in (src, dst):
                    try:
                        s.close()
                    except OSError:
                        pass
                conn.done.set()


def split_stream(data):
    """Cuts a stream into frames (without their size prefix). Returns
    (frames, trailing bytes that do not make a whole frame)."""
    frames, pos = [], 0
    while pos + 4 <= len(data):
        (n,) = struct.unpack_from(">i", data, pos)
        if n < 0 or pos + 4 + n > len(data):
            break
        frames.append(bytes(data[pos + 4:pos + 4 + n]))
        pos += 4 + n
    return frames, bytes(data[pos:])


def pair_frames(conn):
    """[(request_index, request_frame, response_frame or None)] for one
    connection, paired by correlation id (Kafka answers in order on one
    connection, so this also checks the order)."""
    reqs, rest_c = split_stream(conn.c2s)
    resps, rest_s = split_stream(conn.s2c)
    if rest_c or rest_s:
        raise ValueError("connection %d: %d/%d trailing bytes not a whole frame"
                         % (conn.index, len(rest_c), len(rest_s)))
    by_corr = {}
    for f in resps:
        (corr,) = struct.unpack_from(">i", f, 0)
        if corr in by_corr:
            raise ValueError("connection %d: correlation id %d answered twice" % (conn.index, corr))
        by_corr[corr] = f
    out = []
    for i, f in enumerate(reqs):
        (corr,) = struct.unpack_from(">i", f, 4)
        out.append((i, f, by_corr.pop(corr, None)))
    if by_corr:
        raise ValueError("connection %d: responses to unknown correlation ids %s"
                         % (conn.index, sorted(by_corr)))
    return out


if __name__ == "__main__":
    relay = Relay(int(sys.argv[1]), int(sys.argv[2])).start()
    relay.set_case("foreground")
    print("relaying 127.0.0.1:%s -> 127.0.0.1:%s; Ctrl-C prints the frames" % (sys.argv[1], sys.argv[2]))
    try:
        while True:
            time.sleep(1)
    except KeyboardInterrupt:
        pass
    relay.stop()
    for c in relay.connections:
        for i, req, resp in pair_frames(c):
            key, ver = struct.unpack_from(">hh", req, 0)
            print("conn %d #%d api %d v%d: %d bytes -> %s" % (
                c.index, i, key, ver, len(req), None if resp is None else len(resp)))
