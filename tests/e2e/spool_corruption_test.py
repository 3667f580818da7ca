#!/usr/bin/env python3
"""A damaged last spool segment, through the shipped binary (docs/design/SPOOL.md,
"Recovery"; docs/TESTING.md "The spool's faults"): the last segment is
truncated at 100 random offsets and bytes are flipped at random; recovery
never crashes, never delivers a corrupt record, and loses only the torn tail.

  /usr/bin/python3 tests/e2e/spool_corruption_test.py --proxy BINARY --cluster TEST_CLUSTER \
      [--seed N] [--cuts 100] [--runs 5] [unittest args]

1. A spool is filled through the binary with ack = "spool" and the upstream
   down (every record stays on disk): two confluent-kafka producers in this
   process, kcat's legacy mode (Produce v1, no producer id) and
   enable.idempotence, each record's value carrying its index and a CRC-32
   of its random payload. The proxy is stopped with SIGTERM.
2. The segments are parsed here, independently of the proxy's reader, so
   each record is known by the entry that holds it and the entry's bytes.
3. `--cuts` offsets (seeded, printed) of the last segment: a copy cut there,
   `produce-proxy spool inspect` run on it: exit 0, no signal, and records
   owed, entries owed and the torn tail exactly what the cut leaves (every
   entry whole before the cut kept, nothing of the others).
4. `--runs` cuts and at least 6 flip patterns (1 byte, 4 bytes in a row,
   8 scattered, one in the header, one in its version field, the last
   entry's last byte): the daemon
   started on a copy with the test cluster up, the topic read back with
   kcat: every record delivered was acknowledged, byte-identical, once, in
   its partition in order, and exactly the records of the damaged range are
   missing.

A self-check first proves the checkers reject doctored read-backs and
inspect outputs. About 40 s. Stdlib, Debian's python3-confluent-kafka, kcat.
"""
import collections
import os
import random
import re
import shutil
import signal
import struct
import subprocess
import sys
import time
import unittest
import zlib

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import spool_support as s  # noqa: E402
from daemon_support import run_tests  # noqa: E402

ARGS = None
TOPIC = "corrupt"
PARTITIONS = 3
HEADER = 36
SEGMENT_BYTES = 1 << 16
SPOOL_RECORDS = "produce_proxy_spool_records"
CORRUPT = "produce_proxy_spool_corrupt_bytes_total"


# ---------------------------------------------------------------------------
# Values: index and checksum


def payload_of(seed, name, i):
    """The random payload of record i of client `name`: 20-300 letters."""
    rng = random.Random("%d/%s/%d" % (seed, name, i))
    return "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(20, 300)))


def value_of(seed, name, i):
    p = payload_of(seed, name, i)
    return "%s-%d-%08x-%s" % (name, i, zlib.crc32(p.encode()), p)


def value_is_whole(key, value):
    """True when `value` names the same record as `key` and its payload
    matches its checksum: damage shows without knowing what was sent."""
    m = re.fullmatch(r"([A-Za-z]+)-(\d+)-([0-9a-f]{8})-([a-z]*)", value)
    return bool(m) and "%s-%s" % (m.group(1), m.group(2)) == key and int(m.group(3), 16) == zlib.crc32(
        m.group(4).encode())


# ---------------------------------------------------------------------------
# The segment format, parsed here (SPOOL.md, "On-disk format")


