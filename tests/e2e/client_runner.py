#!/usr/bin/python3
"""One paced producer client in its own process, as the fault suites run it:
tests/e2e/outage_support.py (ClientProc: the outage and slow-upstream
deadline tests, tests/kafka/outage_deadline_test.py, the outage bench) and
tests/e2e/spool_support.py (Client: the spool's fault and ack tests, the
spool bench). Each suite subclasses ClientProcess with its own defaults.

A client runs as `/usr/bin/python3 client_runner.py client SPEC_JSON` (so
several really run at once, each with its own GIL and librdkafka). It prints
"ready" once it knows its topic's partitions, offers `rate` records/s for
`duration` s, then waits (at most `flush_s`) for every delivery report and
writes SPEC["out"]: per record its outcome (1 acknowledged, an error name,
0 no report) and the wall-clock second it was answered (0: never). Record i
has key "<name>-<i>", goes to partition i % partitions, and its value is
value_of(name, i, value_bytes), so a record read back is known by its key
and checked whole by its value.

SPEC keys: name, kind ("confluent" | "kafka-python"), bootstrap, topic,
partitions, rate, duration (s of sending), conf (librdkafka properties or
KafkaProducer keywords, over the runner's own), client_id (prefix of the
client id), value_bytes, metadata_s (bound on the wait for the topic's
partitions), max_records, flush_s (bound on the wait for the last delivery
reports), out (the results file, set by ClientProcess).

Stdlib, Debian's python3-confluent-kafka and python3-kafka only. Every wait
is bounded in time.
"""
import json
import os
import signal
import subprocess
import sys
import threading
import time

sys.dont_write_bytecode = True  # keep the source tree clean

PYTHON = "/usr/bin/python3"


def value_of(name, i, size):
    """Record i's value: "<name>-<i>-" padded with "x" to `size` bytes."""
    v = "%s-%d-" % (name, i)
    return v + "x" * max(0, size - len(v))


def error_name(e):
    """kafka-python's exception class, marked "(retriable)" when it says so."""
    return type(e).__name__ + (" (retriable)" if getattr(e, "retriable", False) else "")


# ---------------------------------------------------------------------------
# The client process


def _confluent(spec, report):
    """(send, poll) of a confluent-kafka Producer that knows the topic's partitions."""
    from confluent_kafka import Producer
    name, topic, n_parts, size = spec["name"], spec["topic"], int(spec["partitions"]), int(spec["value_bytes"])
    conf = {"bootstrap.servers": spec["bootstrap"], "client.id": spec["client_id"] + name, "acks": "all",
            "queue.buffering.max.messages": 2000000}
    conf.update(spec.get("conf", {}))
    producer = Producer(conf)
    deadline = time.monotonic() + float(spec["metadata_s"])
    while True:
        try:
            md = producer.list_topics(topic, timeout=5).topics.get(topic)
            if md is not None and md.error is None and len(md.partitions) == n_parts:
                break
        except Exception:  # noqa: BLE001 - retried until the deadline
            pass
        if time.monotonic() > deadline:
            raise SystemExit("%s: no metadata for %s" % (name, topic))
        time.sleep(0.2)

    def send(i):
        def cb(err, msg, i=i):
            report(i, None if err is None else err.name())
        while True:
            try:
                producer.produce(topic, key=("%s-%d" % (name, i)).encode(), value=value_of(name, i, size).encode(),
                                 partition=i % n_parts, on_delivery=cb)
                return
            except BufferError:
                producer.poll(0.05)

    return send, producer.poll


def _kafka_python(spec, report):
    """(send, poll) of a kafka-python KafkaProducer that knows the topic's partitions."""
    from kafka import KafkaProducer
    name, topic, n_parts, size = spec["name"], spec["topic"], int(spec["partitions"]), int(spec["value_bytes"])
    kw = dict(bootstrap_servers=spec["bootstrap"].split(","), client_id=spec["client_id"] + name, acks="all",
              linger_ms=5, max_block_ms=10000, buffer_memory=256 << 20)
    kw.update(spec.get("conf", {}))
    if kw.get("api_version") is not None:
        kw["api_version"] = tuple(kw["api_version"])
    producer = KafkaProducer(**kw)
    deadline = time.monotonic() + float(spec["metadata_s"])
    while len(producer.partitions_for(topic) or ()) != n_parts:
        if time.monotonic() > deadline:
            raise SystemExit("%s: no metadata for %s" % (name, topic))
        time.sleep(0.2)

    def send(i):
        try:
            fut = producer.send(topic, key=("%s-%d" % (name, i)).encode(), value=value_of(name, i, size).encode(),
                                partition=i % n_parts)
            fut.add_callback(lambda md, i=i: report(i, None))
            fut.add_errback(lambda e, i=i: report(i, error_name(e)))
        except Exception as e:  # noqa: BLE001 - a send that failed at once is this record's outcome
            report(i, error_name(e))

    return send, time.sleep


def client_main(spec):
    """Runs one paced producer per `spec` (module doc), writes its results and exits."""
    spec = {"client_id": "pp-client-", "value_bytes": 64, "metadata_s": 60, "max_records": 10 ** 8,
            "flush_s": 120, **spec}
    name, rate, max_records = spec["name"], float(spec["rate"]), int(spec["max_records"])
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

    makers = {"confluent": _confluent, "kafka-python": _kafka_python}
    if spec["kind"] not in makers:
        raise SystemExit("unknown client kind %r" % spec["kind"])
    send, poll = makers[spec["kind"]](spec, report)

    sys.stdout.write("ready\n")
    sys.stdout.flush()
    start = time.monotonic()
    t_start = time.time()
    end = start + float(spec["duration"])
    sent = 0
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
    flush_end = sent_end + float(spec["flush_s"])
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
    os._exit(0)  # no close/flush of what is left: the results are written


# ---------------------------------------------------------------------------
# The test's side


class ClientProcess:
    """One client process, started at once. A suite's subclass sets DEFAULTS
    (SPEC keys a spec may leave out) and CONF ({kind: producer settings a
    spec's conf may override}). The results and the client's stderr are files
    in `workdir` named after the client."""

    DEFAULTS = {}
    CONF = {}

    def __init__(self, spec, workdir):
        self.spec = {**self.DEFAULTS, **spec}
        self.spec["conf"] = {**self.CONF.get(self.spec["kind"], {}), **spec.get("conf", {})}
        self.spec["out"] = os.path.join(workdir, "client-%s.json" % spec["name"])
        self.stderr = open(os.path.join(workdir, "client-%s.err" % spec["name"]), "w+")
        self.proc = subprocess.Popen([PYTHON, os.path.abspath(__file__), "client", json.dumps(self.spec)],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=self.stderr,
                                     text=True, start_new_session=True)
        self.ready = False

    def wait_ready(self, timeout=60):
        """True once the client said "ready" (at most `timeout` s)."""
        box = []
        t = threading.Thread(target=lambda: box.append(self.proc.stdout.readline()), daemon=True)
        t.start()
        t.join(timeout)
        self.ready = bool(box) and box[0].strip() == "ready"
        return self.ready

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


if __name__ == "__main__" and len(sys.argv) == 3 and sys.argv[1] == "client":
    client_main(json.loads(sys.argv[2]))
