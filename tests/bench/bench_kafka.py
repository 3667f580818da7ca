#!/usr/bin/python3
"""Real Apache Kafka for workload 7 of scripts/bench.sh (issue 12).

  java-libs          fetches Kafka's Java producer benchmark (kafka-tools,
                     pinned in tests/bench/pom.xml) into the cache once;
                     prints the libs dir last
  cluster ...        a 1-node KRaft cluster (tests/kafka/kafka_cluster.py)
                     with the topics asked for; prints bootstrap= and
                     broker_pid= lines, runs until stdin closes (or SIGTERM).
                     --ssl DIR adds an SSL listener (workload 9, issue 15)
                     with certificates made in DIR (tests/kafka/test_pki.py)
                     and prints ssl_bootstrap= and ca_file= too
  java-perf ...      runs org.apache.kafka.tools.ProducerPerformance, bounded
                     by a record count AND a duration, and prints one JSON
                     line with the same keys as bench_rdkafka_producer

Stdlib only; reports, never judges a number.
"""
import argparse
import hashlib
import json
import os
import re
import resource
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
POM = os.path.join(HERE, "pom.xml")
CACHE = os.environ.get("PP_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "produce-proxy")

# What kafka-producer-perf-test.sh gives the tool (kafka-run-class.sh's
# performance options, KAFKA_HEAP_OPTS=-Xmx512M), so the Java baseline runs
# as Kafka ships it rather than with the test harness's start-up-minded flags.
JAVA_CLIENT_FLAGS = ["-Xmx512M", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20",
                     "-XX:InitiatingHeapOccupancyPercent=35", "-XX:+ExplicitGCInvokesConcurrent",
                     "-XX:MaxInlineLevel=15", "-Djava.awt.headless=true"]


def err(msg):
    print("bench_kafka: " + msg, file=sys.stderr, flush=True)


def cmd_java_libs(_args):
    with open(POM, "rb") as f:
        want = hashlib.sha256(f.read()).hexdigest()
    dest = os.path.join(CACHE, "bench-java")
    libs, stamp = os.path.join(dest, "libs"), os.path.join(dest, "libs.stamp")
    if os.path.isdir(libs) and os.path.exists(stamp) and open(stamp).read().strip() == want:
        print(libs)
        return 0
    os.makedirs(dest, exist_ok=True)
    tmp = libs + ".tmp.%d" % os.getpid()
    err("fetching org.apache.kafka:kafka-tools (tests/bench/pom.xml) with Maven into " + dest)
    log = os.path.join(dest, "mvn.log")
    with open(log, "w") as out:
        rc = subprocess.run(["timeout", "600", "mvn", "-B", "-q", "-f", POM, "dependency:copy-dependencies",
                             "-DincludeScope=runtime", "-DoutputDirectory=" + tmp],
                            stdout=out, stderr=subprocess.STDOUT).returncode
    if rc != 0 or not any(n.startswith("kafka-tools-") and not n.startswith("kafka-tools-api")
                          for n in os.listdir(tmp) if os.path.isdir(tmp)):
        err("Maven could not fetch kafka-tools (exit %d; log %s)" % (rc, log))
        subprocess.run(["rm", "-rf", tmp])
        return 1
    subprocess.run(["rm", "-rf", libs])
    os.rename(tmp, libs)
    with open(stamp, "w") as f:
        f.write(want + "\n")
    print(libs)
    return 0


def cmd_cluster(args):
    sys.path.insert(0, os.path.join(ROOT, "tests", "kafka"))
    from kafka_cluster import KafkaCluster, KafkaHarnessError, SslListener, kafka_version  # noqa: E402
    from test_pki import TestPki  # noqa: E402

    cfg = {}
    for kv in args.set:
        k, _, v = kv.partition("=")
        cfg[k] = v
    # SIGTERM (bench.sh's cleanup) becomes SystemExit, so the broker stops.
    signal.signal(signal.SIGTERM, lambda s, f: sys.exit(128 + s))
    ssl_listeners, pki = {}, None
    if args.ssl:
        # The broker's certificate names 127.0.0.1, so both the proxy and
        # librdkafka verify it (host name included) against the test CA.
        pki = TestPki(args.ssl)
        broker = pki.leaf("broker", "localhost", "DNS:localhost,IP:127.0.0.1")
        ssl_listeners["SSL"] = SslListener(broker.keystore)
    cluster = KafkaCluster(nodes=1, broker_config=cfg, heap=args.heap, start_timeout=90, ssl_listeners=ssl_listeners)
    try:
        cluster.start()
        for spec in args.topic:
            name, _, parts = spec.partition(":")
            cluster.create_topic(name, partitions=int(parts or 1))
        node = cluster._nodes[cluster.broker_ids[0]]  # the broker's pid, for its CPU seconds
        print("kafka_version=%s" % kafka_version())
        print("startup_s=%.1f" % cluster.startup_seconds)
        print("broker_pid=%d" % node.proc.pid)
        if pki:
            print("ca_file=%s" % pki.ca_file)
            print("ssl_bootstrap=%s" % cluster.ssl_bootstrap("SSL"))
        print("bootstrap=%s" % cluster.bootstrap, flush=True)
        while sys.stdin.readline():
            pass
    except KafkaHarnessError as e:
        err(str(e))
        return 1
    finally:
        cluster.stop()
    return 0


# "400000 records sent, 150000.1 records/sec (146.48 MB/sec), 80.12 ms avg
# latency, 400.00 ms max latency, 70 ms 50th, 200 ms 95th, 300 ms 99th, 390 ms
# 99.9th." (the whole run), then the same for "300000 steady state records
# sent" (after --warmup-records); one-second windows have no percentiles.
LINE = re.compile(r"^(\d+) (steady state )?records sent, ([\d.]+) records/sec \(([\d.]+) MB/sec\), ([\d.]+) ms "
                  r"avg latency, ([\d.]+) ms max latency(?:, (\d+) ms 50th, (\d+) ms 95th, (\d+) ms 99th, "
                  r"(\d+) ms 99.9th)?")


def parse_perf(out):
    """{"all": summary, "steady": summary, "windows": [(records, seconds, steady)]}."""
    got = {"windows": []}
    steady, first = False, True
    for line in out.splitlines():
        line = line.strip()
        if line == "In steady state.":
            steady, first = True, True
            continue
        m = LINE.match(line)
        if not m:
            continue
        n, rps = int(m.group(1)), float(m.group(3))
        if m.group(7) is None:
            # The first window of each phase is the tool's artefact ("1
            # records sent, 1.0 records/sec": the one record that opened it).
            if not first:
                got["windows"].append((n, n / rps if rps else 0.0, steady))
            first = False
            continue
        got["steady" if m.group(2) else "all"] = {
            "records": n, "records_per_s": rps, "avg_ms": float(m.group(5)), "max_ms": float(m.group(6)),
            "p50_ms": float(m.group(7)), "p95_ms": float(m.group(8)), "p99_ms": float(m.group(9)),
            "p999_ms": float(m.group(10))}
    return got


def cmd_java_perf(args):
    libs = args.libs
    # The first quarter of the records warms the JIT up and is not in the
    # steady-state rate, which is the one reported as records_per_s (the
    # whole run's is records_per_s_all). The tool has no duration bound of its
    # own: past --duration-s + --grace-s it is stopped and the rate comes from
    # its one-second windows.
    warmup = args.count // 4 if args.warmup is None else args.warmup
    tool = ["org.apache.kafka.tools.ProducerPerformance", "--bootstrap-server", args.bootstrap, "--topic", args.topic,
            "--num-records", str(args.count), "--record-size", str(args.record_bytes), "--throughput", "-1",
            "--reporting-interval", "1000"]
    if warmup > 0:
        tool += ["--warmup-records", str(warmup)]
    if args.prop:
        tool += ["--command-property"] + args.prop
    cmd = ["java"] + JAVA_CLIENT_FLAGS + ["-cp", os.path.join(libs, "*")] + tool
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    timed_out = False
    try:
        out, stderr = proc.communicate(timeout=args.duration_s + args.grace_s)
    except subprocess.TimeoutExpired:
        timed_out = True
        proc.terminate()
        try:
            out, stderr = proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, stderr = proc.communicate()
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    # The JVM's whole life: start-up, JIT compilation and GC included.
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    got = parse_perf(out)
    res = {"tool": "java_producer_perf", "mode": "java", "wall_s": round(wall, 3), "cpu_s": cpu,
           "exit": proc.returncode, "timed_out": int(timed_out), "warmup_records": warmup,
           "args": " ".join(tool[1:])}
    whole, steady = got.get("all"), got.get("steady") or got.get("all")
    if whole and steady and not timed_out:
        res.update({k: steady[k] for k in ("records_per_s", "avg_ms", "max_ms", "p50_ms", "p95_ms", "p99_ms",
                                            "p999_ms")})
        res.update({"records": whole["records"], "records_per_s_all": whole["records_per_s"],
                    "seconds": whole["records"] / whole["records_per_s"] if whole["records_per_s"] else 0,
                    "steady_records": steady["records"]})
    elif got["windows"]:
        ws = got["windows"]
        st = [w for w in ws if w[2]] or ws
        n_all, s_all = sum(w[0] for w in ws), sum(w[1] for w in ws)
        n_st, s_st = sum(w[0] for w in st), sum(w[1] for w in st)
        res.update({"records": n_all, "partial": 1, "seconds": s_all, "steady_records": n_st,
                    "records_per_s": n_st / s_st if s_st else 0.0,
                    "records_per_s_all": n_all / s_all if s_all else 0.0})
    else:
        res["error"] = (stderr.strip().splitlines() or ["no summary line"])[-1][:300]
    if "records" in res:
        res["bytes"] = res["records"] * args.record_bytes
        # 10^6 bytes of record values per second, as bench_rdkafka_producer
        # counts (the tool's own "MB/sec" is MiB).
        res["mb_per_s"] = res["records_per_s"] * args.record_bytes / 1e6
        res["cpu_s_per_gb"] = cpu / (res["bytes"] / 1e9) if res["bytes"] else -1
    print(json.dumps(res, sort_keys=True))
    return 0 if whole and not timed_out else 1


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("java-libs")
    c = sub.add_parser("cluster")
    c.add_argument("--topic", action="append", default=[], help="NAME:PARTITIONS (repeatable)")
    c.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="broker config")
    c.add_argument("--heap", default="1g")
    c.add_argument("--ssl", metavar="DIR", help="add an SSL listener, certificates made in DIR")
    j = sub.add_parser("java-perf")
    j.add_argument("--libs", required=True)
    j.add_argument("--bootstrap", required=True)
    j.add_argument("--topic", required=True)
    j.add_argument("--count", type=int, required=True)
    j.add_argument("--duration-s", type=float, required=True)
    j.add_argument("--grace-s", type=float, default=8, help="JVM start and final flush beyond --duration-s")
    j.add_argument("--record-bytes", type=int, default=1024)
    j.add_argument("--warmup", type=int, default=None, help="warm-up records (default: a quarter of --count)")
    j.add_argument("--prop", action="append", default=[], metavar="KEY=VALUE", help="producer config")
    args = p.parse_args()
    return {"java-libs": cmd_java_libs, "cluster": cmd_cluster, "java-perf": cmd_java_perf}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
