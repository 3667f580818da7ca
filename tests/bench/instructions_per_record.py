#!/usr/bin/env python3
"""CPU per record as instructions per record (issue 17): the release
produce-proxy under `valgrind --tool=callgrind`, in front of the test
cluster (tests/broker), fed by one synchronous client (send a request,
wait for its answer, repeat), once over the legacy path (Produce v1, a
magic-0 MessageSet, up-converted by the proxy) and once over the v2 path
(Produce v7, a RecordBatch v2). Instruction counts do not depend on how busy
the shared machine is, so unlike a timing they can be checked.

Start-up, connections, metadata and the producer id cost the same however
many records follow, so each path runs twice, with `--requests` and with
3 x `--requests` requests, and the per-record figure is the difference of
the two totals over the difference in records. The four proxies run at once
(each path and size on its own topic of one cluster).

    tests/bench/instructions_per_record.py --cluster BIN [--proxy BIN]   # prints the figures
    ... --check docs/bench/instructions_per_record.json                  # fails past +10 %
    ... --write docs/bench/instructions_per_record.json                  # stores a new baseline
    ... --value-bytes 32768 --requests 20                                 # large requests (no baseline)

With large values a request spans several socket reads, so the figure shows
what reading a frame's bytes straight into its buffer saves; the baseline
is for the default 200-byte values only.

The proxy is the release build (valgrind cannot run an ASan binary):
--proxy, else $PP_RELEASE_PROXY, else build/release/daemon/produce-proxy
under the repository. Stdlib only; every wait is bounded; every process
started is stopped. Exit 77 (skipped) only when valgrind is not installed.
"""
import argparse
import datetime
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
import time
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "daemon"))
import daemon_support  # noqa: E402
import hostile_wire as wire  # noqa: E402

TOLERANCE = 0.10  # the regression bound of issue 17
RECORDS_PER_REQUEST = 10
VALUE_BYTES = 200
SIZES = (1, 3)  # multiples of --requests; the per-record figure is their difference


# ---- the client's requests ------------------------------------------------

def legacy_message_set(values):
    """A magic-0 MessageSet (Produce v0-v1): offset, size, then CRC-32 over
    magic, attributes, null key and the value."""
    out = bytearray()
    for i, value in enumerate(values):
        body = struct.pack(">bbi", 0, 0, -1) + struct.pack(">i", len(value)) + value
        message = struct.pack(">I", zlib.crc32(body)) + body
        out += struct.pack(">qi", i, len(message)) + message
    return bytes(out)


def v2_batch(values):
    records = bytearray()
    for i, value in enumerate(values):
        body = b"\x00" + wire.varint(0) + wire.varint(i) + wire.varint(-1) + wire.varint(len(value)) + value
        body += wire.varint(0)  # no headers
        records += wire.varint(len(body)) + body
    return wire.record_batch(bytes(records), len(values))


def produce_request(version, correlation_id, topic, records):
    """Produce v1 or v7 (request header v1, classic encoding), partition 0, acks=all."""
    header = struct.pack(">hhi", wire.PRODUCE, version, correlation_id) + wire.string16(b"ipr")
    body = struct.pack(">h", -1) if version >= 3 else b""  # transactional_id
    body += struct.pack(">hi", -1, 30000) + struct.pack(">i", 1) + wire.string16(topic)
    body += struct.pack(">i", 1) + struct.pack(">ii", 0, len(records)) + records
    return wire.frame(header + body)


def run_client(port, path, topic, requests, deadline):
    """Sends `requests` requests one at a time; returns the records acknowledged."""
    values = [bytes((65 + (i + j) % 26) for j in range(VALUE_BYTES)) for i in range(RECORDS_PER_REQUEST)]
    records = legacy_message_set(values) if path == "legacy" else v2_batch(values)
    version = 1 if path == "legacy" else 7
    sock = wire.connect(port, timeout=max(1.0, deadline - time.time()))
    acked = 0
    try:
        for i in range(requests):
            if time.time() > deadline:
                break
            sock.settimeout(max(1.0, deadline - time.time()))
            sock.sendall(produce_request(version, i + 1, topic.encode(), records))
            answer = wire.read_frame(sock)
            if answer is None or wire.produce_error_code(answer) != 0:
                raise RuntimeError(f"{path}: request {i + 1} failed")
            acked += RECORDS_PER_REQUEST
    finally:
        sock.close()
    return acked


