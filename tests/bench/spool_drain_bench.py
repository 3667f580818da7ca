#!/usr/bin/python3
"""Drain rate after an outage, and RSS while the spool holds it
(docs/BENCHMARKS.md, "Spool: draining after an outage"):

  /usr/bin/python3 tests/bench/spool_drain_bench.py [--build DIR] [--full | --outage-s 60]
      [--rate 2000] [--record-bytes 1024] [--partitions 16] [--target kafka|test_cluster]
      [--budget BYTES] [--spool-root DIR] [--json FILE]

One produce-proxy with `ack = "spool"` (fsync "group") in front of one
cluster: by default a real Apache Kafka 4.4.0, one KRaft node
(tests/kafka/kafka_cluster.py, the JVM as workload 7 runs it), or the
3-broker test cluster (`--target test_cluster`). In one run:

  1. direct, before: bench_rdkafka_producer straight to the cluster,
     idempotent, acks=all, the same record size and partitions, as many
     records as the outage will spool (rate x outage); after a short
     unrecorded warm-up (the broker JVM compiles its produce path first);
  2. the outage: bench_open_loop offers `--rate` records/s through the
     proxy (acks=all, answered from the spool); 3 s in, the upstream goes
     down (Kafka: its broker stopped; test cluster: every broker `down`) for
     `--outage-s` (--full: 600 s, about 1.2 GB); the client stops offering
     when the outage ends;
  3. the drain: the upstream back up (Kafka: the broker restarted and
     answering Metadata), then records/s from that moment until the spool
     holds no record (`produce_proxy_spool_records` 0), and every
     acknowledged record in the log (the topic's end offsets, kcat -Q; with
     --read-back also consumed whole with kcat);
  4. direct, after: step 1 again, on the broker as the drain left it.

Throughout, every second: the proxy's VmRSS and VmHWM (/proc/PID/status),
spool_bytes, spool_records, buffered_bytes and records_delivered_total.
Prints the tables for docs/BENCHMARKS.md: the drain rate against each
direct run, and the RSS against `buffer_memory_bytes` and the constant
docs/operations.md ("Memory") documents.

Reports, never fails on a number; every process it starts is stopped;
everything listens on 127.0.0.1; every wait is bounded.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tests", "e2e"))
sys.path.insert(0, os.path.join(REPO, "tests", "kafka"))
# The broker JVM as kafka-server-start.sh runs it (scripts/bench.sh,
# workload 7), not the test harness's start-up-minded flags; read by
# kafka_cluster at import.
os.environ.setdefault("PP_KAFKA_JVM_FLAGS", "-Xms1g -XX:+UseG1GC -XX:MaxGCPauseMillis=20 "
                      "-XX:InitiatingHeapOccupancyPercent=35 -XX:+ExplicitGCInvokesConcurrent "
                      "-XX:+ExitOnOutOfMemoryError -Djava.awt.headless=true")
import spool_support as s  # noqa: E402

MIB = 1 << 20
# docs/operations.md, "Memory": RSS <= buffer_memory_bytes + 25 MiB with one
# client connection; buffer_memory_bytes x 1.125 + 60 MiB in every case.
DOC_CONSTANT = 25 * MIB
SPOOL_METRICS = ("spool_bytes", "spool_records", "buffered_bytes", "records_delivered_total",
                 "records_received_total")


def proc_kb(pid, key):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def scrape_all(proxy):
    text = proxy.metrics_text()
    return {m: s.metric_value(text, "produce_proxy_" + m) for m in SPOOL_METRICS}


class Sampler(threading.Thread):
    """Every second: wall time, the proxy's VmRSS/VmHWM (KiB) and its spool
    and budget metrics, while `stop` is not set."""

    def __init__(self, proxy):
        super().__init__(daemon=True)
        self.proxy, self.samples, self.stop = proxy, [], threading.Event()

    def run(self):
        while not self.stop.is_set():
            t = time.time()
            pid = self.proxy.proc.pid
            row = {"t": round(t, 3), "rss_kb": proc_kb(pid, "VmRSS"), "hwm_kb": proc_kb(pid, "VmHWM")}
            row.update(scrape_all(self.proxy))
            self.samples.append(row)
            self.stop.wait(max(0.0, 1.0 - (time.time() - t)))


class KafkaTarget:
    """One KRaft node; down = the broker stopped, up = restarted and answering."""
    name = "Apache Kafka %s, 1 KRaft node"

    def __init__(self, topics, _build):
        from kafka_cluster import KafkaCluster, kafka_version
        self.cluster = KafkaCluster(nodes=1, heap="1g", start_timeout=120)
        self.cluster.start()
        self.name = self.name % kafka_version()
        for t, parts in topics:
            self.cluster.create_topic(t, partitions=parts)
        self.bootstrap = self.cluster.bootstrap

    def down(self):
        self.cluster.stop_broker(1, timeout=30)

    def up(self):
        self.cluster.restart(1, timeout=180)

    def stop(self):
        self.cluster.stop()


class TestClusterTarget:
    """The 3-broker test cluster; down/up are its brokers' `down`/`up`."""
    name = "test cluster, 3 brokers"

    def __init__(self, topics, build):
        args = ["--brokers", "3", "--seed", "1", "--retain-log-bytes", str(64 * MIB)]
        for t, parts in topics:
            args += ["--topic", "%s:%d" % (t, parts)]
        self.cluster = s.TestCluster(build + "/tests/broker/test-cluster", *args)
        self.bootstrap = self.cluster.bootstrap

    def down(self):
        for b in (1, 2, 3):
            self.cluster.command("down %d" % b)

    def up(self):
        for b in (1, 2, 3):
            self.cluster.command("up %d" % b)

    def stop(self):
        self.cluster.stop()


