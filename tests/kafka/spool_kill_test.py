#!/usr/bin/env python3
"""The kill -9 loop of "Acknowledged means durable" against a real 3-node
Apache Kafka 4.4.0 (docs/design/SPOOL.md; docs/TESTING.md "The spool's
faults").

  /usr/bin/python3 tests/kafka/spool_kill_test.py --proxy BINARY [--full] [--seed N]

One KRaft cluster (3 combined nodes), four topics of 3 partitions,
replication factor 3, min.insync.replicas=2. Two proxies built from BINARY,
each with a spool directory: `spool.ack = "spool"` and `spool.ack =
"upstream"` (the spool then journals the idempotent client's records before
they go upstream and keeps its dedup state; the legacy client's records pass
straight through).
Into each, at a steady rate, in their own processes (tests/e2e/spool_support.py):

  legacy      confluent-kafka in kcat's legacy mode (Produce v1, no producer id)
  idempotent  confluent-kafka, enable.idempotence=true

Both proxies are killed with kill -9 at the same moments, at random intervals
(seeded; the seed is printed and --seed replays it), and restarted at once on
the same ports and spool directories, while partition leaders move: a broker
stopped gracefully (its leaders move to the others) and restarted, and
leaders moved by reassignment and preferred election (KafkaCluster.move_leader).

Read back from Kafka with kcat (every key and value unique), asserted:
  spool mode     no acknowledged record lost, none damaged, per-partition
                 order kept for both clients, the idempotent client exactly
                 once, the legacy client's duplicates at most one crash
                 window per kill (spool_support.LEGACY_IN_FLIGHT_RECORDS:
                 what it can have in flight), reported; the spool drained.
  upstream mode  no acknowledged record lost, none damaged; the idempotent
                 client exactly once and in order (SPOOL.md, "Journaled in
                 upstream mode"); the legacy client's duplicates reported.

CI form (default): 40 s of kills every 2-3 s (at least 12), one broker
stopped and restarted, 300 records/s per client; about 1.5 minutes with
Kafka's start on a quiet 2-core box. --full: the issue's shape, 2 minutes of
kills every 2-5 s (at least 20), brokers stopped and restarted in turn with
leaders moved by reassignment between (at least 3 steps that move leaders),
500 records/s per client.

PP_SPOOL_KEEP=DIR keeps the proxies' logs and spools. Every wait is bounded;
everything binds to 127.0.0.1.
"""
import argparse
import os
import random
import shutil
import sys
import threading
import time
import unittest

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(REPO, "tests", "e2e"))

from kafka_cluster import KafkaCluster, KafkaHarnessError  # noqa: E402
import spool_support as s  # noqa: E402

ARGS = None
MODES = ("spool", "upstream")
KINDS = ("legacy", "idempotent")
SHUTDOWN = "[shutdown]\ndrain_timeout_ms = 3000\n"
RESTORED = "spool: restored the dedup state of"

# kill_s: how long the kills go on; every: the interval between two kills,
# uniform in it; plan: the leader moves, one after the other from `first_s`
# into the kill phase, `gap_s` apart, none started in its last 10 s:
# "stop" (gracefully, the broker leading most partitions: its leaders move to
# the others), "restart" (the one stopped; leaders stay where they moved, as
# auto.leader.rebalance.enable is off), "move" (one partition's leader moved
# by reassignment and preferred election, a JVM tool: ~15 s on 2 busy cores).
FORMS = {
    "ci": {"kill_s": 40.0, "every": (2.0, 3.0), "min_kills": 12, "rate": 300, "first_s": 5.0, "gap_s": 3.0,
           "plan": ["stop", "restart"], "min_moves": 1},
    "full": {"kill_s": 120.0, "every": (2.0, 5.0), "min_kills": 20, "rate": 500, "first_s": 5.0, "gap_s": 3.0,
             "plan": ["stop", "restart", "move", "stop", "restart", "move", "stop", "restart"], "min_moves": 3},
}
WARMUP_S, AFTER_S = 3.0, 3.0


