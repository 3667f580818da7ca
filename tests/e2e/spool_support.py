#!/usr/bin/python3
"""What the spool's fault scenarios share (docs/design/SPOOL.md; the tests
are tests/e2e/spool_faults_test.py and the bench tests/bench/spool_bench.py):
a produce-proxy that can be killed and restarted on the same ports and spool
directory, paced client processes that note when each record was answered,
and the test cluster's log read back to count each client's lost,
duplicated, out-of-order and damaged records.

A client is a process of tests/e2e/client_runner.py (Client: so the clients
really run at once, each with its own GIL and librdkafka). It offers `rate`
records/s for `duration` s, then waits (at most `flush_s`) for every delivery
report; its results give per record its outcome (1 acknowledged, an error
name, 0 no report) and the wall-clock second it was answered. Record i has
key "<name>-<i>", goes to partition i % partitions, and its value is
value_of(name, i, value_bytes), so a record read back is known by its key
and checked whole by its value.

Stdlib, Debian's python3-confluent-kafka and python3-kafka, kcat. Every wait
is bounded in time; everything binds to 127.0.0.1.
"""
import collections
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(REPO, "tests", "daemon"))
from daemon_support import TestCluster, free_port, http_request, metric_value  # noqa: E402,F401
from client_runner import ClientProcess, value_of  # noqa: E402,F401


# librdkafka (confluent-kafka) settings. LEGACY is kcat's legacy mode
# (`-X api.version.request=false -X broker.version.fallback=0.9.0.1`): Produce
# v1, magic 0, no producer id. Both reconnect within a second of a restart,
# and keep at most 5 requests of at most 200 records per partition in flight,
# which is what bounds a legacy client's resends after a crash.
COMMON = {"reconnect.backoff.ms": 50, "reconnect.backoff.max.ms": 500, "max.in.flight.requests.per.connection": 5,
          "batch.num.messages": 200, "linger.ms": 5, "message.timeout.ms": 300000}
LEGACY = {"api.version.request": False, "broker.version.fallback": "0.9.0.1"}
IDEMPOTENT = {"enable.idempotence": True}
SPOOL_RECORDS = "produce_proxy_spool_records"  # the gauge of records the spool holds
# The most records one legacy request carries (batch.num.messages per
# partition, PARTITIONS partitions) times the requests in flight.
PARTITIONS = 3
LEGACY_IN_FLIGHT_RECORDS = COMMON["batch.num.messages"] * PARTITIONS * COMMON["max.in.flight.requests.per.connection"]


def say(fmt, *args):
    sys.stderr.write("  " + (fmt % args if args else fmt) + "\n")
    sys.stderr.flush()


# ---------------------------------------------------------------------------
# The client processes (tests/e2e/client_runner.py)


class Client(ClientProcess):
    """One paced client process (client_runner.py). spec: name, kind
    ("confluent" | "kafka-python"), bootstrap, topic, partitions (default
    PARTITIONS), rate, duration, value_bytes (default 64), conf, flush_s,
    max_records. wait_ready(timeout) raises AssertionError if it does not get
    ready."""

    DEFAULTS = {"client_id": "pp-spool-", "partitions": PARTITIONS, "value_bytes": 64, "metadata_s": 60}
    CONF = {"confluent": {"queue.buffering.max.kbytes": 2097151},
            "kafka-python": {"reconnect_backoff_max_ms": 500}}

    def wait_ready(self, timeout=90):
        if not super().wait_ready(timeout):
            raise AssertionError("client %s not ready: %s" % (self.spec["name"], self.err_tail()))


def start_clients(specs, workdir):
    clients = [Client(s, workdir) for s in specs]
    try:
        for c in clients:
            c.wait_ready()
    except BaseException:
        for c in clients:
            c.kill()
        raise
    return clients


# ---------------------------------------------------------------------------
# The proxy: same ports and spool directory across restarts