def run_tool(cmd, timeout):
    out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout)
    lines = [line for line in out.stdout.splitlines() if line.startswith("{")]
    if out.returncode != 0 or not lines:
        return {"error": (out.stderr or out.stdout)[-500:]}
    return json.loads(lines[-1])


def end_offsets(bootstrap, topic, partitions):
    """Sum of the partitions' end offsets (kcat -Q, timestamp -1), or None."""
    cmd = ["timeout", "60", "kcat", "-Q", "-b", bootstrap]
    for p in range(partitions):
        cmd += ["-t", "%s:%d:-1" % (topic, p)]
    out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    total, seen = 0, 0
    for line in out.stdout.splitlines():
        # "drain [3] offset 75000"
        parts = line.split()
        if len(parts) == 4 and parts[2] == "offset":
            total += int(parts[3])
            seen += 1
    return total if seen == partitions else None


def consume_count(bootstrap, topic, timeout=600):
    """Records of `topic` read back whole by kcat, or None."""
    cmd = ["timeout", str(timeout), "kcat", "-C", "-q", "-b", bootstrap, "-t", topic, "-o", "beginning", "-e",
           "-f", "%p\n", "-X", "fetch.message.max.bytes=1048576"]
    out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    return out.stdout.count(b"\n") if out.returncode == 0 else None


