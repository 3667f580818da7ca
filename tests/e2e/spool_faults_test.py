#!/usr/bin/env python3
"""The spool's fault scenarios against the shipped binary (docs/design/SPOOL.md,
docs/TESTING.md "The spool's faults"): the test cluster, real clients, the
upstream log read back independently with kcat.

  /usr/bin/python3 tests/e2e/spool_faults_test.py --proxy BINARY --cluster TEST_CLUSTER [--full] [unittest args]

Clients (confluent-kafka, each in its own process, paced, 3 partitions each,
every key and value unique so the log tells lost, duplicated, reordered and
damaged records apart):
  legacy      kcat's legacy mode (api.version.request=false,
              broker.version.fallback=0.9.0.1: Produce v1, no producer id)
  idempotent  enable.idempotence=true
  kp010       kafka-python api_version (0,10), retries=0 (disk full only: it
              shows the proxy's error to the application)

Scenarios:
  1. kill -9 loop: 5 kill -9s of the proxy (restarted at once on the same
     ports and spool dir) during two paced streams, in ack="spool" and, in the
     same run with the same kills, ack="upstream" without a spool. Spool mode:
     no acknowledged record lost, the idempotent client exactly once and in
     order, the legacy client's duplicates at most one crash window per kill
     (the records of the requests it had in flight: 5 requests of at most
     200 records per partition). Upstream mode: nothing acknowledged lost;
     its duplicates are reported, not asserted.
  2. Kafka down: every broker down for 60 s (--full: 10 min at 2 x 1,000
     records/s of 1 KiB) while the clients produce: no client error, answers
     throughout the outage, /readyz 200, then everything delivered exactly
     once, in order.
  3. Restart during the outage: SIGTERM (exit 0, the rest left on disk), a
     cold start while Kafka is down that still accepts, a kill -9, a second
     cold start; Kafka back: nothing lost, the idempotent client exactly once.
  4. Disk full: the spool dir on a 16 MiB tmpfs, 8 MiB of it taken by a
     file (as root; otherwise spool.max_bytes = 1 MiB, said in the output)
     with Kafka down: retriable errors, /readyz 503, the proxy alive,
     nothing acknowledged lost; acceptance resumes when the file is removed,
     and everything is delivered when Kafka is back.
  5. Corruption: with the proxy stopped, bytes flipped in the middle of an
     older segment and the last segment's tail torn: the restart logs both
     files, counts spool_corrupt_bytes_total, moves the older one aside, and
     delivers every record outside the damaged ranges, none of them damaged.

CI form about 3.5 minutes; --full lengthens 1 (the issue's 40,000-record
streams) and 2 (10 minutes).
"""
import os
import re
import shutil
import subprocess
import sys
import time
import unittest

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import spool_support as s  # noqa: E402
from daemon_support import run_tests  # noqa: E402

ARGS = None
CORRUPT = "produce_proxy_spool_corrupt_bytes_total"
SPOOL_RECORDS = "produce_proxy_spool_records"


def spool_conf(directory, **over):
    conf = {"dir": directory, "ack": "spool", "fsync": "group", "segment_bytes": 1 << 20}
    conf.update(over)
    return conf


SHUTDOWN = "[shutdown]\ndrain_timeout_ms = 3000\n"


class Run:
    """One scenario's processes: a test cluster, proxies, clients; all
    stopped by close(), logs kept under PP_SPOOL_KEEP."""

    def __init__(self, tag, topics, brokers=3):
        self.tag = tag
        self.dir = s.workdir("pp-spool-%s-" % tag)
        args = ["--brokers", str(brokers)]
        for t in topics:
            args += ["--topic", "%s:%d" % (t, s.PARTITIONS)]
        self.brokers = brokers
        self.cluster = s.TestCluster(ARGS.cluster, *args)
        self.proxies, self.clients = [], []

    def proxy(self, name, spool=None, extra=SHUTDOWN, start=True):
        p = s.SpoolProxy(ARGS.proxy, self.cluster.bootstrap, self.dir, spool=spool, extra=extra, name=name)
        self.proxies.append(p)
        if start:
            p.start()
            if not p.wait_log("ready: clients connect", 60):
                raise AssertionError("%s not ready:\n%s" % (name, p.log_text()[-3000:]))
        return p

    def start_clients(self, specs):
        self.clients += s.start_clients(specs, self.dir)
        return self.clients[-len(specs):]

    def kafka(self, up):
        for b in range(1, self.brokers + 1):
            self.cluster.command("%s %d" % ("up" if up else "down", b))

    def close(self):
        for c in self.clients:
            c.kill()
        for p in self.proxies:
            if p.alive():
                p.proc.kill()
                p.proc.wait(timeout=10)
        self.cluster.stop()
        if not s.keep_dir():
            shutil.rmtree(self.dir, ignore_errors=True)