# ---- the proxy under callgrind ---------------------------------------------

def find_proxy(given):
    if given and not os.path.isfile(given):
        print(f"{given} does not exist; looking for the release build elsewhere")
    for candidate in (given, os.environ.get("PP_RELEASE_PROXY"),
                      os.path.join(ROOT, "build", "release", "daemon", "produce-proxy")):
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return os.path.abspath(candidate)
    return None


def callgrind_total(path):
    """The Ir total of a callgrind output file (its `summary:` or `totals:` line)."""
    with open(path) as f:
        text = f.read()
    m = re.search(r"^(?:summary|totals):\s*(\d+)", text, re.M)
    if not m:
        raise RuntimeError(f"no instruction total in {path}")
    return int(m.group(1))


def measure_one(proxy_bin, bootstrap, path, topic, requests, work, timeout_s):
    """Instructions the proxy ran, start to exit, for `requests` requests."""
    out = os.path.join(work, f"callgrind.{topic}.out")
    servers = "[" + ",".join(f'"{s}"' for s in bootstrap.split(",")) + "]"
    port, metrics_port = daemon_support.free_port(), daemon_support.free_port()
    proxy = daemon_support.Proxy(
        proxy_bin, config_path=os.path.join(ROOT, "config", "produce-proxy.example.toml"),
        sets=(f"upstream.bootstrap_servers={servers}", f"listener.address=127.0.0.1:{port}",
              f"metrics.address=127.0.0.1:{metrics_port}", "shutdown.drain_timeout_ms=5000"),
        wrapper=("valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", "--dump-line=no"))
    deadline = time.time() + timeout_s
    try:
        if not proxy.wait_ready(timeout=timeout_s):
            raise RuntimeError(f"proxy under callgrind not ready: {proxy.text()[-600:]}")
        acked = run_client(port, path, topic, requests, deadline)
        if acked != requests * RECORDS_PER_REQUEST:
            raise RuntimeError(f"{topic}: {acked} of {requests * RECORDS_PER_REQUEST} records acknowledged in time")
    finally:
        code = proxy.stop(timeout=max(10.0, deadline - time.time()))
    if code != 0:
        raise RuntimeError(f"{topic}: proxy exited with {code}: {proxy.text()[-600:]}")
    return callgrind_total(out), acked


def measure(proxy_bin, cluster_bin, requests, timeout_s, keep=None):
    """{path: instructions per record} for the legacy and v2 paths."""
    runs = [(path, size) for path in ("legacy", "v2") for size in SIZES]
    topics = {run: f"ipr-{run[0]}-{run[1]}" for run in runs}
    cluster = daemon_support.TestCluster(cluster_bin, "--brokers", "1", "--seed", "1",
                                         *[a for t in topics.values() for a in ("--topic", f"{t}:1")])
    results, errors = {}, []
    with tempfile.TemporaryDirectory() as work:
        def one(run):
            try:
                results[run] = measure_one(proxy_bin, cluster.bootstrap, run[0], topics[run], requests * run[1],
                                           work, timeout_s)
            except Exception as e:  # reported below, with every other run's
                errors.append(f"{run}: {e}")
        threads = [threading.Thread(target=one, args=(run,)) for run in runs]
        try:
            for t in threads:
                t.start()
            for t in threads:
                t.join(timeout_s + 60)
        finally:
            cluster.stop()
            if keep:  # for callgrind_annotate: where the instructions go
                os.makedirs(keep, exist_ok=True)
                for name in os.listdir(work):
                    shutil.copy(os.path.join(work, name), keep)
    if errors or len(results) != len(runs):
        raise RuntimeError("; ".join(errors) or "a run did not finish")
    out = {}
    for path in ("legacy", "v2"):
        (small_ir, small_n), (large_ir, large_n) = results[(path, SIZES[0])], results[(path, SIZES[1])]
        out[path] = round((large_ir - small_ir) / (large_n - small_n))
    return out


