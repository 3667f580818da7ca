#!/usr/bin/env python3
"""Sizing for docs/operations.md: the proxy's CPU per MB/s and per 1,000
requests/s for each client shape (legacy, v2, chatty; chatty at full speed
too when tests/bench's bench_chatty_client is built), and its RSS against
producer.buffer_memory_bytes under load and with the upstream stalled.

    tests/bench/sizing.py [--reps 3] [--records 150000] [--chatty-requests 20000]
                          [--chatty-fast-requests 200000] [--budgets 16,64,256]
                          [--skip-cpu] [--skip-memory] [--out docs/bench/sizing-2core.txt]

The runs in docs/operations.md: --records 300000 --chatty-requests 30000
--skip-memory (CPU), and --skip-cpu with the defaults (memory).

Runs the release binaries (build/release/daemon/produce-proxy,
build/release/tests/broker/test-cluster) on 127.0.0.1 only; the load comes
from kcat (Debian's package, librdkafka) and from a chatty client written
here (one Produce v2 request with one magic-1 message per request, each
connection waiting for its answer, as an old synchronous client does).

CPU is the proxy process's user+system time from /proc/PID/stat, read
before and after a fixed number of records, so the figures do not depend on
how fast a shared machine let the run go: millicores per MB/s is
1000 * cpu_seconds / MB, millicores per 1,000 requests/s is
1e6 * cpu_seconds / requests. Each case runs --reps times; the table gives
the median and the range. Every loop is bounded in count and in time; every
process started here is stopped by its pid on exit.
"""
import argparse
import os
import pathlib
import re
import selectors
import shutil
import signal
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import zlib

ROOT = pathlib.Path(__file__).resolve().parents[2]
PROXY = ROOT / "build/release/daemon/produce-proxy"
CLUSTER = ROOT / "build/release/tests/broker/test-cluster"
CONFIG = ROOT / "config/produce-proxy.example.toml"
TOPIC = "sz"
PARTITIONS = 16
CLK_TCK = os.sysconf("SC_CLK_TCK")
MIB = 1024 * 1024

started = []  # every process started here, stopped by pid on exit


def log(msg):
    print(f"sizing: {msg}", file=sys.stderr, flush=True)


# ---- processes ---------------------------------------------------------------

class Cluster:
    """The test cluster, its stdin held open for control commands."""

    def __init__(self, work, extra=()):
        self.err = open(work / "cluster.err", "w")
        self.proc = subprocess.Popen(
            [str(CLUSTER), "--brokers", "3", "--topic", f"{TOPIC}:{PARTITIONS}", "--seed", "1",
             "--retain-log-bytes", str(64 * MIB), *extra],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.err, text=True)
        started.append(self.proc)
        line = self.proc.stdout.readline()
        if not line.startswith("bootstrap="):
            raise SystemExit(f"test cluster did not start: {line!r}")
        self.bootstrap = line.strip().split("=", 1)[1]

    def command(self, cmd):
        self.proc.stdin.write(cmd + "\n")
        self.proc.stdin.flush()
        return self.proc.stdout.readline().strip()

    def stop(self):
        stop(self.proc)


class Proxy:
    def __init__(self, work, bootstrap, sets=()):
        servers = ",".join(f'"{s}"' for s in bootstrap.split(","))
        self.log_path = work / f"proxy.{len(started)}.log"
        self.log_file = open(self.log_path, "w")
        args = [str(PROXY), "--config", str(CONFIG), "--set", f"upstream.bootstrap_servers=[{servers}]",
                "--set", "listener.address=127.0.0.1:0", "--set", "metrics.address=127.0.0.1:0",
                "--set", "shutdown.drain_timeout_ms=2000"]
        for s in sets:
            args += ["--set", s]
        self.proc = subprocess.Popen(args, stdout=self.log_file, stderr=subprocess.STDOUT)
        started.append(self.proc)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            m = re.search(r"ready: clients connect to (\S+), Prometheus scrapes (\S+) ", self.log_path.read_text())
            if m:
                self.addr, self.metrics = m.group(1), m.group(2)
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.1)
        raise SystemExit(f"proxy did not become ready: {self.log_path.read_text()[-500:]}")

    def cpu(self):
        fields = pathlib.Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLK_TCK  # utime, stime (fields 14, 15)

    def status_kb(self, key):
        for line in pathlib.Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1])
        return 0

    def metric(self, name, labels=""):
        """Sum of a family's samples whose label text contains `labels`."""
        text = urllib.request.urlopen(f"http://{self.metrics}/metrics", timeout=5).read().decode()
        total = 0.0
        for line in text.splitlines():
            if line.startswith(f"produce_proxy_{name}") and not line.startswith("#"):
                head, value = line.rsplit(" ", 1)
                if head.split("{")[0] == f"produce_proxy_{name}" and labels in head:
                    total += float(value)
        return total

    def wait_delivered(self, target, timeout_s=60):
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.metric("records_delivered_total") >= target:
                return True
            time.sleep(0.2)
        return False

    def stop(self):
        stop(self.proc)


