#!/usr/bin/env python3
"""The spool's replay meeting the test cluster's faults (docs/design/SPOOL.md,
"Why replay is exactly once"; PIPELINE.md C.14; docs/TESTING.md "The spool's
faults"): the shipped binary in ack = "spool", killed with -9 while batches
are in flight, restarted while the test cluster drops Produce responses and
flips partition leaders, so the restored batches (re-sent with their
journaled producer id, epoch and sequences, one at a time per partition,
then a fresh identity) go through those faults.

  /usr/bin/python3 tests/e2e/spool_replay_faults_test.py --proxy BINARY --cluster TEST_CLUSTER [unittest args]

Clients: confluent-kafka in their own processes (spool_support.Client),
kcat's legacy mode (Produce v1, no producer id) and enable.idempotence,
paced, 3 partitions each, every key and value unique.

1. Dropped responses and leader flips: the clients produce; the test
   cluster delays responses and drops every Produce response (appended,
   never answered) for the last seconds before the kill -9, so the spool
   holds unresolved batches whose records are already in the log (checked
   with `spool inspect`). The restart meets every response cut for its
   first second, then 30 % of them cut, and every partition's leader moved
   every 250 ms; the clients go on producing through it.
3. Killed again during the replay: as 1, with half the responses cut, and
   a second kill -9 1.5 s into the replay; the next start replays what is
   still owed.
2. A leader moved with an unreplicated tail: the same kill, then every
   partition moved to another broker that drops its last 2 batches (they
   were appended and never answered, so they are owed); the replay must
   write them again, once.

Both: every acknowledged record in the log, the idempotent client's exactly
once and in order, the legacy client's first copies in order and its
duplicates within the requests it had in flight at the kill, nothing
damaged; spool_replayed_batches_total > 0; a move to a fresh identity
(producer_epoch_bumps_total{reason="spool_replay"}); no replayed batch
renumbered (ambiguous_renumbered_total{reason="spool_replay"} = 0: this
broker never forgets a producer); the spool drained. The checker is shown
to reject doctored read-backs first. About 60 s.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
import unittest

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import spool_support as s  # noqa: E402
from daemon_support import run_tests  # noqa: E402

ARGS = None
SPOOL_RECORDS = "produce_proxy_spool_records"
REPLAYED = "produce_proxy_spool_replayed_batches_total"
AMBIGUOUS = 'produce_proxy_ambiguous_renumbered_total{reason="spool_replay"}'
BUMPS = 'produce_proxy_producer_epoch_bumps_total{reason="spool_replay"}'
BROKERS = 3
CLIENTS = ("legacy", "idempotent")
EXTRA = "[shutdown]\ndrain_timeout_ms = 3000\n"
# Upstream requests time out after 2 s, so silently dropped answers are
# retried within the test's time (a key of the [upstream] table SpoolProxy
# writes).
UPSTREAM_KEYS = "request_timeout_ms = 2000\n"


def series(text, name):
    """The value of one exact series (name with its labels) of a scrape; 0
    when absent (a labelled counter not yet counted is not exported)."""
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def problems_of(rows, kill_windows):
    """What the read-back shows wrong: rows are spool_support.count()'s."""
    problems = []
    for r in rows:
        if r["lost_acked"]:
            problems.append("%s: %d acknowledged records not in the log, e.g. %s" % (r["client"], r["lost_acked"],
                                                                                  r["lost_examples"]))
        if r["strangers"] or r["damaged"]:
            problems.append("%s: %d records never sent, %d damaged" % (r["client"], r["strangers"], r["damaged"]))
        if r["order_breaks"]:
            problems.append("%s: %d records out of order" % (r["client"], r["order_breaks"]))
        if r["acked"] == 0:
            problems.append("%s: nothing acknowledged" % r["client"])
        bound = 0 if r["client"] == "idempotent" else kill_windows * s.LEGACY_IN_FLIGHT_RECORDS
        if r["duplicates"] > bound:
            problems.append("%s: %d duplicates, at most %d allowed" % (r["client"], r["duplicates"], bound))
    return problems


_COMMANDS = threading.Lock()


def command(cluster, text):
    """One control command; the test cluster's stdin is shared by threads."""
    with _COMMANDS:
        return cluster.command(text)


def partitions(cluster):
    return json.loads(command(cluster, "stats"))["partitions"]


class Flipper(threading.Thread):
    """Moves every partition's leader every `every` s until stopped; sends
    `later` = (seconds, command) once on the way."""

    def __init__(self, cluster, every, later=None):
        super().__init__(daemon=True)
        self.cluster, self.every, self.later, self.flips = cluster, every, later, 0
        self.stop_event = threading.Event()

    def run(self):
        start = time.monotonic()
        while not self.stop_event.wait(self.every):
            command(self.cluster, "flip-leaders")
            self.flips += 1
            if self.later and time.monotonic() - start >= self.later[0]:
                command(self.cluster, self.later[1])
                self.later = None

    def stop(self):
        self.stop_event.set()
        self.join(10)


