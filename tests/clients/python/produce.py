#!/usr/bin/python3
"""Python producer clients behind the uniform CLI (tests/clients/README.md).

Runs with Debian's /usr/bin/python3 and its packages python3-kafka (module
``kafka``, kafka-python 2.0.2) and python3-confluent-kafka (``confluent_kafka``
1.7.0 on Debian's librdkafka). --client picks the client:

  kafka-python-0.9   KafkaProducer(api_version=(0, 9))   Produce v1, magic 0
  kafka-python-0.10  KafkaProducer(api_version=(0, 10))  Produce v2, magic 1
  kafka-python-0.11  KafkaProducer(api_version=(0, 11))  Produce v3, magic 2
  kafka-python       KafkaProducer() (probes the broker's version)
  confluent          confluent_kafka.Producer, librdkafka defaults
  confluent-idempotent  the same with enable.idempotence=true
"""

import argparse
import ast
import json
import sys
import threading
import time

CLIENTS = {
    "kafka-python-0.9": ("kafka-python", (0, 9)),
    "kafka-python-0.10": ("kafka-python", (0, 10)),
    "kafka-python-0.11": ("kafka-python", (0, 11)),
    "kafka-python": ("kafka-python", None),
    "confluent": ("confluent", False),
    "confluent-idempotent": ("confluent", True),
    "confluent-pypi": ("confluent", False),
}