def stop(proc):
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)


# ---- load --------------------------------------------------------------------

def kcat(addr, legacy, records, record_bytes, timeout_s=120, extra=()):
    """kcat -P from a pipe: `records` lines of record_bytes-1 bytes. Legacy:
    librdkafka with api.version.request=false and a 0.9 fallback (Produce v1,
    message format 0); else ApiVersions negotiated (Produce v7, RecordBatch)."""
    args = ["kcat", "-P", "-b", addr, "-t", TOPIC, "-X", "linger.ms=5", "-X", "acks=all"]
    if legacy:
        args += ["-X", "api.version.request=false", "-X", "broker.version.fallback=0.9.0.1"]
    for kv in extra:
        args += ["-X", kv]
    line = b"x" * (record_bytes - 1) + b"\n"
    chunk = line * 1000
    p = subprocess.Popen(args, stdin=subprocess.PIPE, stderr=subprocess.DEVNULL)
    started.append(p)
    deadline = time.monotonic() + timeout_s
    # A write blocks while kcat's queue is full (a stalled upstream): the
    # timer ends kcat at the deadline, which ends the write with EPIPE.
    killer = threading.Timer(timeout_s, p.kill)
    killer.start()
    try:
        for _ in range(records // 1000):
            if time.monotonic() > deadline:
                break
            p.stdin.write(chunk)
        p.stdin.write(line * (records % 1000))
        p.stdin.close()
        p.wait(timeout=max(1, deadline - time.monotonic()))
    except (subprocess.TimeoutExpired, BrokenPipeError):
        p.kill()
        p.wait()
    finally:
        killer.cancel()


def produce_v2_request(correlation_id, partition, value):
    """Produce v2, acks=1, one magic-1 message (CRC32 over magic..value)."""
    body = struct.pack(">bbqi", 1, 0, int(time.time() * 1000), -1) + struct.pack(">i", len(value)) + value
    message = struct.pack(">I", zlib.crc32(body)) + body
    message_set = struct.pack(">qi", 0, len(message)) + message
    topic = TOPIC.encode()
    req = struct.pack(">hhih", 0, 2, correlation_id, 6) + b"chatty"
    req += struct.pack(">hii", 1, 30000, 1) + struct.pack(">h", len(topic)) + topic
    req += struct.pack(">ii", 1, partition) + struct.pack(">i", len(message_set)) + message_set
    return struct.pack(">i", len(req)) + req


def chatty(addr, connections, requests, record_bytes, timeout_s=120):
    """`connections` sockets, each one request in flight; returns errors."""
    host, port = addr.rsplit(":", 1)
    sel = selectors.DefaultSelector()
    value = b"c" * record_bytes
    state = {}
    sent = answered = errors = 0
    for i in range(connections):
        s = socket.create_connection((host, int(port)))
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        state[s] = {"buf": b"", "partition": i % PARTITIONS}
        sel.register(s, selectors.EVENT_READ)
        s.sendall(produce_v2_request(sent, state[s]["partition"], value))
        sent += 1
    deadline = time.monotonic() + timeout_s
    while answered < sent and time.monotonic() < deadline:
        for key, _ in sel.select(timeout=1):
            s, st = key.fileobj, state[key.fileobj]
            data = s.recv(65536)
            if not data:
                raise SystemExit("chatty: the proxy closed a connection")
            st["buf"] += data
            while len(st["buf"]) >= 4:
                size = struct.unpack(">i", st["buf"][:4])[0]
                if len(st["buf"]) < 4 + size:
                    break
                frame, st["buf"] = st["buf"][4:4 + size], st["buf"][4 + size:]
                # correlation id, 1 topic (name), 1 partition: index, error_code
                name_len = struct.unpack(">h", frame[8:10])[0]
                error = struct.unpack(">h", frame[10 + name_len + 8:10 + name_len + 10])[0]
                errors += error != 0
                answered += 1
                if sent < requests:
                    s.sendall(produce_v2_request(sent, st["partition"], value))
                    sent += 1
    for s in state:
        s.close()
    return errors


# ---- measurements ------------------------------------------------------------

SHAPES = {
    # shape: (what the client sends, record bytes)
    "legacy": ("kcat, librdkafka legacy mode (Produce v1, message format 0), linger 5 ms, acks=all", 1024),
    "v2": ("kcat, ApiVersions negotiated (Produce v7, RecordBatch v2), linger 5 ms, acks=all", 1024),
    "chatty": ("64 connections, one 1 KiB record per Produce v2 request (magic 1), acks=1, one request in flight each", 1024),
    "chatty_fast": ("tests/bench's bench_chatty_client (C++): the same requests as chatty, as fast as the proxy answers",
                    1024),
}
CHATTY_BINARIES = [ROOT / "build/release/tests/bench/bench_chatty_client", ROOT / "build/h-ops/tests/bench/bench_chatty_client"]


def cpu_case(proxy, shape, args):
    requests0 = proxy.metric("client_requests_total", 'api="Produce"')
    bytes0 = proxy.metric("received_bytes_total")
    delivered0 = proxy.metric("records_delivered_total")
    cpu0 = proxy.cpu()
    t0 = time.monotonic()
    if shape == "chatty":
        n = args.chatty_requests
        errors = chatty(proxy.addr, 64, n, SHAPES[shape][1])
    elif shape == "chatty_fast":
        n = args.chatty_fast_requests
        out = subprocess.run([str(args.chatty_binary), "--bootstrap", proxy.addr, "--topic", TOPIC, "--connections", "64",
                              "--version", "2", "--acks", "1", "--record-bytes", str(SHAPES[shape][1]), "--count", str(n),
                              "--duration-s", "120"], capture_output=True, text=True, timeout=180)
        errors = 0 if out.returncode == 0 else f"exit {out.returncode}"
    else:
        n = args.records
        kcat(proxy.addr, shape == "legacy", n, SHAPES[shape][1])
        errors = 0
    ok = proxy.wait_delivered(delivered0 + n)
    wall = time.monotonic() - t0
    cpu = proxy.cpu() - cpu0
    requests = proxy.metric("client_requests_total", 'api="Produce"') - requests0
    mb = (proxy.metric("received_bytes_total") - bytes0) / 1e6
    if cpu < 0.2:
        log(f"{shape}: only {cpu:.2f} CPU seconds: the clock ticks every {1 / CLK_TCK:.2f} s, "
            "so use more records for a figure worth reading")
    return {"shape": shape, "records": n, "requests": int(requests), "mb": mb, "cpu_s": cpu, "wall_s": wall,
            "mc_per_mbps": 1000 * cpu / mb, "mc_per_kreqps": 1e6 * cpu / requests,
            "errors": errors, "all_delivered": ok}


def memory_case(work, budget_mib, stalled, args):
    cluster = Cluster(work)
    proxy = Proxy(work, cluster.bootstrap, [f"producer.buffer_memory_bytes={budget_mib * MIB}",
                                            f"listener.max_request_bytes={min(budget_mib, 16) * MIB}",
                                            "upstream.request_timeout_ms=60000"])
    idle_kb = proxy.status_kb("VmRSS")
    peak_buffered = 0.0
    stop_sampling = threading.Event()

    def sample():
        nonlocal peak_buffered
        while not stop_sampling.wait(0.25):
            try:
                peak_buffered = max(peak_buffered, proxy.metric("buffered_bytes"))
            except OSError:
                pass

    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        if stalled:
            kcat(proxy.addr, True, 1000, 1024, timeout_s=30)  # warm: metadata, producer id
            cluster.command("rtt 600000")
            # More than any budget here: the client keeps producing against the stall.
            # kcat's own queue (100,000 messages by default) must exceed the budget.
            kcat(proxy.addr, True, args.stall_records, 1024, timeout_s=args.stall_s,
                 extra=["queue.buffering.max.messages=2000000", "queue.buffering.max.kbytes=2097151"])
        else:
            kcat(proxy.addr, False, args.records, 1024)
            proxy.wait_delivered(args.records)
        if proxy.proc.poll() is not None:
            raise SystemExit(f"the proxy exited ({proxy.proc.returncode}) during the run: "
                             f"{proxy.log_path.read_text()[-1500:]}")
        parked = proxy.metric("requests_parked_total")
        backpressure = proxy.metric("client_share_pauses_total")
        hwm_kb = proxy.status_kb("VmHWM")
    finally:
        stop_sampling.set()
        sampler.join()
        proxy.stop()
        cluster.stop()
    return {"budget_mib": budget_mib, "stalled": stalled, "idle_rss_mib": idle_kb / 1024,
            "peak_rss_mib": hwm_kb / 1024, "peak_buffered_mib": peak_buffered / MIB,
            "parked": int(parked), "share_pauses": int(backpressure)}


def spread(values, fmt="{:.0f}"):
    return f"{fmt.format(statistics.median(values))} ({fmt.format(min(values))}-{fmt.format(max(values))})"


def cpu_runs(work, args, emit):
    results = []
    cluster = Cluster(work)
    proxy = Proxy(work, cluster.bootstrap)
    try:
        kcat(proxy.addr, False, 2000, 1024)  # warm-up: metadata, producer id, allocator
        shapes = [s for s in SHAPES if s != "chatty_fast" or args.chatty_binary]
        for rep in range(args.reps):
            for shape in shapes:
                r = cpu_case(proxy, shape, args)
                r["rep"] = rep + 1
                log(r)
                emit("run " + " ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                                       for k, v in r.items()))
                results.append(r)
    finally:
        proxy.stop()
        cluster.stop()
    emit("")
    emit("| shape | client | records/request | millicores per MB/s | millicores per 1,000 requests/s |")
    emit("|---|---|---|---|---|")
    for shape, (what, _) in SHAPES.items():
        rs = [r for r in results if r["shape"] == shape]
        if not rs:
            continue
        per_req = statistics.median(r["records"] / max(r["requests"], 1) for r in rs)
        emit(f"| {shape} | {what} | {per_req:.1f} | {spread([r['mc_per_mbps'] for r in rs], '{:.2f}')} | "
             f"{spread([r['mc_per_kreqps'] for r in rs])} |")
    return results


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--records", type=int, default=150000)
    ap.add_argument("--chatty-requests", type=int, default=20000)
    ap.add_argument("--chatty-fast-requests", type=int, default=200000)
    ap.add_argument("--chatty-binary", type=pathlib.Path,
                    default=next((b for b in CHATTY_BINARIES if b.exists()), None),
                    help="bench_chatty_client for the chatty_fast shape (default: build/release, else build/h-ops)")
    ap.add_argument("--budgets", default="16,64,256")
    ap.add_argument("--stall-records", type=int, default=400000)
    ap.add_argument("--stall-s", type=float, default=20)
    ap.add_argument("--skip-memory", action="store_true")
    ap.add_argument("--skip-cpu", action="store_true")
    ap.add_argument("--out", type=pathlib.Path)
    args = ap.parse_args()
    for binary in (PROXY, CLUSTER):
        if not binary.exists():
            raise SystemExit(f"{binary} is missing: build the release preset first")
    work = pathlib.Path(tempfile.mkdtemp(prefix="pp-sizing."))
    out = []
    emit = lambda s: (out.append(s), print(s, flush=True))
    try:
        with open("/proc/loadavg") as f:
            load_before = f.read().split()[:3]
        emit(f"# produce-proxy sizing, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
             f"{os.cpu_count()} CPUs, load average {' '.join(load_before)}")
        emit(f"# example config, 3-broker test cluster, topic {TOPIC} with {PARTITIONS} partitions, "
             f"{args.reps} runs per case")
        results = []
        if not args.skip_cpu:
            results = cpu_runs(work, args, emit)

        if not args.skip_memory:
            emit("")
            emit("| buffer_memory_bytes | upstream | idle RSS MiB | peak RSS MiB | peak buffered_bytes MiB | "
                 "requests parked | share pauses |")
            emit("|---|---|---|---|---|---|---|")
            raw = []
            for budget in (int(b) for b in args.budgets.split(",")):
                for stalled in (False, True):
                    rs = []
                    for rep in range(args.reps):
                        r = memory_case(work, budget, stalled, args)
                        log(r)
                        rs.append(r)
                    raw.extend("memory " + " ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                                                    for k, v in r.items()) for r in rs)
                    emit(f"| {budget} MiB | {'stalled (rtt 600000)' if stalled else 'under load (v2, max rate)'} | "
                         f"{spread([r['idle_rss_mib'] for r in rs], '{:.1f}')} | "
                         f"{spread([r['peak_rss_mib'] for r in rs], '{:.1f}')} | "
                         f"{spread([r['peak_buffered_mib'] for r in rs], '{:.1f}')} | "
                         f"{spread([r['parked'] for r in rs])} | {spread([r['share_pauses'] for r in rs])} |")
            emit("")
            for line in raw:
                emit(line)
        with open("/proc/loadavg") as f:
            emit(f"# load average after: {' '.join(f.read().split()[:3])}")
    finally:
        for p in started:
            if p.poll() is None:
                p.kill()
                p.wait()
    shutil.rmtree(work, ignore_errors=True)  # kept when the run failed, for its logs
    if args.out:
        args.out.write_text("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
