#!/usr/bin/python3
"""What the spool's fault scenarios share (docs/design/SPOOL.md; the tests
are tests/e2e/spool_faults_test.py and the bench tests/bench/spool_bench.py):
a produce-proxy that can be killed and restarted on the same ports and spool
directory, paced client processes that note when each record was answered,
and the test cluster's log read back to count each client's lost,
duplicated, out-of-order and damaged records.

A client runs as `/usr/bin/python3 spool_support.py client SPEC_JSON` (so the
clients really run at once, each with its own GIL and librdkafka). It prints
"ready" once it knows its topic's partitions, offers `rate` records/s for
`duration` s, then waits (at most `flush_s`) for every delivery report and
writes SPEC["out"]: per record its outcome (1 acknowledged, an error name, 0
no report) and the wall-clock second it was answered. Record i has key
"<name>-<i>", goes to partition i % partitions, and its value is
"<name>-<i>-" padded with "x" to `value_bytes`, so a record read back is
known by its key and checked whole by its value.

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
import threading
import time

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tests", "daemon"))
from daemon_support import TestCluster, free_port, http_request, metric_value  # noqa: E402,F401

PYTHON = "/usr/bin/python3"

# librdkafka (confluent-kafka) settings. LEGACY is kcat's legacy mode
# (`-X api.version.request=false -X broker.version.fallback=0.9.0.1`): Produce
# v1, magic 0, no producer id. Both reconnect within a second of a restart,
# and keep at most 5 requests of at most 200 records per partition in flight,
# which is what bounds a legacy client's resends after a crash.
COMMON = {"reconnect.backoff.ms": 50, "reconnect.backoff.max.ms": 500, "max.in.flight.requests.per.connection": 5,
          "batch.num.messages": 200, "linger.ms": 5, "message.timeout.ms": 300000}
LEGACY = {"api.version.request": False, "broker.version.fallback": "0.9.0.1"}
IDEMPOTENT = {"enable.idempotence": True}
# The most records one legacy request carries (batch.num.messages per
# partition, PARTITIONS partitions) times the requests in flight.
PARTITIONS = 3
LEGACY_IN_FLIGHT_RECORDS = COMMON["batch.num.messages"] * PARTITIONS * COMMON["max.in.flight.requests.per.connection"]


def say(fmt, *args):
    sys.stderr.write("  " + (fmt % args if args else fmt) + "\n")
    sys.stderr.flush()


def value_of(name, i, size):
    v = "%s-%d-" % (name, i)
    return v + "x" * max(0, size - len(v))


# ---------------------------------------------------------------------------
# The client process


def _error_name(e):
    """kafka-python's exception class, marked "(retriable)" when it says so."""
    return type(e).__name__ + (" (retriable)" if getattr(e, "retriable", False) else "")