class SpoolProxy:
    """produce-proxy in front of `bootstrap`, restartable on the same listener
    and metrics ports. `spool` is a dict of [spool] keys (None: no spool);
    `extra` more TOML. Every incarnation's log is kept in `logs`."""

    def __init__(self, binary, bootstrap, workdir, spool=None, extra="", name="proxy"):
        self.binary, self.workdir, self.name = binary, workdir, name
        self.port, self.metrics_port = free_port(), free_port()
        self.bootstrap = "127.0.0.1:%d" % self.port
        servers = ",".join('"%s"' % b for b in bootstrap.split(","))
        text = ('[listener]\naddress = "127.0.0.1:%d"\n[upstream]\nbootstrap_servers = [%s]\n'
                '[metrics]\naddress = "127.0.0.1:%d"\n[log]\nlevel = "info"\n' % (self.port, servers,
                                                                                 self.metrics_port))
        if spool is not None:
            text += "[spool]\n" + "".join("%s = %s\n" % (k, json.dumps(v)) for k, v in spool.items())
        text += extra
        self.config = os.path.join(workdir, "%s.toml" % name)
        with open(self.config, "w") as f:
            f.write(text)
        self.proc = None
        self.logs = []       # paths, one per incarnation
        self.exits = []      # (signal or "exit", return code) per incarnation

    def start(self, wait=True, timeout=60):
        path = os.path.join(self.workdir, "%s.%d.log" % (self.name, len(self.logs)))
        self.logs.append(path)
        with open(path, "w") as log:
            self.proc = subprocess.Popen([self.binary, "--config", self.config], stdout=log,
                                         stderr=subprocess.STDOUT, start_new_session=True)
        if wait and not self.wait_listening(timeout):
            raise AssertionError("%s does not listen (exit %s):\n%s" % (self.name, self.proc.poll(),
                                                                         self.log_text()[-4000:]))
        return self

    def wait_listening(self, timeout):
        """True once the client listener accepts a connection."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return False
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return True
            except OSError:
                time.sleep(0.05)
        return False

    def wait_log(self, text, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if text in self.current_log():
                return True
            time.sleep(0.1)
        return False

    def current_log(self):
        with open(self.logs[-1], errors="replace") as f:
            return f.read()

    def log_text(self):
        out = []
        for i, p in enumerate(self.logs):
            with open(p, errors="replace") as f:
                out.append("---- %s incarnation %d ----\n%s" % (self.name, i, f.read()))
        return "\n".join(out)

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def kill9(self):
        rc = None
        if self.alive():
            self.proc.send_signal(signal.SIGKILL)
            rc = self.proc.wait(timeout=10)
        self.exits.append(("SIGKILL", rc))

    def terminate(self, timeout=90):
        """SIGTERM; the exit code (None if it had to be killed after `timeout`)."""
        if not self.alive():
            rc = self.proc.returncode if self.proc else None
            self.exits.append(("gone", rc))
            return rc
        self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)
            rc = None
        self.exits.append(("SIGTERM", rc))
        return rc

    def wait_drained(self, timeout, every=0.5):
        """Polls produce_proxy_spool_records every `every` s until it is 0 (at
        most `timeout` s); returns 0 then, else the last value scraped (None:
        no answer)."""
        deadline = time.monotonic() + timeout
        value = None
        while time.monotonic() < deadline:
            value = self.scrape(SPOOL_RECORDS)
            if value == 0:
                return 0
            time.sleep(every)
        return value

    def scrape(self, name):
        try:
            status, body = http_request(self.metrics_port, "/metrics", timeout=5)
        except OSError:
            return None
        return metric_value(body, name) if status == 200 else None

    def metrics_text(self):
        try:
            return http_request(self.metrics_port, "/metrics", timeout=5)[1]
        except OSError:
            return ""

    def readyz(self):
        try:
            return http_request(self.metrics_port, "/readyz", timeout=5)[0]
        except OSError:
            return None


# ---------------------------------------------------------------------------
# Reading back and counting


def read_log(bootstrap, topic, timeout=180):
    """[(partition, offset, key, value)] of `topic`, read to its end by kcat."""
    out = subprocess.run(["timeout", str(timeout), "kcat", "-C", "-q", "-b", bootstrap, "-t", topic, "-o",
                          "beginning", "-e", "-f", "%p\t%o\t%k\t%s\n", "-X", "fetch.message.max.bytes=1048576"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, errors="replace")
    if out.returncode != 0:
        raise AssertionError("kcat -C %s exited %d: %s" % (topic, out.returncode, out.stderr[-2000:]))
    rows = []
    for line in out.stdout.splitlines():
        parts = line.split("\t", 3)
        if len(parts) == 4:
            rows.append((int(parts[0]), int(parts[1]), parts[2], parts[3]))
    return rows


def count(result, rows, value_bytes):
    """A client's numbers: its results against its topic's log rows."""
    name = result["name"]
    status = result["status"]
    sent = len(status)
    acked = sum(1 for v in status if v == 1)
    unreported = sum(1 for v in status if v == 0)
    errors = collections.Counter(v for v in status if v not in (0, 1))
    copies = collections.Counter()
    strangers = damaged = 0
    order_breaks = 0
    last_first = {}
    for p, _, key, value in rows:
        prefix, _, num = key.rpartition("-")
        if prefix != name or not num.isdigit() or int(num) >= sent:
            strangers += 1
            continue
        i = int(num)
        if value != value_of(name, i, value_bytes) or p != i % PARTITIONS:
            damaged += 1
        copies[i] += 1
        if copies[i] == 1:  # first copies of a partition appear in the order sent
            if last_first.get(p, -1) > i:
                order_breaks += 1
            last_first[p] = i
    lost = [i for i, v in enumerate(status) if v == 1 and copies[i] == 0]
    dups = sum(c - 1 for c in copies.values() if c > 1)
    return {"client": name, "sent": sent, "acked": acked, "failed": sum(errors.values()), "unreported": unreported,
            "in_log": len(copies), "log_rows": len(rows), "duplicates": dups, "lost_acked": len(lost),
            "lost_examples": ["%s-%d" % (name, i) for i in lost[:5]], "lost_keys": ["%s-%d" % (name, i) for i in lost],
            "strangers": strangers, "damaged": damaged, "order_breaks": order_breaks,
            "errors": dict(errors.most_common(4))}


def table(rows):
    head = ("client", "sent", "acked", "failed", "no report", "in log", "log rows", "duplicates", "lost acked",
            "out of order", "damaged")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        lines.append("| %s | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d |" % (
            r["client"], r["sent"], r["acked"], r["failed"], r["unreported"], r["in_log"], r["log_rows"],
            r["duplicates"], r["lost_acked"], r["order_breaks"], r["damaged"]))
    errs = ["%s: %s" % (r["client"], r["errors"]) for r in rows if r["errors"]]
    return "\n".join(lines) + (("\nclient errors: " + "; ".join(errs)) if errs else "")


def answer_gaps(result, t0, t1):
    """(records answered OK within [t0, t1], the longest stretch in it with no
    answer at all, s): how a client was served during an outage."""
    times = sorted(t for t, s in zip(result["answered"], result["status"]) if t and t0 <= t <= t1)
    ok = sum(1 for t, s in zip(result["answered"], result["status"]) if s == 1 and t and t0 <= t <= t1)
    gap, prev = 0.0, t0
    for t in times + [t1]:
        gap = max(gap, t - prev)
        prev = t
    return ok, gap


def keep_dir():
    """PP_SPOOL_KEEP=DIR keeps the logs and spool directories of a run."""
    return os.environ.get("PP_SPOOL_KEEP")


def workdir(prefix):
    keep = keep_dir()
    if keep:
        os.makedirs(keep, exist_ok=True)
        return tempfile.mkdtemp(prefix=prefix, dir=keep)
    return tempfile.mkdtemp(prefix=prefix)

