#!/usr/bin/env python3
"""Drives one real Kafka producer client with a uniform command line and output.

  tests/clients/run_client.py CLIENT --bootstrap HOST:PORT --topic T --count N
      [--partitions P] [--compression none|gzip|snappy|lz4|zstd] [--acks 0|1|all]
      [--key-prefix K] [--headers] [--timeout-s S] [--value-size B]
      [--timestamp-base-ms MS] [--extra k=v ...]

  tests/clients/run_client.py --list

Record i has key "<K>-<i>", value "v-<i>-" padded with "x" to B bytes
(default 32), partition i % P when --partitions is given (else the client's
partitioner), timestamp MS + i where the client can send one, and headers
i=<i>, client=<CLIENT> with --headers where it can send them.

Stdout: exactly one JSON line per record, ordered by i,
  {"i":i,"partition":p,"offset":o,"error":null|"<the client's error text>"}
then one summary line
  {"done":true,"acked":n,"failed":m,"client":"...","first_error":null|"...",
   "headers_sent":bool,"timestamps_sent":bool,"exit":<the client's exit code>}
Exit 0 only when every record was acked; 1 when some failed; 3 when the client
could not be fetched or built. Never hangs: the client gets --timeout-s for its
own deadline and is killed (and the missing records reported) a grace period
later. The clients are fetched and built on first use by fetch_clients.sh.
See tests/clients/README.md.
"""