def _varint(b, pos):
    shift = result = 0
    while True:
        byte = b[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return (result >> 1) ^ -(result & 1), pos


def batch_keys(batch):
    """Keys of an uncompressed RecordBatch v2, in order."""
    if batch[16] != 2 or struct.unpack_from(">h", batch, 21)[0] & 7:
        raise AssertionError("spooled batch not an uncompressed v2 batch")
    count = struct.unpack_from(">i", batch, 57)[0]
    pos, keys = 61, []
    for _ in range(count):
        length, pos = _varint(batch, pos)
        end = pos + length
        pos += 1                       # attributes
        _, pos = _varint(batch, pos)   # timestamp delta
        _, pos = _varint(batch, pos)   # offset delta
        klen, pos = _varint(batch, pos)
        keys.append(batch[pos:pos + klen].decode())
        pos = end
    return keys


def parse_segment(data):
    """[(offset, end, kind, id, keys of a Records entry)] of a whole segment."""
    if data[:8] != b"ppspool\n":
        raise AssertionError("not a segment")
    out, pos = [], HEADER
    while pos < len(data):
        size, _ = struct.unpack_from(">II", data, pos)
        end = pos + 8 + size
        kind = data[pos + 8]
        entry_id = struct.unpack_from(">Q", data, pos + 9)[0]
        keys = []
        if kind == 1:
            b = pos + 25
            tlen = struct.unpack_from(">H", data, b)[0]
            b += 2 + tlen + 4 + 2 + 8 + 2 + 4
            count, bsize = struct.unpack_from(">iI", data, b)
            keys = batch_keys(data[b + 8:b + 8 + bsize])
            if len(keys) != count:
                raise AssertionError("entry %d: %d keys, record_count %d" % (entry_id, len(keys), count))
        out.append((pos, end, kind, entry_id, keys))
        pos = end
    if pos != len(data):
        raise AssertionError("segment ends inside an entry")
    return out


def lost_from(entries, damaged_at):
    """Keys of the Records entries not whole before offset `damaged_at` (the
    cut, or the first flipped byte): what recovery may not keep."""
    return [k for off, end, kind, _, keys in entries if end > damaged_at or damaged_at < HEADER for k in keys]


# ---------------------------------------------------------------------------
# Checkers (each returns a list of problems; the self-check doctors inputs)


def check_inspect(out, total_records, total_entries, entries, cut):
    """`spool inspect` of the spool with its last segment cut at `cut`."""
    kept = [e for e in entries if e[1] <= cut and cut >= HEADER]
    lost = [e for e in entries if e not in kept and e[2] == 1]
    want_records = total_records - sum(len(e[4]) for e in lost)
    want_entries = total_entries - len(lost)
    boundary = kept[-1][1] if kept else HEADER
    want_torn = cut if cut < HEADER else cut - boundary
    problems = []
    m = re.search(r"^records owed: (\d+) records in (\d+) entries$", out, re.M)
    if not m:
        return ["no 'records owed' line"]
    if (int(m.group(1)), int(m.group(2))) != (want_records, want_entries):
        problems.append("records owed %s in %s entries, want %d in %d" % (m.group(1), m.group(2), want_records,
                                                                           want_entries))
    m = re.search(r"a start would cut a torn tail of (\d+) bytes", out)
    torn = int(m.group(1)) if m else 0
    if torn != want_torn:
        problems.append("torn tail %d bytes, want %d" % (torn, want_torn))
    if "move a segment aside" in out:
        problems.append("a cut last segment would be moved aside")
    return problems


def check_delivery(rows, acked, lost, seed):
    """The topic read back (kcat rows) against what was acknowledged
    ({key: value}) and what the damage may take (`lost`, a set of keys):
    every row acknowledged, whole, once, in order per partition; every
    acknowledged key outside `lost` there, none inside it."""
    problems = []
    copies = collections.Counter()
    last = {}
    for p, _, key, value in rows:
        copies[key] += 1
        if key not in acked:
            problems.append("delivered a record never acknowledged: %r" % key[:40])
            continue
        if value != acked[key] or not value_is_whole(key, value):
            problems.append("delivered %s damaged: %r" % (key, value[:60]))
        name, _, i = key.rpartition("-")
        if p != int(i) % PARTITIONS:
            problems.append("%s in partition %d" % (key, p))
        if copies[key] == 1:
            if last.get((name, p), -1) > int(i):
                problems.append("%s out of order in partition %d" % (key, p))
            last[(name, p)] = int(i)
    twice = sorted(k for k, c in copies.items() if c > 1)
    if twice:
        problems.append("%d delivered more than once, e.g. %s" % (len(twice), twice[:3]))
    missing = sorted(k for k in acked if copies[k] == 0 and k not in lost)
    if missing:
        problems.append("%d acknowledged records outside the damage missing, e.g. %s" % (len(missing), missing[:3]))
    back = sorted(k for k in lost if copies[k])
    if back:
        problems.append("%d records of the damaged range delivered, e.g. %s" % (len(back), back[:3]))
    return problems[:12]


# ---------------------------------------------------------------------------


def fill_spool(binary, cluster_bin, workdir, seed):
    """A spool of records from both clients, acknowledged with the upstream
    down: (spool dir, {key: value} acknowledged, last segment's size)."""
    from confluent_kafka import Producer
    cluster = s.TestCluster(cluster_bin, "--brokers", "1", "--topic", "%s:%d" % (TOPIC, PARTITIONS))
    spool_dir = os.path.join(workdir, "spool")
    proxy = s.SpoolProxy(binary, cluster.bootstrap, workdir, name="fill", extra="[shutdown]\ndrain_timeout_ms = 1000\n",
                         spool={"dir": spool_dir, "ack": "spool", "fsync": "group", "segment_bytes": SEGMENT_BYTES})
    producers = {}
    try:
        proxy.start()
        common = {"bootstrap.servers": proxy.bootstrap, "linger.ms": 2, "batch.num.messages": 50,
                  "compression.type": "none", "acks": "all", "message.timeout.ms": 30000, "log_level": 2}
        producers = {"L": Producer({**common, **s.LEGACY}), "I": Producer({**common, **s.IDEMPOTENT})}
        for name, p in producers.items():
            md = p.list_topics(TOPIC, timeout=20).topics.get(TOPIC)
            if md is None or md.error is not None or len(md.partitions) != PARTITIONS:
                raise AssertionError("%s: no metadata for %s" % (name, TOPIC))
        cluster.command("down 1")   # from here on nothing leaves the spool
        acked, errors, sent = {}, collections.Counter(), {"L": 0, "I": 0}

        def report(err, msg):
            if err is None:
                acked[msg.key().decode()] = msg.value().decode()
            else:
                errors[err.name()] += 1

        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            for name, p in producers.items():
                for _ in range(25):
                    i = sent[name]
                    p.produce(TOPIC, key="%s-%d" % (name, i), value=value_of(seed, name, i), partition=i % PARTITIONS,
                              on_delivery=report)
                    sent[name] += 1
            for p in producers.values():
                p.flush(30)
            segs = sorted(f for f in os.listdir(spool_dir) if f.endswith(".seg"))
            if len(segs) >= 4 and os.path.getsize(os.path.join(spool_dir, segs[-1])) > SEGMENT_BYTES // 2:
                break
        total = sum(sent.values())
        if errors or len(acked) != total:
            raise AssertionError("%d of %d acknowledged, errors %s" % (len(acked), total, dict(errors)))
        rc = proxy.terminate(timeout=60)
        if rc != 0:
            raise AssertionError("SIGTERM with the upstream down: exit %s\n%s" % (rc, proxy.log_text()[-3000:]))
        return spool_dir, acked, proxy
    finally:
        for p in producers.values():
            p.flush(0)
        if proxy.alive():
            proxy.proc.kill()
            proxy.proc.wait(timeout=10)
        cluster.stop()


def inspect(binary, directory):
    return subprocess.run([binary, "spool", "inspect", directory], capture_output=True, text=True, timeout=60)


def deliver(binary, cluster_bin, workdir, spool_dir, tag):
    """Starts the daemon on `spool_dir` in front of a fresh test cluster with
    the topic, waits for the spool to drain, SIGTERMs it: (kcat rows,
    spool_corrupt_bytes_total, proxy)."""
    cluster = s.TestCluster(cluster_bin, "--brokers", "1", "--topic", "%s:%d" % (TOPIC, PARTITIONS))
    proxy = s.SpoolProxy(binary, cluster.bootstrap, workdir, name="deliver-" + tag,
                         extra="[shutdown]\ndrain_timeout_ms = 3000\n",
                         spool={"dir": spool_dir, "ack": "spool", "fsync": "group", "segment_bytes": SEGMENT_BYTES})
    try:
        proxy.start()
        deadline = time.monotonic() + 60
        left = None
        while time.monotonic() < deadline and proxy.alive():
            left = proxy.scrape(SPOOL_RECORDS)
            if left == 0:
                break
            time.sleep(0.1)
        corrupt = proxy.scrape(CORRUPT)
        if left != 0:
            raise AssertionError("%s: the spool still holds %s records\n%s" % (tag, left, proxy.log_text()[-3000:]))
        rows = s.read_log(cluster.bootstrap, TOPIC, timeout=60)
        rc = proxy.terminate(timeout=30)
        if rc != 0:
            raise AssertionError("%s: SIGTERM exit %s\n%s" % (tag, rc, proxy.log_text()[-3000:]))
        return rows, corrupt, proxy
    finally:
        if proxy.alive():
            proxy.proc.kill()
            proxy.proc.wait(timeout=10)
        cluster.stop()


def flip_patterns(rng, entries, size, runs):
    """Named lists of offsets to flip in a segment of `size` bytes: the 6
    patterns, then more scattered ones up to `runs`. A flipped version field
    must read as damage, not as a newer format refusing the directory."""
    body = range(HEADER, size)
    patterns = [
        ("1 byte", [rng.choice(body)]),
        ("4 bytes in a row", [start + j for start in [rng.randrange(HEADER, size - 4)] for j in range(4)]),
        ("8 scattered bytes", sorted(rng.sample(body, 8))),
        ("1 byte of the header", [rng.choice([*range(0, 8), *range(12, HEADER)])]),
        ("1 byte of the header's version field", [rng.randrange(8, 12)]),
        ("the last entry's last byte", [entries[-1][1] - 1]),
    ]
    while len(patterns) < runs:
        patterns.append(("%d scattered bytes" % (len(patterns) + 1), sorted(rng.sample(body, len(patterns) + 1))))
    return patterns[:max(runs, 6)]


class SpoolCorruption(unittest.TestCase):
    maxDiff = None

    def test_0_checkers_reject_doctored_input(self):
        seed = 1
        acked = {"L-%d" % i: value_of(seed, "L", i) for i in range(9)}
        rows = [(i % PARTITIONS, i // PARTITIONS, "L-%d" % i, acked["L-%d" % i]) for i in range(9)]
        lost = {"L-8"}
        good = [r for r in rows if r[2] not in lost]
        self.assertEqual(check_delivery(good, acked, lost, seed), [])
        v = good[3][3]
        doctored = {
            "a flipped payload byte": good[:3] + [good[3][:3] + (v[:-1] + ("a" if v[-1] != "a" else "b"),)]
            + good[4:],
            "a value from another record": good[:3] + [good[3][:3] + (acked["L-0"],)] + good[4:],
            "a record twice": good + [good[2]],
            "an acknowledged record missing": good[1:],
            "a record of the damaged range delivered": rows,
            "a stranger": good + [(0, 99, "L-77", value_of(seed, "L", 77))],
            "two records of a partition swapped": [good[3], good[1], good[2], good[0]] + good[4:],
        }
        for what, doctored_rows in doctored.items():
            self.assertNotEqual(check_delivery(doctored_rows, acked, lost, seed), [], what)
        entries = [(0, 36, 2, 1, []), (36, 100, 1, 2, ["L-0", "L-1"]), (100, 150, 1, 3, ["L-2"])]
        out = "records owed: 10 records in 4 entries\n  a start would cut a torn tail of 20 bytes\n"
        self.assertEqual(check_inspect(out, 11, 5, entries, 120), [])
        for bad in (out.replace("10 records", "11 records"), out.replace("4 entries", "5 entries"),
                    out.replace("20 bytes", "21 bytes"), out + "a start would move a segment aside\n"):
            self.assertNotEqual(check_inspect(bad, 11, 5, entries, 120), [], bad)

    def test_1_cut_and_flipped_last_segment(self):
        seed = ARGS.seed if ARGS.seed is not None else random.SystemRandom().randrange(1 << 31)
        s.say("seed %d (rerun with --seed %d)", seed, seed)
        rng = random.Random(seed)
        workdir = s.workdir("pp-spool-corrupt-")
        t0 = time.monotonic()
        try:
            spool_dir, acked, _ = fill_spool(ARGS.proxy, ARGS.cluster, workdir, seed)
            t_fill = time.monotonic() - t0
            segs = sorted(f for f in os.listdir(spool_dir) if f.endswith(".seg"))
            last = segs[-1]
            with open(os.path.join(spool_dir, last), "rb") as f:
                original = f.read()
            entries = parse_segment(original)
            base = inspect(ARGS.proxy, spool_dir)
            self.assertEqual(base.returncode, 0, base.stderr)
            m = re.search(r"^records owed: (\d+) records in (\d+) entries$", base.stdout, re.M)
            total_records, total_entries = int(m.group(1)), int(m.group(2))
            self.assertEqual(total_records, len(acked), "every acknowledged record owed before any damage:\n" +
                             base.stdout[:3000])
            in_last = sum(len(e[4]) for e in entries)
            kinds = collections.Counter(e[2] for e in entries)
            s.say("%d records acknowledged in %d segments (%.1f s); the last, %s: %d bytes, %d entries (by "
                  "kind %s), %d records", len(acked), len(segs), t_fill, last, len(original), len(entries),
                  dict(sorted(kinds.items())), in_last)

            # 1. cuts, through spool inspect
            cuts = sorted(rng.sample(range(len(original)), min(ARGS.cuts, len(original))))
            s.say("cuts: %s", cuts)
            work = os.path.join(workdir, "inspect")
            shutil.copytree(spool_dir, work)
            problems = []
            t1 = time.monotonic()
            for cut in cuts:
                with open(os.path.join(work, last), "wb") as f:
                    f.write(original[:cut])
                out = inspect(ARGS.proxy, work)
                if out.returncode != 0:
                    how = "signal %s" % signal.Signals(-out.returncode).name if out.returncode < 0 else \
                        "exit %d" % out.returncode
                    problems.append("cut %d: spool inspect %s: %s" % (cut, how, out.stderr[-500:]))
                    continue
                problems += ["cut %d: %s" % (cut, p) for p in check_inspect(out.stdout, total_records,
                                                                            total_entries, entries, cut)]
            t_cuts = time.monotonic() - t1
            s.say("%d cuts inspected in %.1f s: %d problems", len(cuts), t_cuts, len(problems))

            # 2. the daemon on cut and flipped copies
            runs = [("cut at %d" % c, c, None) for c in rng.sample(cuts, min(ARGS.runs, len(cuts)))]
            for name, flips in flip_patterns(rng, entries, len(original), ARGS.runs):
                runs.append(("flip %s at %s" % (name, flips), min(flips), flips))
            t2 = time.monotonic()
            for k, (label, damaged_at, flips) in enumerate(runs):
                copy = os.path.join(workdir, "run-%d" % k)
                shutil.copytree(spool_dir, copy)
                data = bytearray(original[:damaged_at] if flips is None else original)
                for pos in flips or ():
                    data[pos] ^= rng.randrange(1, 256)
                with open(os.path.join(copy, last), "wb") as f:
                    f.write(data)
                lost = set(lost_from(entries, damaged_at))
                rows, corrupt, _ = deliver(ARGS.proxy, ARGS.cluster, workdir, copy, "run-%d" % k)
                found = check_delivery(rows, acked, lost, seed)
                if not corrupt and damaged_at < len(original):
                    found.append("spool_corrupt_bytes_total is %s" % corrupt)
                s.say("%s: %d rows delivered, %d records in the damaged range, corrupt bytes %s: %s", label,
                      len(rows), len(lost), corrupt, "ok" if not found else "%d problems" % len(found))
                problems += ["%s: %s" % (label, p) for p in found]
                if not s.keep_dir():
                    shutil.rmtree(copy, ignore_errors=True)
            s.say("%d daemon runs in %.1f s; total %.1f s", len(runs), time.monotonic() - t2, time.monotonic() - t0)
            self.assertEqual(problems, [], "seed %d" % seed)
        finally:
            if not s.keep_dir():
                shutil.rmtree(workdir, ignore_errors=True)


def options(parser):
    parser.add_argument("--seed", type=int)
    parser.add_argument("--cuts", type=int, default=100)
    parser.add_argument("--runs", type=int, default=5)


if __name__ == "__main__":
    run_tests(sys.modules[__name__], "--cluster", options=options)