# ---- baseline ---------------------------------------------------------------

def check(measured, baseline_path):
    with open(baseline_path) as f:
        baseline = json.load(f)
    if baseline.get("value_bytes") != VALUE_BYTES:
        print(f"the baseline is for {baseline.get('value_bytes')}-byte values, not {VALUE_BYTES}: not compared")
        return 1
    failed = False
    for path, value in measured.items():
        base = baseline["instructions_per_record"][path]
        change = value / base - 1
        verdict = "ok"
        if change > TOLERANCE:
            verdict, failed = f"REGRESSION: more than +{TOLERANCE:.0%}", True
        elif change < -TOLERANCE:
            verdict = "faster than the baseline: store a new one with --write"
        print(f"{path}: {value} instructions per record, baseline {base} ({change:+.1%}): {verdict}")
    return 1 if failed else 0


def write(measured, baseline_path, requests):
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    doc = {
        "what": "instructions the release produce-proxy runs per record, callgrind Ir, difference of two runs "
                "(tests/bench/instructions_per_record.py)",
        "instructions_per_record": measured,
        "records_per_request": RECORDS_PER_REQUEST, "value_bytes": VALUE_BYTES, "requests": requests,
        "sizes": list(SIZES), "commit": commit,
        "measured": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
    }
    with open(baseline_path, "w") as f:
        json.dump(doc, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"baseline written to {baseline_path}")


def main():
    global VALUE_BYTES
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--proxy", help="release produce-proxy (default: $PP_RELEASE_PROXY, build/release)")
    p.add_argument("--cluster", required=True, help="the test-cluster binary (tests/broker)")
    p.add_argument("--requests", type=int, default=300, help="requests of the smaller run per path")
    p.add_argument("--timeout-s", type=float, default=100, help="bound on each proxy's run")
    p.add_argument("--keep", metavar="DIR", help="copy the callgrind output files here")
    p.add_argument("--value-bytes", type=int, default=VALUE_BYTES, help="bytes per record value")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--check", metavar="BASELINE_JSON")
    mode.add_argument("--write", metavar="BASELINE_JSON")
    args = p.parse_args()
    VALUE_BYTES = args.value_bytes
    if args.write and VALUE_BYTES != 200:
        print("a baseline is stored for 200-byte values only")
        return 1
    if not shutil.which("valgrind"):
        print("valgrind is not installed (scripts/setup.sh --bench-tools): skipped")
        return 77
    proxy = find_proxy(args.proxy)
    if not proxy:
        print("no release produce-proxy: pass --proxy, set PP_RELEASE_PROXY, or "
              "cmake --preset release && cmake --build build/release --target produce-proxy")
        return 1
    if daemon_support.is_asan_build(proxy):
        print(f"{proxy} is an ASan build; valgrind needs the release binary")
        return 1
    print(f"proxy: {proxy}")
    # A stored baseline is the median of three measurements; a check is one.
    runs = [measure(proxy, args.cluster, args.requests, args.timeout_s, args.keep)
            for _ in range(3 if args.write else 1)]
    measured = {path: sorted(r[path] for r in runs)[len(runs) // 2] for path in runs[0]}
    print(json.dumps({"instructions_per_record": measured, "records_per_request": RECORDS_PER_REQUEST,
                      "value_bytes": VALUE_BYTES}))
    if args.check:
        return check(measured, args.check)
    if args.write:
        write(measured, args.write, args.requests)
    return 0


if __name__ == "__main__":
    sys.exit(main())