def direct_run(rdk, bootstrap, a, count, topic):
    return run_tool([rdk, "--bootstrap", bootstrap, "--topic", topic, "--acks", "all", "--idempotence", "1",
                     "--record-bytes", str(a.record_bytes), "--count", str(count), "--duration-s", "300",
                     "--flush-timeout-ms", "60000"], 420)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(REPO, "build", "release"))
    ap.add_argument("--full", action="store_true", help="a 600 s outage (the issue's form)")
    ap.add_argument("--outage-s", type=float, default=60)
    ap.add_argument("--rate", type=int, default=2000, help="records/s offered during the outage")
    ap.add_argument("--record-bytes", type=int, default=1024)
    ap.add_argument("--partitions", type=int, default=16)
    ap.add_argument("--target", choices=("kafka", "test_cluster"), default="kafka")
    ap.add_argument("--budget", type=int, default=64 * MIB, help="producer.buffer_memory_bytes")
    ap.add_argument("--client-linger-ms", type=int, default=5,
                    help="the outage client's linger.ms (librdkafka's default 5): records per spool entry")
    ap.add_argument("--read-back", action="store_true", help="also consume the drained topic whole")
    ap.add_argument("--spool-root", default=None)
    ap.add_argument("--json")
    a = ap.parse_args()
    if a.full:
        a.outage_s = 600
    b = a.build
    proxy_bin = b + "/daemon/produce-proxy"
    rdk, open_loop = b + "/tests/bench/bench_rdkafka_producer", b + "/tests/bench/bench_open_loop"
    lead_s = 3.0
    offered = int(a.rate * (lead_s + a.outage_s))
    work = tempfile.mkdtemp(prefix="pp-spool-drain-", dir=a.spool_root)
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    load0 = os.getloadavg()
    topics = [("drain", a.partitions), ("direct", a.partitions), ("warm", a.partitions)]
    target = proxy = sampler = client = None
    res = {"started": started, "args": vars(a), "load_start": load0}
    try:
        target = (KafkaTarget if a.target == "kafka" else TestClusterTarget)(topics, b)
        s.say("%s up at %s", target.name, target.bootstrap)
        spool = {"dir": os.path.join(work, "spool"), "ack": "spool", "fsync": "group",
                 "max_bytes": max(1 << 30, int(offered * (a.record_bytes + 200) * 1.5))}
        proxy = s.SpoolProxy(proxy_bin, target.bootstrap, work, spool=spool, name="proxy",
                             extra="[producer]\nbuffer_memory_bytes = %d\n[shutdown]\ndrain_timeout_ms = 3000\n"
                             % a.budget)
        proxy.start()
        if not proxy.wait_log("ready: clients connect", 60):
            raise SystemExit("proxy not ready:\n%s" % proxy.log_text()[-2000:])
        sampler = Sampler(proxy)
        sampler.start()
        # Warm-up, not recorded: the broker's produce path, the proxy's
        # upstream connections and its metadata of the topics.
        run_tool([rdk, "--bootstrap", target.bootstrap, "--topic", "warm", "--acks", "all", "--idempotence", "1",
                  "--count", "200000", "--duration-s", "4"], 120)
        run_tool([rdk, "--bootstrap", proxy.bootstrap, "--topic", "warm", "--acks", "all", "--count", "50000",
                  "--duration-s", "2"], 120)
        s.say("direct, before: %d records", offered)
        res["direct_before"] = direct_run(rdk, target.bootstrap, a, offered, "direct")
        s.say("  %.0f records/s", res["direct_before"].get("records_per_s", 0))
        # The outage: the client offers for lead + outage seconds, the upstream
        # goes down after lead and comes back once the client has stopped.
        for _ in range(600):
            if proxy.scrape("produce_proxy_spool_records") in (0, None):
                break
            time.sleep(0.1)
        rss_before_kb = proc_kb(proxy.proc.pid, "VmRSS")
        client_out = os.path.join(work, "open_loop.json")
        with open(client_out, "w") as out, open(os.path.join(work, "open_loop.err"), "w") as err:
            client = subprocess.Popen([open_loop, "--bootstrap", proxy.bootstrap, "--topic", "drain", "--acks", "all",
                                       "--rate", str(a.rate), "--duration-s", str(lead_s + a.outage_s),
                                       "--count", str(offered), "--record-bytes", str(a.record_bytes),
                                       "--warmup-s", "0", "--flush-timeout-ms", "120000",
                                       "--linger-ms", str(a.client_linger_ms)], stdout=out, stderr=err)
        time.sleep(lead_s)
        t_down = time.time()
        target.down()
        s.say("upstream down (%.1f s to stop it); offering %d records/s for %g s", time.time() - t_down, a.rate,
              a.outage_s)
        time.sleep(max(0.0, t_down + a.outage_s - time.time()))
        try:
            client.wait(timeout=180)
        except subprocess.TimeoutExpired:
            client.kill()
            client.wait(timeout=10)
        with open(client_out) as f:
            lines = [line for line in f.read().splitlines() if line.startswith("{")]
        res["client"] = json.loads(lines[-1]) if lines else {"error": "no output"}
        held = scrape_all(proxy)
        res["held"] = held
        s.say("spool holds %s records, %.0f MiB; the client: %s acknowledged, p99 %s ms", held["spool_records"],
              (held["spool_bytes"] or 0) / MIB, res["client"].get("records"), res["client"].get("p99_ms"))
        delivered0 = held["records_delivered_total"] or 0
        t_up0 = time.time()
        target.up()
        t_up = time.time()
        s.say("upstream back up (%.1f s to start it)", t_up - t_up0)
        # Drain: until the spool holds no record; bounded.
        t_first = t_empty = None
        deadline = time.monotonic() + max(900.0, 5.0 * a.outage_s)
        while time.monotonic() < deadline:
            m = scrape_all(proxy)
            now = time.time()
            if t_first is None and (m["records_delivered_total"] or 0) > delivered0:
                t_first = now
            if m["spool_records"] == 0:
                t_empty = now
                break
            time.sleep(0.1)
        drained = scrape_all(proxy)
        res.update({"t_down": t_down, "t_up0": t_up0, "t_up": t_up, "t_first_delivery": t_first,
                    "t_empty": t_empty, "drained": drained, "rss_before_kb": rss_before_kb})
        res["end_offsets"] = end_offsets(target.bootstrap, "drain", a.partitions)
        if a.read_back:
            res["read_back"] = consume_count(target.bootstrap, "drain")
        s.say("spool empty %s s after the upstream was back; end offsets %s",
              None if t_empty is None else round(t_empty - t_up, 1), res["end_offsets"])
        sampler.stop.set()
        sampler.join(5)
        s.say("direct, after: %d records", offered)
        res["direct_after"] = direct_run(rdk, target.bootstrap, a, offered, "direct")
        s.say("  %.0f records/s", res["direct_after"].get("records_per_s", 0))
        res["samples"] = sampler.samples
    finally:
        if sampler:
            sampler.stop.set()
        if client and client.poll() is None:
            client.kill()
            client.wait(timeout=10)
        if proxy:
            proxy.terminate(timeout=30)
        if target:
            target.stop()
        shutil.rmtree(work, ignore_errors=True)
    res["load_end"] = os.getloadavg()
    report(a, res, target.name)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)