class SpoolReplayFaults(unittest.TestCase):
    maxDiff = None

    def test_0_checker_rejects_doctored_read_backs(self):
        """count() and problems_of() on a good read-back, then on doctored
        copies: each doctoring is caught."""
        status = [1] * 12
        rows = [(i % s.PARTITIONS, i // s.PARTITIONS, "idempotent-%d" % i, s.value_of("idempotent", i, 64))
                for i in range(12)]
        result = {"name": "idempotent", "status": status}
        self.assertEqual(problems_of([s.count(result, rows, 64)], 1), [])
        bad_value = rows[4][3][:-1] + "y"
        doctored = {
            "a record lost": rows[1:],
            "a record twice": rows + [rows[5]],
            "a damaged value": rows[:4] + [rows[4][:3] + (bad_value,)] + rows[5:],
            "two records of a partition swapped": [rows[3], rows[1], rows[2], rows[0]] + rows[4:],
            "a record in another partition": rows[:4] + [(0,) + rows[4][1:]] + rows[5:],
        }
        for what, bad in doctored.items():
            self.assertNotEqual(problems_of([s.count(result, bad, 64)], 1), [], what)

    def unresolved_batches(self, spool_dir):
        """How many unresolved batches `spool inspect` lists."""
        out = subprocess.run([ARGS.proxy, "spool", "inspect", spool_dir], capture_output=True, text=True, timeout=60)
        self.assertEqual(out.returncode, 0, out.stderr)
        m = re.search(r"^unresolved batches:.*$((?:\n  entry .*)*)", out.stdout, re.M)
        return len(m.group(1).strip().splitlines()) if m and m.group(1).strip() else 0

    def scenario(self, tag, before_kill, at_restart, after_restart, retain=5, mid_replay=None):
        """Clients through a proxy; `before_kill(cluster)` sets the faults
        that leave batches unresolved, kill -9, `at_restart(cluster)` the
        faults the replay meets (a Flipper or None), restart;
        `after_restart(cluster)` lifts them. With `mid_replay`, the first
        restart is killed again 1.5 s into its replay and
        `mid_replay(cluster)` called before the second. Returns the report's
        numbers."""
        topics = {c: "rf-%s-%s" % (tag, c) for c in CLIENTS}
        wd = s.workdir("pp-spool-replay-%s-" % tag)
        args = ["--brokers", str(BROKERS)]
        for t in topics.values():
            args += ["--topic", "%s:%d:%d" % (t, s.PARTITIONS, retain)]
        cluster = s.TestCluster(ARGS.cluster, *args)
        spool_dir = os.path.join(wd, "spool")
        proxy = s.SpoolProxy(ARGS.proxy, cluster.bootstrap, wd, extra=EXTRA, spool={
            "dir": spool_dir, "ack": "spool", "fsync": "group", "segment_bytes": 1 << 20})
        with open(proxy.config) as f:
            text = f.read()
        with open(proxy.config, "w") as f:
            f.write(text.replace("[upstream]\n", "[upstream]\n" + UPSTREAM_KEYS, 1))
        clients, flipper = [], None
        t0 = time.monotonic()
        try:
            proxy.start()
            rate, warmup, faulty, after = 300, 3.0, 2.5, 6.0
            duration = warmup + faulty + after
            clients = s.start_clients([
                {"name": c, "kind": "confluent", "bootstrap": proxy.bootstrap, "topic": topics[c], "rate": rate,
                 "duration": duration, "value_bytes": 64, "flush_s": 60,
                 "conf": {**s.COMMON, **(s.LEGACY if c == "legacy" else s.IDEMPOTENT)}} for c in CLIENTS], wd)
            time.sleep(warmup)
            before_kill(cluster)
            time.sleep(faulty)
            proxy.kill9()
            kills = 1
            unresolved = unresolved_first = self.unresolved_batches(spool_dir)
            in_log_at_kill = sum(p["records"] for p in partitions(cluster))
            flipper = at_restart(cluster)
            in_log_at_restart = sum(p["records"] for p in partitions(cluster))
            replay_cut = None
            if mid_replay:
                proxy.start()
                time.sleep(1.5)
                replay_cut = "every batch replayed from the spool is resolved" not in proxy.current_log()
                proxy.kill9()
                kills += 1
                unresolved = self.unresolved_batches(spool_dir)
                mid_replay(cluster)
            t_restart = time.monotonic()
            proxy.start()
            replay_done = proxy.wait_log("every batch replayed from the spool is resolved", 30)
            replay_s = time.monotonic() - t_restart
            flips_during_replay = flipper.flips if flipper else 0
            time.sleep(max(0.0, 3.0 - replay_s))
            if flipper:
                flipper.stop()
            after_restart(cluster)
            results = {c.spec["name"]: c.finish(timeout=duration + 90) for c in clients}
            deadline = time.monotonic() + 60
            left = None
            while time.monotonic() < deadline:
                left = proxy.scrape(SPOOL_RECORDS)
                if left == 0:
                    break
                time.sleep(0.2)
            metrics = proxy.metrics_text()
            rows = [s.count(results[c], s.read_log(cluster.bootstrap, topics[c]), 64) for c in CLIENTS]
            stats = partitions(cluster)
            numbers = {
                "unresolved batches at the first kill": unresolved_first,
                "at the last kill": unresolved,
                "kill -9s": kills,
                "records in the log at the kill": in_log_at_kill,
                "at the restart": in_log_at_restart,
                "replayed": series(metrics, REPLAYED),
                "replay resolved after (s)": round(replay_s, 2) if replay_done else None,
                "leader flips until the replay resolved": flips_during_replay,
                "ambiguous spool_replay": series(metrics, AMBIGUOUS),
                "spool_replay bumps": series(metrics, BUMPS),
                "broker duplicates": sum(p["duplicates"] for p in stats),
                "window violations": sum(p["window_violations"] for p in stats),
                "spool left": left,
                "seconds": round(time.monotonic() - t0, 1),
            }
            print("\n%s\n%s\n%s" % (tag, s.table(rows), numbers), file=sys.stderr)
            problems = problems_of(rows, kills)
            if replay_cut is False:
                problems.append("the first replay was done before its kill -9: nothing was cut")
            if unresolved == 0:
                problems.append("no unresolved batch in the spool at the kill: nothing to replay")
            if numbers["replayed"] != unresolved:
                problems.append("spool_replayed_batches_total is %s, not the %d batches owed" % (
                    numbers["replayed"], unresolved))
            if not replay_done:
                problems.append("the replay never resolved every restored batch")
            if numbers["spool_replay bumps"] < 1:
                problems.append("no move to a fresh identity after the replay")
            if numbers["ambiguous spool_replay"] != 0:
                problems.append("%s replayed batches renumbered" % numbers["ambiguous spool_replay"])
            if numbers["window violations"]:
                problems.append("%d window violations" % numbers["window violations"])
            if left != 0:
                problems.append("the spool still holds %s records" % left)
            if not proxy.alive():
                problems.append("the restarted proxy died")
            if problems:
                self.fail("%s:\n  %s\n%s" % (tag, "\n  ".join(problems), proxy.log_text()[-5000:]))
            return numbers
        finally:
            if flipper:
                flipper.stop()
            for c in clients:
                c.kill()
            if proxy.alive():
                proxy.proc.kill()
                proxy.proc.wait(timeout=10)
            cluster.stop()
            if not s.keep_dir():
                shutil.rmtree(wd, ignore_errors=True)

    def test_1_dropped_responses_and_leader_flips(self):
        def before_kill(cluster):
            command(cluster, "rtt 50")
            command(cluster, "drop-responses 1 silent")

        def at_restart(cluster):
            command(cluster, "drop-responses 1 close")   # every first answer cut, after the append
            flipper = Flipper(cluster, 0.25, later=(1.0, "drop-responses 0.3 close"))
            flipper.start()
            return flipper

        def after_restart(cluster):
            command(cluster, "drop-responses 0")
            command(cluster, "rtt 0")

        self.scenario("drops", before_kill, at_restart, after_restart, retain=20)

    def test_2_leader_moved_with_an_unreplicated_tail(self):
        topics = ["rf-tail-%s" % c for c in CLIENTS]

        def before_kill(cluster):
            command(cluster, "drop-responses 1 silent")

        def at_restart(cluster):
            command(cluster, "drop-responses 0")
            for p in partitions(cluster):
                if p["topic"] in topics:
                    command(cluster, "leader %s %d %d truncate 2" % (p["topic"], p["partition"],
                                                                     p["leader"] % BROKERS + 1))
            return None

        numbers = self.scenario("tail", before_kill, at_restart, lambda cluster: None)
        self.assertLess(numbers["at the restart"], numbers["records in the log at the kill"],
                        "the moves dropped no batch from the log")

    def test_3_killed_again_during_the_replay(self):
        def before_kill(cluster):
            command(cluster, "rtt 50")
            command(cluster, "drop-responses 1 silent")

        def at_restart(cluster):
            command(cluster, "drop-responses 0.5 close")
            flipper = Flipper(cluster, 0.25)
            flipper.start()
            return flipper

        def mid_replay(cluster):
            command(cluster, "drop-responses 0.3 close")

        def after_restart(cluster):
            command(cluster, "drop-responses 0")
            command(cluster, "rtt 0")

        self.scenario("again", before_kill, at_restart, after_restart, retain=20, mid_replay=mid_replay)


if __name__ == "__main__":
    run_tests(sys.modules[__name__], "--cluster")