def parse_args(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("--client", required=True, choices=sorted(CLIENTS))
    ap.add_argument("--bootstrap", required=True)
    ap.add_argument("--topic", required=True)
    ap.add_argument("--count", type=int, required=True)
    ap.add_argument("--partitions", type=int, default=0)
    ap.add_argument("--compression", default="none", choices=["none", "gzip", "snappy", "lz4", "zstd"])
    ap.add_argument("--acks", default="all", choices=["0", "1", "all"])
    ap.add_argument("--key-prefix", default="k")
    ap.add_argument("--headers", action="store_true")
    ap.add_argument("--timeout-s", type=float, default=60.0)
    ap.add_argument("--value-size", type=int, default=32)
    ap.add_argument("--timestamp-base-ms", type=int, default=1700000000000)
    ap.add_argument("--extra", action="append", default=[], metavar="K=V")
    a = ap.parse_args(argv)
    a.extras = {}
    for kv in a.extra:
        k, sep, v = kv.partition("=")
        if not sep or not k:
            ap.error("--extra wants k=v, got %r" % kv)
        a.extras[k] = v
    return a


class Results:
    """One JSON line per record, a summary, the deadline."""

    def __init__(self, a):
        self.a = a
        self.lock = threading.Lock()
        self.reported = [False] * a.count
        self.errors = [None] * a.count
        self.acked = 0
        self.failed = 0
        self.first_error = None
        self.all_done = threading.Event()
        if a.count == 0:
            self.all_done.set()
        self.deadline = time.monotonic() + a.timeout_s
        self.headers_sent = False
        self.timestamps_sent = False

    def budget(self, fraction):
        return max(1.0, self.a.timeout_s * fraction)

    def remaining(self):
        return max(0.0, self.deadline - time.monotonic())

    def key(self, i):
        return "%s-%d" % (self.a.key_prefix, i)

    def value(self, i):
        v = "v-%d-" % i
        return v + "x" * max(0, self.a.value_size - len(v))

    def partition(self, i):
        return i % self.a.partitions if self.a.partitions > 0 else None

    def shown_partition(self, i):
        p = self.partition(i)
        return -1 if p is None else p

    def timestamp(self, i):
        return self.a.timestamp_base_ms + i

    def report(self, i, partition, offset, error):
        with self.lock:
            if self.reported[i]:
                return
            self.reported[i] = True
            self.errors[i] = error
            if error is None:
                self.acked += 1
            else:
                self.failed += 1
                if self.first_error is None:
                    self.first_error = error
            sys.stdout.write(json.dumps({"i": i, "partition": partition, "offset": offset, "error": error}, separators=(",", ":")) + "\n")
            sys.stdout.flush()
            if self.acked + self.failed == self.a.count:
                self.all_done.set()

    def ok(self, i, partition, offset):
        self.report(i, partition, offset if offset is not None and offset >= 0 else -1, None)

    def fail(self, i, partition, error):
        self.report(i, partition if partition is not None else -1, -1, error)

    def error_of(self, i):
        with self.lock:
            return self.errors[i]

    def fail_unreported(self, error):
        for i in range(self.a.count):
            self.fail(i, self.shown_partition(i), error)

    def await_all(self):
        return self.all_done.wait(self.remaining())

    def finish(self):
        with self.lock:
            sys.stdout.write(json.dumps({
                "done": True, "acked": self.acked, "failed": self.failed, "client": self.a.client,
                "first_error": self.first_error, "headers_sent": self.headers_sent,
                "timestamps_sent": self.timestamps_sent}, separators=(",", ":")) + "\n")
            sys.stdout.flush()
            import os
            os._exit(0 if self.acked == self.a.count else 1)


def bounded(fn, seconds):
    t = threading.Thread(target=fn, daemon=True)
    t.start()
    t.join(seconds)


def error_text(e):
    s = str(e)
    name = type(e).__name__
    return s if s.startswith(name) else "%s: %s" % (name, s) if s else name


def extra_value(v):
    try:
        return ast.literal_eval(v)
    except (ValueError, SyntaxError):
        return v


def run_kafka_python(a, r, api_version):
    from kafka import KafkaProducer

    kw = dict(
        bootstrap_servers=a.bootstrap.split(","),
        client_id="pp-tests-" + a.client,
        acks={"0": 0, "1": 1, "all": "all"}[a.acks],
        compression_type=None if a.compression == "none" else a.compression,
        linger_ms=5,
        retries=0,
        request_timeout_ms=int(r.budget(0.4) * 1000),
        max_block_ms=int(r.budget(0.5) * 1000),
        api_version_auto_timeout_ms=int(r.budget(0.3) * 1000),
    )
    if api_version is not None:
        kw["api_version"] = api_version
    for k, v in a.extras.items():
        kw[k] = extra_value(v)
    try:
        producer = KafkaProducer(**kw)
    except Exception as e:  # NoBrokersAvailable, codec not installed, bad config
        r.fail_unreported(error_text(e))
        r.finish()
    version = tuple(producer.config["api_version"])
    r.timestamps_sent = version >= (0, 10)
    r.headers_sent = a.headers and version >= (0, 11)
    stop = None
    for i in range(a.count):
        if stop is None and r.remaining() <= 0:
            stop = "deadline of --timeout-s passed before the record was sent"
        if stop is not None:
            r.fail(i, r.shown_partition(i), "not sent: " + stop)
            continue
        headers = None
        if r.headers_sent:
            headers = [("i", str(i).encode()), ("client", a.client.encode())]
        t0 = time.monotonic()
        try:
            fut = producer.send(a.topic, value=r.value(i).encode(), key=r.key(i).encode(),
                                partition=r.partition(i), timestamp_ms=r.timestamp(i), headers=headers)
            fut.add_callback(lambda md, i=i: r.ok(i, md.partition, md.offset))
            fut.add_errback(lambda e, i=i: r.fail(i, r.shown_partition(i), error_text(e)))
        except Exception as e:
            r.fail(i, r.shown_partition(i), error_text(e))
        if time.monotonic() - t0 > 1.0 and r.error_of(i) is not None:
            stop = r.error_of(i)  # blocked on metadata and failed: the rest would too
    if not r.await_all():
        r.fail_unreported("timed out after %g s waiting for the delivery report" % a.timeout_s)
    bounded(lambda: producer.close(timeout=0), 2.0)
    r.finish()


def run_confluent(a, r, idempotent):
    from confluent_kafka import KafkaException, Producer

    last_client_error = []

    def on_error(err):
        last_client_error[:] = ["%s: %s" % (err.name(), err.str())]

    conf = {
        "bootstrap.servers": a.bootstrap,
        "client.id": "pp-tests-" + a.client,
        "acks": "all" if a.acks == "all" else a.acks,
        "compression.type": a.compression,
        "linger.ms": 5,
        "message.timeout.ms": int(r.budget(0.7) * 1000),
        "socket.timeout.ms": int(r.budget(0.4) * 1000),
        "error_cb": on_error,
    }
    if idempotent:
        conf["enable.idempotence"] = True
    conf.update(a.extras)
    try:
        p = Producer(conf)
    except (KafkaException, ValueError, TypeError) as e:
        r.fail_unreported(error_text(e))
        r.finish()
    r.timestamps_sent = True  # librdkafka drops them below magic 1 by itself
    r.headers_sent = a.headers

    def delivered(i):
        def cb(err, msg):
            if err is None:
                r.ok(i, msg.partition(), msg.offset())  # offset < 0 (acks=0) -> -1
            else:
                text = "%s: %s" % (err.name(), err.str())
                if last_client_error and last_client_error[0] != text:
                    text += " (last client error: %s)" % last_client_error[0]
                part = msg.partition() if msg is not None else None
                r.fail(i, part if part is not None and part >= 0 else r.shown_partition(i), text)
        return cb

    for i in range(a.count):
        kw = dict(value=r.value(i), key=r.key(i), timestamp=r.timestamp(i), on_delivery=delivered(i))
        if r.partition(i) is not None:
            kw["partition"] = r.partition(i)
        if a.headers:
            kw["headers"] = [("i", str(i).encode()), ("client", a.client.encode())]
        while True:
            try:
                p.produce(a.topic, **kw)
                break
            except BufferError:
                if r.remaining() <= 0:
                    r.fail(i, r.shown_partition(i), "not sent: local queue full until the deadline")
                    break
                p.poll(0.1)
            except KafkaException as e:
                r.fail(i, r.shown_partition(i), error_text(e))
                break
        try:
            p.poll(0)
        except KafkaException as e:
            r.fail_unreported(error_text(e))
            break
    while not r.all_done.is_set() and r.remaining() > 0:
        try:
            p.poll(min(0.1, r.remaining()))
        except KafkaException as e:
            # A fatal error (e.g. the idempotent producer finds no broker that
            # supports it): poll raises it, and nothing left will be delivered.
            r.fail_unreported(error_text(e))
    if not r.all_done.is_set():
        why = " (last client error: %s)" % last_client_error[0] if last_client_error else ""
        r.fail_unreported("timed out after %g s waiting for the delivery report%s" % (a.timeout_s, why))
    r.finish()  # os._exit: no purge/flush of what is left


def main():
    a = parse_args(sys.argv[1:])
    r = Results(a)
    kind, arg = CLIENTS[a.client]
    try:
        if kind == "kafka-python":
            run_kafka_python(a, r, arg)
        else:
            run_confluent(a, r, arg)
    except Exception as e:  # keep the output contract even on a bug or import error
        r.fail_unreported("client crashed: " + error_text(e))
        r.finish()


if __name__ == "__main__":
    main()