def report(a, res, target_name):
    n = res["held"]["spool_records"] or 0
    back = res["end_offsets"]
    acked = res["client"].get("records")
    drain_s = None if res["t_empty"] is None else res["t_empty"] - res["t_up"]
    first_s = None if res["t_first_delivery"] is None else res["t_first_delivery"] - res["t_up"]
    rate = n / drain_s if drain_s else None
    d0, d1 = res["direct_before"].get("records_per_s"), res["direct_after"].get("records_per_s")

    def fmt(v, spec="{:,.0f}"):
        return "-" if v is None else spec.format(v)

    def ratio(x, y):
        return "-" if not x or not y else "%.2f" % (x / y)

    lines = ["Run of %s, %s, %g s outage at %s records/s of %d B, %d partitions, acks=all; load average %.1f at the "
             "start, %.1f at the end." % (res["started"], target_name, a.outage_s, "{:,}".format(a.rate),
                                          a.record_bytes, a.partitions, res["load_start"][0], res["load_end"][0]), "",
             "| case | records | seconds | records/s | drain / direct |", "|---|---:|---:|---:|---:|"]
    for label, d in (("direct idempotent, before", res["direct_before"]), ("direct idempotent, after",
                                                                          res["direct_after"])):
        lines.append("| %s | %s | %s | %s | |" % (label, fmt(d.get("records")), fmt(d.get("seconds"), "{:.1f}"),
                                                 fmt(d.get("records_per_s"))))
    lines.append("| proxy drain, from the upstream back to the spool empty | %s | %s | %s | %s before, %s after |" % (
        fmt(n), fmt(drain_s, "{:.1f}"), fmt(rate), ratio(rate, d0), ratio(rate, d1)))
    if first_s is not None and drain_s:
        lines.append("| the same, from the first record delivered | %s | %s | %s | %s before, %s after |" % (
            fmt(n), fmt(drain_s - first_s, "{:.1f}"), fmt(n / (drain_s - first_s)), ratio(n / (drain_s - first_s), d0),
            ratio(n / (drain_s - first_s), d1)))
    lines += ["", "Acknowledged to the client: %s of %s sent (open loop, p50 %s / p99 %s ms from each record's due "
              "time); in the log (end offsets): %s%s; upstream back up %.1f s after it was asked to (the broker's "
              "start), first record delivered %s s after that." % (
                  fmt(acked), fmt(res["client"].get("sent")), fmt(res["client"].get("p50_ms"), "{:.2f}"),
                  fmt(res["client"].get("p99_ms"), "{:.2f}"), fmt(back),
                  "" if "read_back" not in res else ", read back whole: %s" % fmt(res["read_back"]),
                  res["t_up"] - res["t_up0"], fmt(first_s, "{:.1f}"))]
    samples = [x for x in res["samples"] if x["rss_kb"]]
    budget = a.budget

    def phase(t0, t1):
        xs = [x for x in samples if t0 <= x["t"] <= t1]
        return max((x["rss_kb"] for x in xs), default=None), xs

    out_max, out_xs = phase(res["t_down"], res["t_up"])
    dr_max, _ = phase(res["t_up"], res["t_empty"] or res["t_up"] + 1e9)
    gib = next((x for x in out_xs if (x["spool_bytes"] or 0) >= 1 << 30), None)
    first_out = out_xs[0] if out_xs else None
    last_out = out_xs[-1] if out_xs else None
    slope = None
    if first_out and last_out and (last_out["spool_bytes"] or 0) > (first_out["spool_bytes"] or 0):
        slope = ((last_out["rss_kb"] - first_out["rss_kb"]) * 1024.0 /
                 (((last_out["spool_bytes"] or 0) - (first_out["spool_bytes"] or 0)) / (1 << 30)))
    hwm = max((x["hwm_kb"] or 0 for x in samples), default=0)
    lim = budget + DOC_CONSTANT
    lim_all = budget * 1.125 + 60 * MIB
    lines += ["", "| | RSS MiB | spool MiB | over the budget (%d MiB) MiB |" % (budget // MIB), "|---|---:|---:|---:|"]

    def row(label, rss_kb, spool):
        if rss_kb is None:
            return "| %s | - | - | - |" % label
        return "| %s | %.1f | %s | %+.1f |" % (label, rss_kb / 1024.0, fmt(None if spool is None else spool / MIB),
                                               rss_kb / 1024.0 - budget / MIB)
    lines.append(row("before the outage", res["rss_before_kb"], None))
    if first_out:
        lines.append(row("outage start", first_out["rss_kb"], first_out["spool_bytes"]))
    if gib:
        lines.append(row("spool first past 1 GiB", gib["rss_kb"], gib["spool_bytes"]))
    if last_out:
        lines.append(row("outage end", last_out["rss_kb"], last_out["spool_bytes"]))
    lines.append(row("max during the outage", out_max, None))
    lines.append(row("max during the drain", dr_max, None))
    lines.append(row("VmHWM, whole run", hwm, None))
    lines += ["", "Documented bound (docs/operations.md, \"Memory\"): budget + 25 MiB = %.0f MiB (one client "
              "connection; every case: budget x 1.125 + 60 MiB = %.0f MiB). Max RSS %.1f MiB: %s. RSS growth "
              "during the outage per GiB spooled: %s MiB." % (
                  lim / MIB, lim_all / MIB, hwm / 1024.0, "within" if hwm * 1024 <= lim else "**over**",
                  fmt(None if slope is None else slope / MIB, "{:.1f}"))]
    print("\n".join(lines))


if __name__ == "__main__":
    main()