def client_spec(name, kind, bootstrap, topic, rate, duration, value_bytes=64, conf=None, flush_s=120, **kw):
    spec = {"name": name, "kind": kind, "bootstrap": bootstrap, "topic": topic, "rate": rate, "duration": duration,
            "value_bytes": value_bytes, "flush_s": flush_s, "conf": conf or {}}
    spec.update(kw)
    return spec


def read_back(run, topic, result, value_bytes):
    return s.count(result, s.read_log(run.cluster.bootstrap, topic), value_bytes)


class SpoolFaults(unittest.TestCase):
    maxDiff = None

    def report(self, label, rows, extra=""):
        print("\n%s\n%s%s" % (label, s.table(rows), ("\n" + extra) if extra else ""), file=sys.stderr)

    def common_checks(self, problems, rows, proxy):
        for r in rows:
            if r["lost_acked"]:
                problems.append("%s: %d acknowledged records not in the log, e.g. %s" % (
                    r["client"], r["lost_acked"], r["lost_examples"]))
            if r["strangers"] or r["damaged"]:
                problems.append("%s: %d records it never sent, %d damaged" % (r["client"], r["strangers"],
                                                                              r["damaged"]))
            if r["acked"] == 0:
                problems.append("%s: nothing acknowledged" % r["client"])
        for i, (how, rc) in enumerate(proxy.exits):
            if how == "gone":
                problems.append("%s incarnation %d exited by itself (%s)" % (proxy.name, i, rc))

    def finish(self, problems, proxies, label):
        if problems:
            logs = "\n".join(p.log_text()[-3000:] for p in proxies)
            self.fail("%s:\n  %s\nproxy logs (tails):\n%s" % (label, "\n  ".join(problems), logs))

    # -- 1 ------------------------------------------------------------------

    def test_1_kill9_loop(self):
        kills = 5
        if ARGS.full:
            rate, every, warmup = 1000, 6.0, 5.0   # 2 x ~40,000 records, as the baseline
        else:
            rate, every, warmup = 400, 3.0, 3.0
        duration = warmup + kills * every + 2
        modes = ("spool", "upstream")
        topics = {(m, c): "k9-%s-%s" % (m, c) for m in modes for c in ("legacy", "idempotent")}
        run = Run("kill9", topics.values())
        try:
            proxies = {}
            for m in modes:
                spool = spool_conf(os.path.join(run.dir, "spool-" + m)) if m == "spool" else None
                proxies[m] = run.proxy("proxy-" + m, spool=spool)
            specs = []
            for m in modes:
                specs.append(client_spec("%s-legacy" % m, "confluent", proxies[m].bootstrap, topics[(m, "legacy")],
                                         rate, duration, conf={**s.COMMON, **s.LEGACY}))
                specs.append(client_spec("%s-idempotent" % m, "confluent", proxies[m].bootstrap,
                                         topics[(m, "idempotent")], rate, duration,
                                         conf={**s.COMMON, **s.IDEMPOTENT}))
            clients = run.start_clients(specs)
            time.sleep(warmup)
            for k in range(kills):
                for m in modes:
                    proxies[m].kill9()
                time.sleep(0.2)
                for m in modes:
                    proxies[m].start()
                s.say("kill9: kill %d of %d done", k + 1, kills)
                time.sleep(every)
            results = {c.spec["name"]: c.finish(timeout=duration + 200) for c in clients}
            left = proxies["spool"].wait_drained(120)
            rows = {}
            for m in modes:
                for c in ("legacy", "idempotent"):
                    name = "%s-%s" % (m, c)
                    rows[name] = read_back(run, topics[(m, c)], results[name], 64)
            replayed = proxies["spool"].scrape("produce_proxy_spool_replayed_batches_total")
            self.report("kill -9 loop: %d kills, %d records/s per client, ack=spool vs ack=upstream" % (kills, rate),
                        list(rows.values()), "spool records left: %s; spool_replayed_batches_total (last "
                        "incarnation): %s; legacy bound: %d per kill" % (left, replayed, s.LEGACY_IN_FLIGHT_RECORDS))
            problems = []
            for m in modes:
                self.common_checks(problems, [rows["%s-legacy" % m], rows["%s-idempotent" % m]], proxies[m])
            if left != 0:
                problems.append("the spool still holds %s records" % left)
            idem, legacy = rows["spool-idempotent"], rows["spool-legacy"]
            if idem["duplicates"] or idem["order_breaks"]:
                problems.append("spool, idempotent: %d duplicates, %d out of order" % (idem["duplicates"],
                                                                                       idem["order_breaks"]))
            if legacy["duplicates"] > kills * s.LEGACY_IN_FLIGHT_RECORDS:
                problems.append("spool, legacy: %d duplicates > %d kills x %d records in flight" % (
                    legacy["duplicates"], kills, s.LEGACY_IN_FLIGHT_RECORDS))
            self.finish(problems, proxies.values(), "kill -9 loop")
        finally:
            run.close()

    # -- 2 ------------------------------------------------------------------

    def test_2_kafka_down(self):
        if ARGS.full:
            outage, rate, value_bytes = 600, 1000, 1024
        else:
            outage, rate, value_bytes = 60, 300, 1024
        warmup, after = 3.0, 3.0
        duration = warmup + outage + after
        topics = {c: "down-%s" % c for c in ("legacy", "idempotent")}
        run = Run("down", topics.values())
        try:
            # Room for the whole outage: rate x 2 clients x outage x ~1.1 KiB.
            need = int(2 * rate * outage * (value_bytes + 200) * 1.5)
            proxy = run.proxy("proxy", spool=spool_conf(os.path.join(run.dir, "spool"),
                                                        max_bytes=max(need, 1 << 30), segment_bytes=16 << 20))
            clients = run.start_clients([
                client_spec("legacy", "confluent", proxy.bootstrap, topics["legacy"], rate, duration, value_bytes,
                            conf={**s.COMMON, **s.LEGACY}, flush_s=outage + 120),
                client_spec("idempotent", "confluent", proxy.bootstrap, topics["idempotent"], rate, duration,
                            value_bytes, conf={**s.COMMON, **s.IDEMPOTENT}, flush_s=outage + 120)])
            time.sleep(warmup)
            run.kafka(up=False)
            t_down = time.time()
            time.sleep(min(10.0, outage / 2))
            readyz = proxy.readyz()
            held = proxy.scrape(SPOOL_RECORDS)
            time.sleep(max(0.0, t_down + outage - time.time()))
            run.kafka(up=True)
            t_up = time.time()
            t_drain0 = time.monotonic()
            results = {c.spec["name"]: c.finish(timeout=after + outage + 240) for c in clients}
            left = proxy.wait_drained(outage + 120)
            drain_s = time.monotonic() - t_drain0
            rows = [read_back(run, topics[c], results[c], value_bytes) for c in ("legacy", "idempotent")]
            served = {c: s.answer_gaps(results[c], t_down + 1, t_up) for c in results}
            self.report("Kafka down for %d s, %d records/s of %d B per client, ack=spool" % (outage, rate, value_bytes),
                        rows, "during the outage, answered OK / longest silence: %s; /readyz mid-outage: %s; spool "
                        "records mid-outage: %s; spool emptied %.1f s after Kafka came back (left %s)" % (
                            {c: (ok, round(g, 2)) for c, (ok, g) in served.items()}, readyz, held, drain_s, left))
            problems = []
            self.common_checks(problems, rows, proxy)
            for r in rows:
                if r["failed"] or r["unreported"]:
                    problems.append("%s saw errors: %d failed %s, %d unanswered" % (
                        r["client"], r["failed"], r["errors"], r["unreported"]))
                if r["duplicates"] or r["order_breaks"]:
                    problems.append("%s: %d duplicates, %d out of order" % (r["client"], r["duplicates"],
                                                                           r["order_breaks"]))
            for c, (ok, gap) in served.items():
                if ok < rate * (outage - 1) * 0.5 or gap > 5.0:
                    problems.append("%s not answered throughout the outage: %d OK, a %.1f s silence" % (c, ok, gap))
            if readyz != 200:
                problems.append("/readyz answered %s during the outage" % readyz)
            if left != 0:
                problems.append("the spool still holds %s records" % left)
            self.finish(problems, [proxy], "Kafka down")
        finally:
            run.close()

    # -- 3 ------------------------------------------------------------------

    def test_3_restart_during_outage(self):
        rate, step = 300, 4.0
        duration = 4 * step + 6
        topics = {c: "rs-%s" % c for c in ("legacy", "idempotent")}
        run = Run("restart", topics.values())
        try:
            proxy = run.proxy("proxy", spool=spool_conf(os.path.join(run.dir, "spool")))
            clients = run.start_clients([
                client_spec(c, "confluent", proxy.bootstrap, topics[c], rate, duration,
                            conf={**s.COMMON, **(s.LEGACY if c == "legacy" else s.IDEMPOTENT)})
                for c in ("legacy", "idempotent")])
            time.sleep(3)
            run.kafka(up=False)
            time.sleep(step)
            t0 = time.monotonic()
            rc_term = proxy.terminate(timeout=60)
            term_s = time.monotonic() - t0
            t0 = time.monotonic()
            proxy.start(timeout=20)   # a cold start with Kafka down: listens at once
            cold_s = time.monotonic() - t0
            time.sleep(step)
            acked_mid = proxy.scrape(SPOOL_RECORDS)
            proxy.kill9()
            proxy.start(timeout=20)
            time.sleep(step)
            run.kafka(up=True)
            results = {c.spec["name"]: c.finish(timeout=duration + 200) for c in clients}
            left = proxy.wait_drained(120)
            rows = [read_back(run, topics[c], results[c], 64) for c in ("legacy", "idempotent")]
            self.report("restart during an outage: SIGTERM, cold start, kill -9, cold start, Kafka back", rows,
                        "SIGTERM exit %s after %.1f s; cold start listening after %.2f s; spool records after the "
                        "first cold start: %s; left %s" % (rc_term, term_s, cold_s, acked_mid, left))
            problems = []
            self.common_checks(problems, rows, proxy)
            if rc_term != 0:
                problems.append("SIGTERM during the outage: exit %s, not 0" % rc_term)
            legacy, idem = rows
            if idem["duplicates"] or idem["order_breaks"]:
                problems.append("idempotent: %d duplicates, %d out of order" % (idem["duplicates"],
                                                                               idem["order_breaks"]))
            if legacy["duplicates"] > 2 * s.LEGACY_IN_FLIGHT_RECORDS:
                problems.append("legacy: %d duplicates > 2 stops x %d" % (legacy["duplicates"],
                                                                          s.LEGACY_IN_FLIGHT_RECORDS))
            for r in rows:
                if r["acked"] < r["sent"] * 0.9:
                    problems.append("%s: only %d of %d acknowledged" % (r["client"], r["acked"], r["sent"]))
            if left != 0:
                problems.append("the spool still holds %s records" % left)
            self.finish(problems, [proxy], "restart during an outage")
        finally:
            run.close()

    # -- 4 ------------------------------------------------------------------

    def test_4_disk_full(self):
        topics = {c: "full-%s" % c for c in ("kp010", "idempotent")}
        run = Run("full", topics.values())
        mount = None
        try:
            spool_dir = os.path.join(run.dir, "fs", "spool")
            os.makedirs(os.path.dirname(spool_dir))
            if os.geteuid() == 0 and subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs",
                                                     os.path.dirname(spool_dir)]).returncode == 0:
                mount = os.path.dirname(spool_dir)
                conf = spool_conf(spool_dir, max_bytes=1 << 30, segment_bytes=1 << 20)
                how = "a 16 MiB tmpfs, 8 MiB of it taken"
            else:
                conf = spool_conf(spool_dir, max_bytes=1 << 20, segment_bytes=1 << 16)
                how = "spool.max_bytes = 1 MiB (not root: no tmpfs)"
            os.makedirs(spool_dir)
            filler = os.path.join(os.path.dirname(spool_dir), "filler")
            with open(filler, "wb") as f:
                f.write(b"\0" * (8 << 20 if mount else 0))
            proxy = run.proxy("proxy", spool=conf)
            rate, value_bytes = 300, 1024
            phases = 8.0
            duration = 3 + 3 * phases
            clients = run.start_clients([
                client_spec("kp010", "kafka-python", proxy.bootstrap, topics["kp010"], rate, duration, value_bytes,
                            conf={"api_version": [0, 10], "retries": 0, "request_timeout_ms": 10000}, flush_s=30),
                client_spec("idempotent", "confluent", proxy.bootstrap, topics["idempotent"], rate, duration,
                            value_bytes, conf={**s.COMMON, **s.IDEMPOTENT}, flush_s=30)])
            time.sleep(3)
            run.kafka(up=False)
            t_down = time.time()
            time.sleep(phases)          # fills the disk
            alive_full = proxy.alive()
            readyz_full = proxy.readyz()
            if mount:
                os.unlink(filler)       # room comes back while Kafka is still down
            t_room = time.time()
            time.sleep(phases)
            run.kafka(up=True)
            results = {c.spec["name"]: c.finish(timeout=duration + 90) for c in clients}
            left = proxy.wait_drained(20)
            rows = [read_back(run, topics[c], results[c], value_bytes) for c in ("kp010", "idempotent")]
            kp = results["kp010"]
            failed_full = [st for st, t in zip(kp["status"], kp["answered"]) if st not in (0, 1) and t_down <= t]
            ok_after_room = sum(1 for st, t in zip(kp["status"], kp["answered"])
                                if st == 1 and t >= t_room + 1 and t < t_room + phases)
            log = proxy.log_text()
            self.report("disk full on %s, Kafka down" % how, rows,
                        "kafka-python errors after the disk filled: %d %s; OK answers after room came back, Kafka "
                        "still down: %d; proxy alive when full: %s, /readyz %s; left %s" % (
                            len(failed_full), dict(s.collections.Counter(failed_full).most_common(3)), ok_after_room,
                            alive_full, readyz_full, left))
            problems = []
            self.common_checks(problems, rows, proxy)
            if not alive_full or not proxy.alive():
                problems.append("the proxy died")
            if not failed_full:
                problems.append("no client error while the spool was full")
            wrong = [e for e in failed_full if "(retriable)" not in e]
            if wrong:
                problems.append("errors that are not retriable: %s" % sorted(set(wrong))[:5])
            if mount and ok_after_room == 0:
                problems.append("nothing accepted after room came back")
            if rows[1]["duplicates"] or rows[1]["order_breaks"] or rows[1]["failed"]:
                problems.append("idempotent: %d duplicates, %d out of order, %d failed" % (
                    rows[1]["duplicates"], rows[1]["order_breaks"], rows[1]["failed"]))
            if readyz_full != 503 and "No space" not in log:
                problems.append("the full spool is neither not-ready (/readyz %s) nor logged" % readyz_full)
            if left != 0:
                problems.append("the spool still holds %s records" % left)
            self.finish(problems, [proxy], "disk full")
        finally:
            run.close()
            if mount:
                subprocess.run(["umount", "-l", mount])

    # -- 5 ------------------------------------------------------------------

    def test_5_corruption(self):
        topic, n, value_bytes = "corrupt-legacy", 3000, 200
        run = Run("corrupt", [topic])
        try:
            spool_dir = os.path.join(run.dir, "spool")
            proxy = run.proxy("proxy", spool=spool_conf(spool_dir, segment_bytes=1 << 16))
            (client,) = run.start_clients([
                client_spec("legacy", "confluent", proxy.bootstrap, topic, 1000, 10, value_bytes,
                            conf={**s.COMMON, **s.LEGACY}, max_records=n, flush_s=60)])
            run.kafka(up=False)         # nothing delivered: every record stays in the segments
            result = client.finish(timeout=120)
            rc = proxy.terminate(timeout=60)
            segs = sorted(f for f in os.listdir(spool_dir) if f.endswith(".seg"))
            self.assertGreaterEqual(len(segs), 3, "segments: %s\n%s" % (segs, proxy.log_text()[-3000:]))
            keys = {}
            for f in segs:
                with open(os.path.join(spool_dir, f), "rb") as fh:
                    data = fh.read()
                # a record's value starts "legacy-<i>-x" (uncompressed v2 batches)
                keys[f] = [(m.start(), "legacy-" + m.group(1).decode())
                           for m in re.finditer(rb"legacy-(\d+)-x", data)]
            flipped, torn = segs[len(segs) // 2 - 1], segs[-1]
            path = os.path.join(spool_dir, flipped)
            size = os.path.getsize(path)
            flip_at = size // 2
            with open(path, "r+b") as fh:
                fh.seek(flip_at)
                b = fh.read(8)
                fh.seek(flip_at)
                fh.write(bytes(x ^ 0x5A for x in b))
            tear_at = max(40, os.path.getsize(os.path.join(spool_dir, torn)) * 2 // 3)
            os.truncate(os.path.join(spool_dir, torn), tear_at)
            # What may be lost: the flipped segment from the entry holding the
            # flip on, the torn one from the entry holding the tear on (an
            # entry is at most one client request: 200 records back).
            may_lose = set()
            for f, cut in ((flipped, flip_at), (torn, tear_at)):
                ks = keys[f]
                first = next((i for i, (pos, _) in enumerate(ks) if pos >= cut), len(ks))
                may_lose.update(k for _, k in ks[max(0, first - 200):])
            run.kafka(up=True)
            proxy.start()
            left = proxy.wait_drained(120)
            corrupt = proxy.scrape(CORRUPT)
            row = read_back(run, topic, result, value_bytes)
            log = proxy.current_log()
            lost = set(row["lost_keys"])
            self.report("corruption: %d segments, %s flipped at %d of %d, %s torn at %d" % (
                len(segs), flipped, flip_at, size, torn, tear_at), [row],
                "spool_corrupt_bytes_total %s; lost %d (at most %d may be); SIGTERM exit %s; files now %s" % (
                    corrupt, len(lost), len(may_lose), rc, sorted(os.listdir(spool_dir))))
            problems = []
            if row["acked"] != n:
                problems.append("only %d of %d acknowledged before the stop" % (row["acked"], n))
            if row["damaged"] or row["strangers"] or row["duplicates"]:
                problems.append("%d damaged, %d strangers, %d duplicates delivered" % (
                    row["damaged"], row["strangers"], row["duplicates"]))
            if lost - may_lose:
                problems.append("%d records lost outside the damaged ranges, e.g. %s" % (
                    len(lost - may_lose), sorted(lost - may_lose)[:5]))
            if not corrupt:
                problems.append("spool_corrupt_bytes_total is %s" % corrupt)
            for f in (flipped, torn):
                if f not in log:
                    problems.append("no log line names %s" % f)
            if not os.path.exists(os.path.join(spool_dir, flipped + ".corrupt")) and flipped in os.listdir(spool_dir):
                problems.append("%s not moved aside" % flipped)
            if left != 0:
                problems.append("the spool still holds %s records" % left)
            if rc != 0:
                problems.append("SIGTERM with Kafka down: exit %s" % rc)
            self.finish(problems, [proxy], "corruption")
        finally:
            run.close()


def options(parser):
    parser.add_argument("--full", action="store_true")


if __name__ == "__main__":
    run_tests(sys.modules[__name__], "--cluster", options=options)