import argparse
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CACHE = os.path.join(os.environ.get("PP_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "produce-proxy"),
                     "clients")
# Time a client may take beyond --timeout-s (JVM start, close) before it is killed.
GRACE_S = 15.0

# name -> (fetch part, description)
CLIENTS = {
    "java-0.9": ("java-0.9", "kafka-clients 0.9.0.1: Produce v1, magic 0, no ApiVersions"),
    "java-0.10": ("java-0.10", "kafka-clients 0.10.2.2: ApiVersions, Produce v2, magic 1"),
    "java-0.10.0": ("java-0.10.0", "kafka-clients 0.10.0.1: no ApiVersions, Produce v2, magic 1, SaslHandshake v0"),
    "java-4": ("java-4", "kafka-clients 4.4.0: idempotent by default, Produce v3+ (record batches, magic 2)"),
    "sarama-0.8.2": ("go", "IBM/sarama v1.61.1, Config.Version 0.8.2.0: Produce v0, magic 0"),
    "sarama-0.10.0": ("go", "IBM/sarama v1.61.1, Config.Version 0.10.0.0: Produce v2, magic 1"),
    "sarama": ("go", "IBM/sarama v1.61.1, default Config.Version (2.8.0.0): Produce v9, magic 2"),
    "franz-go": ("go", "twmb/franz-go v1.22.3 kgo: idempotent by default, negotiates by ApiVersions"),
    "kafka-python-0.9": ("python", "kafka-python 2.0.2, api_version=(0,9): Produce v1, magic 0"),
    "kafka-python-0.10": ("python", "kafka-python 2.0.2, api_version=(0,10): Produce v2, magic 1"),
    "kafka-python-0.11": ("python", "kafka-python 2.0.2, api_version=(0,11): Produce v3, magic 2"),
    "kafka-python": ("python", "kafka-python 2.0.2, api_version probed from the broker"),
    "confluent": ("python", "confluent-kafka 1.7.0 on librdkafka (Debian), defaults (not idempotent)"),
    "confluent-idempotent": ("python", "confluent-kafka 1.7.0 on librdkafka, enable.idempotence=true"),
    "confluent-pypi": ("python-pypi", "confluent-kafka 2.16.1 from PyPI (its bundled librdkafka), defaults"),
    "kafkajs": ("node", "kafkajs 2.2.4 (npm), defaults: not idempotent, Produce v7, magic 2"),
    "kafkajs-idempotent": ("node", "kafkajs 2.2.4 (npm), idempotent: true: InitProducerId v1, Produce v7"),
}


def parse_args(argv):
    if argv and argv[0] == "--list":
        for name, (_, desc) in CLIENTS.items():
            print("%-22s %s" % (name, desc))
        sys.exit(0)
    ap = argparse.ArgumentParser(description="Run one real Kafka producer client (tests/clients/README.md).")
    ap.add_argument("client", choices=list(CLIENTS))
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
    ap.add_argument("--extra", action="append", default=[], metavar="K=V",
                    help="client-native option: a Java producer property, a librdkafka property, a "
                         "KafkaProducer keyword (kafka-python), or version=/idempotent= (sarama), idempotent= (franz-go), "
                         "idempotent=/batch=/log= (kafkajs)")
    a = ap.parse_args(argv)
    if a.count < 0 or a.partitions < 0 or a.timeout_s <= 0:
        ap.error("--count and --partitions must be >= 0, --timeout-s > 0")
    for kv in a.extra:
        if "=" not in kv or kv.startswith("="):
            ap.error("--extra wants k=v, got %r" % kv)
    return a


def common_flags(a):
    f = ["--client", a.client, "--bootstrap", a.bootstrap, "--topic", a.topic, "--count", str(a.count),
         "--partitions", str(a.partitions), "--compression", a.compression, "--acks", a.acks,
         "--key-prefix", a.key_prefix, "--timeout-s", repr(a.timeout_s), "--value-size", str(a.value_size),
         "--timestamp-base-ms", str(a.timestamp_base_ms)]
    if a.headers:
        f.append("--headers")
    for kv in a.extra:
        f += ["--extra", kv]
    return f


def command(a):
    part = CLIENTS[a.client][0]
    if part.startswith("java-"):
        d = os.path.join(CACHE, part)
        cp = os.path.join(d, "classes") + os.pathsep + os.path.join(d, "lib", "*")
        return ["java", "-Xmx128m", "-Xss512k", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
                "-cp", cp, "Produce"] + common_flags(a)
    if part == "go":
        exe = "franz-produce" if a.client == "franz-go" else "sarama-produce"
        return [os.path.join(CACHE, "go", "bin", exe)] + common_flags(a)
    if part == "node":
        return ["node", os.path.join(HERE, "node", "produce.js")] + common_flags(a)
    if part == "python-pypi":  # the PyPI module first, Debian's kafka modules beside it
        site = os.path.join(CACHE, "python-pypi", "site")
        return ["env", "PYTHONPATH=" + site, "/usr/bin/python3", os.path.join(HERE, "python", "produce.py")] + \
            common_flags(a)
    return ["/usr/bin/python3", os.path.join(HERE, "python", "produce.py")] + common_flags(a)


def emit(results, a, summary, exit_code, extra_error=None):
    acked = failed = 0
    first_lowest = None
    for i in range(a.count):
        rec = results.get(i)
        if rec is None:
            rec = {"i": i, "partition": i % a.partitions if a.partitions else -1, "offset": -1,
                   "error": extra_error or "no delivery report from the client"}
        if rec.get("error") is None:
            acked += 1
        else:
            failed += 1
            if first_lowest is None:
                first_lowest = rec["error"]
        print(json.dumps({"i": i, "partition": rec.get("partition", -1), "offset": rec.get("offset", -1),
                          "error": rec.get("error")}, separators=(",", ":")))
    first = (summary or {}).get("first_error") or (extra_error if failed and extra_error else None) or first_lowest
    print(json.dumps({"done": True, "acked": acked, "failed": failed, "client": a.client,
                      "first_error": first if failed else None,
                      "headers_sent": bool((summary or {}).get("headers_sent", False)),
                      "timestamps_sent": bool((summary or {}).get("timestamps_sent", False)),
                      "exit": exit_code}, separators=(",", ":")))
    sys.stdout.flush()
    return 0 if acked == a.count and exit_code == 0 else 1


def main():
    a = parse_args(sys.argv[1:])
    part = CLIENTS[a.client][0]
    fetch = subprocess.run([os.path.join(HERE, "fetch_clients.sh"), part], stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True, env=dict(os.environ, PP_FETCH_QUIET="1"))
    if fetch.returncode != 0:
        sys.stderr.write(fetch.stderr)
        lines = [l for l in fetch.stderr.strip().splitlines() if l.strip()]
        emit({}, a, None, 3, "client not available: " + (lines[-1] if lines else "fetch_clients.sh failed"))
        sys.exit(3)

    cmd = command(a)
    env = None
    if part == "node":  # kafkajs is installed into the cache, not next to produce.js
        env = dict(os.environ, NODE_PATH=os.path.join(CACHE, "node", "node_modules"))
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True, env=env)
    lines = queue.Queue()
    stderr_tail = []

    def read_stdout():
        for line in proc.stdout:
            lines.put(line)
        lines.put(None)

    def read_stderr():
        for line in proc.stderr:
            sys.stderr.write(line)
            stderr_tail.append(line.rstrip("\n"))
            del stderr_tail[:-20]

    threading.Thread(target=read_stdout, daemon=True).start()
    t_err = threading.Thread(target=read_stderr, daemon=True)
    t_err.start()

    results, summary, killed = {}, None, None
    hard_deadline = time.monotonic() + a.timeout_s + GRACE_S
    while True:
        try:
            line = lines.get(timeout=max(0.0, hard_deadline - time.monotonic()))
        except queue.Empty:
            killed = "killed: no summary from the client within --timeout-s %g + %g s" % (a.timeout_s, GRACE_S)
            break
        if line is None:
            break
        try:
            obj = json.loads(line)
        except ValueError:
            sys.stderr.write(line)
            continue
        if obj.get("done"):
            summary = obj
        elif isinstance(obj.get("i"), int) and 0 <= obj["i"] < a.count and obj["i"] not in results:
            results[obj["i"]] = obj
    if killed:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    try:
        rc = proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        rc = proc.wait()
    t_err.join(1)
    missing_why = killed
    if summary is None and not killed:
        tail = "; ".join(stderr_tail[-3:])
        missing_why = "client exited with code %d without a summary%s" % (rc, (": " + tail) if tail else "")
    sys.exit(emit(results, a, summary, rc if not killed else -9, missing_why))


if __name__ == "__main__":
    main()
