#!/usr/bin/env python3
"""A logging TCP forwarder that shows what a Kafka client sends on the wire.

  tests/clients/wire_sniff.py --listen 127.0.0.1:PORT --upstream HOST:PORT [--seconds S]

Forwards bytes both ways unchanged and prints one JSON line per request the
client sends: api key and version, client id, and for Produce the message
format of every record set (magic, compression codec, and for magic 2 the
producer id/epoch/base sequence, so idempotence is visible, and the
(base) timestamp). The upstream must
advertise the sniffer's address, or the client leaves it after bootstrap:
run produce-proxy with listener.advertised_address = the --listen address.
Stops after --seconds (default 120) or on stdin EOF. For manual checks of
tests/clients/README.md's wire table.
"""

import argparse
import asyncio
import json
import struct
import sys

API_NAMES = {0: "Produce", 1: "Fetch", 2: "ListOffsets", 3: "Metadata", 10: "FindCoordinator",
             18: "ApiVersions", 22: "InitProducerId", 60: "DescribeCluster"}
CODECS = {0: "none", 1: "gzip", 2: "snappy", 3: "lz4", 4: "zstd"}


class R:
    def __init__(self, b, pos=0):
        self.b, self.p = b, pos

    def take(self, n):
        v = self.b[self.p:self.p + n]
        if len(v) < n:
            raise ValueError("short")
        self.p += n
        return v

    def i8(self): return struct.unpack(">b", self.take(1))[0]
    def i16(self): return struct.unpack(">h", self.take(2))[0]
    def i32(self): return struct.unpack(">i", self.take(4))[0]
    def i64(self): return struct.unpack(">q", self.take(8))[0]

    def uvarint(self):
        shift = v = 0
        while True:
            c = self.take(1)[0]
            v |= (c & 0x7F) << shift
            if not c & 0x80:
                return v
            shift += 7

    def string(self):
        n = self.i16()
        return None if n < 0 else self.take(n).decode("utf-8", "replace")

    def cstring(self):
        n = self.uvarint() - 1
        return None if n < 0 else self.take(n).decode("utf-8", "replace")

    def tags(self):
        for _ in range(self.uvarint()):
            self.uvarint()
            self.take(self.uvarint())


def record_sets(data):
    """Magic and codec of each batch/message in one partition's record set."""
    out, r = [], R(data)
    while r.p + 17 <= len(data):
        r.i64()  # offset / base offset
        size = r.i32()
        start = r.p
        if size <= 0 or start + size > len(data):
            break
        if size > 5 and data[start + 4] == 2:  # batch: leader epoch(4) then magic; message: crc(4) then magic
            b = R(data, start)
            b.i32()
            magic = b.i8()
            b.i32()  # crc
            attrs = b.i16()
            b.i32()
            base_ts = b.i64()
            b.i64()
            pid, epoch, seq = b.i64(), b.i16(), b.i32()
            out.append({"magic": magic, "codec": CODECS.get(attrs & 7, attrs & 7), "base_timestamp": base_ts,
                        "producer_id": pid, "epoch": epoch, "base_sequence": seq})
        else:
            b = R(data, start)
            b.i32()  # crc
            magic, attrs = b.i8(), b.i8()
            m = {"magic": magic, "codec": CODECS.get(attrs & 7, attrs & 7)}
            if magic >= 1:
                m["timestamp"] = b.i64()  # a compressed wrapper's is its last inner message's (or -1)
            out.append(m)
        r.p = start + size
    return out


def parse_request(frame):
    r = R(frame)
    key, ver, _corr = r.i16(), r.i16(), r.i32()
    client_id = r.string()
    info = {"api": API_NAMES.get(key, key), "version": ver, "client_id": client_id}
    if key != 0:
        return info
    flexible = ver >= 9
    if flexible:
        r.tags()
    if ver >= 3:
        info["transactional_id"] = r.cstring() if flexible else r.string()
    info["acks"] = r.i16()
    r.i32()
    sets = []
    for _ in range((r.uvarint() - 1) if flexible else r.i32()):
        if ver >= 13:
            r.take(16)
        else:
            r.cstring() if flexible else r.string()
        for _ in range((r.uvarint() - 1) if flexible else r.i32()):
            r.i32()
            n = (r.uvarint() - 1) if flexible else r.i32()
            if n > 0:
                sets += record_sets(r.take(n))
            if flexible:
                r.tags()
        if flexible:
            r.tags()
    if sets:
        first = sets[0]
        info.update({k: v for k, v in first.items()})
        info["record_sets"] = len(sets)
    return info


async def pipe(reader, writer, sniff):
    buf = b""
    try:
        while True:
            data = await reader.read(65536)
            if not data:
                break
            writer.write(data)
            await writer.drain()
            if sniff:
                buf += data
                while len(buf) >= 4:
                    n = struct.unpack(">i", buf[:4])[0]
                    if len(buf) < 4 + n:
                        break
                    frame, buf = buf[4:4 + n], buf[4 + n:]
                    try:
                        print(json.dumps(parse_request(frame), separators=(",", ":")), flush=True)
                    except Exception as e:  # noqa: BLE001 - log and keep forwarding
                        print(json.dumps({"unparsed": str(e)}), flush=True)
    except (ConnectionError, asyncio.CancelledError):
        pass
    finally:
        writer.close()


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--listen", required=True)
    ap.add_argument("--upstream", required=True)
    ap.add_argument("--seconds", type=float, default=120)
    a = ap.parse_args()
    uh, up = a.upstream.rsplit(":", 1)

    async def handle(cr, cw):
        try:
            ur, uw = await asyncio.open_connection(uh, int(up))
        except OSError as e:
            print(json.dumps({"upstream_error": str(e)}), flush=True)
            cw.close()
            return
        await asyncio.gather(pipe(cr, uw, True), pipe(ur, cw, False))

    lh, lp = a.listen.rsplit(":", 1)
    server = await asyncio.start_server(handle, lh, int(lp))
    loop = asyncio.get_running_loop()
    stdin_eof = loop.run_in_executor(None, sys.stdin.read)
    await asyncio.wait([asyncio.ensure_future(stdin_eof), asyncio.ensure_future(asyncio.sleep(a.seconds))],
                       return_when=asyncio.FIRST_COMPLETED)
    server.close()


if __name__ == "__main__":
    import os
    asyncio.run(main())
    sys.stdout.flush()
    os._exit(0)  # the stdin reader thread may still be blocked