def create_topics(bootstrap, names):
    """All at once with kafka-python's admin client (one JVM per topic takes seconds each)."""
    from kafka.admin import KafkaAdminClient, NewTopic
    admin = KafkaAdminClient(bootstrap_servers=bootstrap.split(","), client_id="pp-spool-kill-admin",
                             request_timeout_ms=30000)
    try:
        admin.create_topics([NewTopic(n, s.PARTITIONS, 3, topic_configs={"min.insync.replicas": "2"})
                             for n in names], timeout_ms=30000)
    finally:
        admin.close()


def leaders(kafka, topics):
    """{(topic, partition): leader} as a live broker says."""
    out = {}
    for t in topics:
        for p, state in kafka.describe(t).items():
            out[(t, p)] = state.leader
    return out


class LeaderMoves(threading.Thread):
    """Runs `form`'s plan against `kafka` from `t0` (monotonic): what each step did, how many partition leaders changed with it, and the
    errors, if any."""

    def __init__(self, kafka, topics, form, t0):
        super().__init__(daemon=True)
        self.kafka, self.topics, self.form, self.t0 = kafka, list(topics), form, t0
        self.events, self.errors = [], []
        self.moved = 0
        self.moves = 0       # steps that moved at least one leader
        self.stopped = None
        self.halt = threading.Event()     # set: no new step
        self.done = threading.Event()     # set by the thread: no step running
        self.release = threading.Event()  # set: the thread may end

    def run(self):
        # The thread stays until released: a broker it restarted dies with
        # it (KafkaCluster starts brokers with PR_SET_PDEATHSIG, which
        # follows the spawning thread).
        try:
            self.steps()
        finally:
            self.done.set()
            self.release.wait(900)

    def steps(self):
        wait = self.t0 + self.form["first_s"] - time.monotonic()
        end = self.t0 + self.form["kill_s"] - 10.0
        for i, action in enumerate(self.form["plan"]):
            if self.halt.wait(max(0.0, wait)) or time.monotonic() > end:
                return
            try:
                before = leaders(self.kafka, self.topics)
                what = self.step(action, i, before)
                changed = self.settle(before)
                self.moved += changed
                self.moves += 1 if changed else 0
                self.events.append("+%.0f s %s: %d leaders moved" % (time.monotonic() - self.t0, what, changed))
                s.say("leaders: %s", self.events[-1])
            except (KafkaHarnessError, OSError, StopIteration) as e:
                self.errors.append("%s: %r" % (action, e))
            wait = self.form["gap_s"]

    def step(self, action, i, before):
        k = self.kafka
        if action == "stop":
            victim = max(k.broker_ids, key=lambda b: sum(1 for l in before.values() if l == b))
            k.stop_broker(victim)
            self.stopped = victim
            return "broker %d stopped" % victim
        if action == "restart":
            victim, self.stopped = self.stopped, None
            if victim is None:
                raise KafkaHarnessError("no broker stopped to restart")
            k.restart(victim, timeout=90)
            return "broker %d restarted" % victim
        topic = self.topics[i % len(self.topics)]  # "move"
        state = k.describe(topic)[0]
        to = next(b for b in state.isr if b != state.leader)
        k.move_leader(topic, 0, to)
        return "%s-0 moved from broker %d to %d" % (topic, state.leader, to)

    def settle(self, before, timeout=20.0):
        """The partitions whose leader changed, once every one has a leader."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                now = leaders(self.kafka, self.topics)
                if all(l >= 0 for l in now.values()) or time.monotonic() > deadline:
                    return sum(1 for tp, l in now.items() if l != before.get(tp))
            except (KafkaHarnessError, OSError):
                if time.monotonic() > deadline:
                    raise
            time.sleep(0.2)


def spool_conf(directory, ack):
    return {"dir": directory, "ack": ack, "fsync": "group", "segment_bytes": 1 << 20}


def wait_drained(proxy, timeout):
    """Waits until the spool holds no record; the last value seen."""
    deadline = time.monotonic() + timeout
    value = None
    while time.monotonic() < deadline:
        value = proxy.scrape("produce_proxy_spool_records")
        if value == 0:
            return 0
        time.sleep(0.5)
    return value


class SpoolKillLoop(unittest.TestCase):
    maxDiff = None

    def test_kill9_loop_with_leader_moves(self):
        form = FORMS["full" if ARGS.full else "ci"]
        seed = ARGS.seed if ARGS.seed is not None else random.SystemRandom().randrange(1 << 31)
        rng = random.Random(seed)
        s.say("kill schedule seed %d (--seed %d replays it)", seed, seed)
        t_begin = time.monotonic()
        kafka = KafkaCluster(nodes=3)
        kafka.start()
        self.addCleanup(kafka.stop)
        s.say("3-node Kafka ready in %.0f s", kafka.startup_seconds)
        topics = {(m, c): "k9-%s-%s" % (m, c) for m in MODES for c in KINDS}
        create_topics(kafka.bootstrap, topics.values())
        for t in topics.values():
            kafka.wait_until("leaders and full ISRs of %s" % t, lambda t=t: len(kafka.describe(t)) == s.PARTITIONS and all(
                p.leader >= 0 and len(p.isr) == 3 for p in kafka.describe(t).values()), 60)
        work = s.workdir("pp-spool-kill-")
        if not s.keep_dir():
            self.addCleanup(shutil.rmtree, work, True)
        proxies = {}
        for m in MODES:
            proxies[m] = s.SpoolProxy(ARGS.proxy, kafka.bootstrap, work, name="proxy-" + m, extra=SHUTDOWN,
                                      spool=spool_conf(os.path.join(work, "spool-" + m), m))
            self.addCleanup(self.stop_proxy, proxies[m])
        for m in MODES:
            proxies[m].start()
        duration = WARMUP_S + form["kill_s"] + AFTER_S
        specs = []
        for m in MODES:
            for c in KINDS:
                conf = {**s.COMMON, **(s.LEGACY if c == "legacy" else s.IDEMPOTENT)}
                specs.append({"name": "%s-%s" % (m, c), "kind": "confluent", "bootstrap": proxies[m].bootstrap,
                              "topic": topics[(m, c)], "rate": form["rate"], "duration": duration,
                              "value_bytes": 64, "flush_s": 90, "conf": conf})
        clients = s.start_clients(specs, work)
        for c in clients:
            self.addCleanup(c.kill)
        time.sleep(WARMUP_S)

        t0 = time.monotonic()
        moves = LeaderMoves(kafka, topics.values(), form, t0)
        self.addCleanup(moves.release.set)  # before kafka.stop: cleanups run last first
        moves.start()
        kills, restart_s = self.kill_loop(proxies, rng, form, t0)
        kill_phase = time.monotonic() - t0
        moves.halt.set()
        moves.done.wait(120)

        results = {c.spec["name"]: c.finish(timeout=duration + 150) for c in clients}
        left = wait_drained(proxies["spool"], 120)
        rows = {}
        for m in MODES:
            for c in KINDS:
                name = "%s-%s" % (m, c)
                rows[name] = s.count(results[name], s.read_log(kafka.alive_bootstrap, topics[(m, c)]), 64)
        restored = {m: sum(1 for p in proxies[m].logs[1:] if RESTORED in open(p, errors="replace").read())
                    for m in MODES}
        replayed = proxies["spool"].scrape("produce_proxy_spool_replayed_batches_total")
        rcs = {m: self.stop_proxy(proxies[m]) for m in MODES}
        wall = time.monotonic() - t_begin
        print("\nkill -9 loop against Kafka 4.4.0 (3 nodes, rf 3, min.insync.replicas=2), %s form, seed %d:\n"
              "%d kills in %.0f s (every %.0f-%.0f s), restarts listening after %.2f s at most; %d records/s per "
              "client\nleader moves: %s (%d partition leaders changed)\n%s\nspool records left %s; "
              "spool_replayed_batches_total (last incarnation) %s; incarnations that restored client dedup state: "
              "%s; SIGTERM exits %s; legacy bound %d per kill; wall %.0f s" % (
                  "full" if ARGS.full else "CI", seed, kills, kill_phase, form["every"][0], form["every"][1],
                  max(restart_s or [0]), form["rate"], "; ".join(moves.events) or "none", moves.moved,
                  s.table([rows["%s-%s" % (m, c)] for m in MODES for c in KINDS]), left, replayed, restored,
                  rcs, s.LEGACY_IN_FLIGHT_RECORDS, wall), file=sys.stderr)
        problems = self.check(rows, kills, form, moves, left, proxies)
        problems += ["%s: the last incarnation exited %s on SIGTERM, not 0" % (m, rc) for m, rc in rcs.items() if rc]
        if problems:
            self.fail("kill -9 loop (seed %d):\n  %s\nproxy logs (tails):\n%s" % (
                seed, "\n  ".join(problems), "\n".join(p.log_text()[-3000:] for p in proxies.values())))

    def kill_loop(self, proxies, rng, form, t0):
        """kill -9 of both proxies at the same moments, each restarted at once;
        (kills, seconds until each restart listened)."""
        kills, restart_s = 0, []
        next_kill = t0 + rng.uniform(*form["every"])
        while next_kill < t0 + form["kill_s"]:
            time.sleep(max(0.0, next_kill - time.monotonic()))
            t_kill = time.monotonic()
            for p in proxies.values():
                if not p.alive():
                    raise AssertionError("%s exited by itself before kill %d (%s):\n%s" % (
                        p.name, kills + 1, p.proc.returncode, p.log_text()[-4000:]))
                p.kill9()
            for p in proxies.values():
                p.start(wait=False)
            for p in proxies.values():
                if not p.wait_listening(60):
                    raise AssertionError("%s does not listen after kill %d:\n%s" % (p.name, kills + 1,
                                                                                    p.log_text()[-4000:]))
            restart_s.append(time.monotonic() - t_kill)
            kills += 1
            next_kill = t_kill + rng.uniform(*form["every"])
        return kills, restart_s

    def check(self, rows, kills, form, moves, left, proxies):
        problems = []
        if kills < form["min_kills"]:
            problems.append("only %d kills (at least %d)" % (kills, form["min_kills"]))
        if moves.errors or moves.moves < form["min_moves"]:
            problems.append("leader moves: %d steps moved leaders (at least %d), errors %s" % (
                moves.moves, form["min_moves"], moves.errors))
        for name, r in rows.items():
            if r["lost_acked"]:
                problems.append("%s: %d acknowledged records not in the log, e.g. %s" % (
                    name, r["lost_acked"], r["lost_examples"]))
            if r["strangers"] or r["damaged"]:
                problems.append("%s: %d records it never sent, %d damaged" % (name, r["strangers"], r["damaged"]))
            if r["acked"] < r["sent"] // 2:
                problems.append("%s: only %d of %d acknowledged" % (name, r["acked"], r["sent"]))
        for name in ("spool-legacy", "spool-idempotent", "upstream-idempotent"):
            if rows[name]["order_breaks"]:
                problems.append("%s: %d records out of order" % (name, rows[name]["order_breaks"]))
        for name in ("spool-idempotent", "upstream-idempotent"):
            if rows[name]["duplicates"]:
                problems.append("%s: %d duplicates" % (name, rows[name]["duplicates"]))
        bound = kills * s.LEGACY_IN_FLIGHT_RECORDS
        if rows["spool-legacy"]["duplicates"] > bound:
            problems.append("spool-legacy: %d duplicates > %d kills x %d" % (
                rows["spool-legacy"]["duplicates"], kills, s.LEGACY_IN_FLIGHT_RECORDS))
        if left != 0:
            problems.append("the spool still holds %s records" % left)
        for p in proxies.values():
            for i, (how, rc) in enumerate(p.exits):
                if how == "gone":
                    problems.append("%s incarnation %d exited by itself (%s)" % (p.name, i, rc))
        return problems

    @staticmethod
    def stop_proxy(proxy):
        """SIGTERM (idempotent); the exit code of the last incarnation."""
        if proxy.proc is None or (proxy.exits and not proxy.alive()):
            return proxy.exits[-1][1] if proxy.exits else None
        return proxy.terminate(timeout=60)


def main():
    global ARGS
    ap = argparse.ArgumentParser(add_help=False)
    ap.add_argument("--proxy", required=True)
    ap.add_argument("--full", action="store_true")
    ap.add_argument("--seed", type=int)
    ARGS, rest = ap.parse_known_args()
    unittest.main(module=sys.modules[__name__], argv=[sys.argv[0]] + rest, verbosity=2, warnings="ignore")


if __name__ == "__main__":
    main()