def _client_main(spec):
    name, rate, n_parts = spec["name"], float(spec["rate"]), int(spec["partitions"])
    size = int(spec.get("value_bytes", 64))
    status, answered = [], []
    lock = threading.Lock()
    counts = {"done": 0}

    def report(i, err_name):
        with lock:
            if status[i] != 0:
                return
            status[i] = 1 if err_name is None else err_name
            answered[i] = round(time.time(), 3)
            counts["done"] += 1

    if spec["kind"] == "confluent":
        from confluent_kafka import Producer
        conf = {"bootstrap.servers": spec["bootstrap"], "client.id": "pp-spool-" + name, "acks": "all",
                "queue.buffering.max.messages": 2000000, "queue.buffering.max.kbytes": 2097151}
        conf.update(spec.get("conf", {}))
        producer = Producer(conf)
        deadline = time.monotonic() + 60
        while True:
            try:
                md = producer.list_topics(spec["topic"], timeout=5).topics.get(spec["topic"])
                if md is not None and md.error is None and len(md.partitions) == n_parts:
                    break
            except Exception:  # noqa: BLE001 - retried until the deadline
                pass
            if time.monotonic() > deadline:
                raise SystemExit("%s: no metadata for %s" % (name, spec["topic"]))
            time.sleep(0.2)

        def send(i):
            def cb(err, msg, i=i):
                report(i, None if err is None else err.name())
            while True:
                try:
                    producer.produce(spec["topic"], key=("%s-%d" % (name, i)).encode(),
                                     value=value_of(name, i, size).encode(), partition=i % n_parts, on_delivery=cb)
                    return
                except BufferError:
                    producer.poll(0.05)

        def poll(t):
            producer.poll(t)
    elif spec["kind"] == "kafka-python":
        from kafka import KafkaProducer
        kw = dict(bootstrap_servers=spec["bootstrap"].split(","), client_id="pp-spool-" + name, acks="all",
                  linger_ms=5, max_block_ms=10000, buffer_memory=256 << 20, reconnect_backoff_max_ms=500)
        kw.update(spec.get("conf", {}))
        if kw.get("api_version") is not None:
            kw["api_version"] = tuple(kw["api_version"])
        producer = KafkaProducer(**kw)
        deadline = time.monotonic() + 60
        while len(producer.partitions_for(spec["topic"]) or ()) != n_parts:
            if time.monotonic() > deadline:
                raise SystemExit("%s: no metadata for %s" % (name, spec["topic"]))
            time.sleep(0.2)

        def send(i):
            try:
                fut = producer.send(spec["topic"], key=("%s-%d" % (name, i)).encode(),
                                    value=value_of(name, i, size).encode(), partition=i % n_parts)
                fut.add_callback(lambda md, i=i: report(i, None))
                fut.add_errback(lambda e, i=i: report(i, _error_name(e)))
            except Exception as e:  # noqa: BLE001 - a send that failed at once is this record's outcome
                report(i, _error_name(e))

        def poll(t):
            time.sleep(t)
    else:
        raise SystemExit("unknown client kind %r" % spec["kind"])

    sys.stdout.write("ready\n")
    sys.stdout.flush()
    start = time.monotonic()
    t_start = time.time()
    end = start + float(spec["duration"])
    sent = 0
    max_records = int(spec.get("max_records", 10 ** 8))
    while time.monotonic() < end and sent < max_records:
        target = min(max_records, int((time.monotonic() - start) * rate))
        while sent < target:
            with lock:
                status.append(0)
                answered.append(0)
            send(sent)
            sent += 1
        poll(0.005)
    sent_end = time.monotonic()
    flush_end = sent_end + float(spec.get("flush_s", 120))
    while time.monotonic() < flush_end:
        with lock:
            if counts["done"] >= sent:
                break
        poll(0.1)
    with lock:
        result = {"name": name, "sent": sent, "status": list(status), "answered": list(answered),
                  "t_start": t_start, "send_seconds": sent_end - start, "flush_seconds": time.monotonic() - sent_end}
    with open(spec["out"] + ".tmp", "w") as f:
        json.dump(result, f)
    os.rename(spec["out"] + ".tmp", spec["out"])
    sys.stdout.flush()
    os._exit(0)


class Client:
    """One paced client process. spec: name, kind ("confluent" |
    "kafka-python"), bootstrap, topic, partitions, rate, duration, value_bytes,
    conf, flush_s, max_records."""

    def __init__(self, spec, workdir):
        self.spec = dict(spec)
        self.spec.setdefault("partitions", PARTITIONS)
        self.spec["out"] = os.path.join(workdir, "client-%s.json" % spec["name"])
        self.stderr = open(os.path.join(workdir, "client-%s.err" % spec["name"]), "w+")
        self.proc = subprocess.Popen([PYTHON, os.path.abspath(__file__), "client", json.dumps(self.spec)],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=self.stderr,
                                     text=True, start_new_session=True)

    def wait_ready(self, timeout=90):
        box = []
        t = threading.Thread(target=lambda: box.append(self.proc.stdout.readline()), daemon=True)
        t.start()
        t.join(timeout)
        if not (box and box[0].strip() == "ready"):
            raise AssertionError("client %s not ready: %s" % (self.spec["name"], self.err_tail()))

    def err_tail(self, n=3000):
        self.stderr.flush()
        with open(self.stderr.name, errors="replace") as f:
            return f.read()[-n:]

    def finish(self, timeout):
        """The results (waits at most `timeout` s, then kills the process)."""
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)
        if not os.path.exists(self.spec["out"]):
            raise AssertionError("client %s wrote no results (exit %s): %s" % (
                self.spec["name"], self.proc.returncode, self.err_tail()))
        with open(self.spec["out"]) as f:
            return json.load(f)

    def kill(self):
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait(timeout=10)
        self.proc.stdout.close()
        self.stderr.close()


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


if __name__ == "__main__" and len(sys.argv) == 3 and sys.argv[1] == "client":
    _client_main(json.loads(sys.argv[2]))
