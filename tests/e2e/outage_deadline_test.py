#!/usr/bin/env python3
"""Issue 40: an upstream outage must not turn client retries into duplicates.

  /usr/bin/python3 tests/e2e/outage_deadline_test.py --proxy BINARY --cluster TEST_CLUSTER [--full] [unittest args]

The test cluster (3 brokers, one topic of 3 partitions per client) goes dark
(every broker `down`) while paced confluent-kafka producers run, then comes
back (`up`). At once, each on its own topic:

  direct      non-idempotent, straight to the test cluster (the baseline)
  proxy       non-idempotent, through produce-proxy
  legacy      legacy mode through the proxy (api.version.request=false,
              broker.version.fallback=0.9.0.1: Produce v1, magic 0)
  idempotent  enable.idempotence=true through the proxy

Every record's key and value are unique, so the log read back counts each
client's duplicates and lost acknowledged records. Asserted: no acknowledged
record is lost; the idempotent client has no duplicate; the others have at
most the direct baseline's duplicates plus the records the proxy reported in
flight upstream at their deadline (client_deadline_records_total
{outcome="in_flight"}). Before the fix the proxy held every request through the
outage, the clients resent them, and tens of thousands of copies landed.

CI form: a 30 s outage, request.timeout.ms=5000, socket.timeout.ms=10000,
message.timeout.ms=120000, 1,000 records/s per client (~50 s). --full adds a
75 s outage with librdkafka's default timeouts and a 150 s outage (2,000
records/s each; ~8 min).
"""
import os
import sys
import unittest

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import outage_support as s  # noqa: E402
from daemon_support import run_tests  # noqa: E402

ARGS = None


class OutageDeadline(unittest.TestCase):
    maxDiff = None

    def run_case(self, outage_s, timeouts, rate, label):
        res = s.cluster_outage(ARGS.proxy, ARGS.cluster, outage_s, timeouts, rate)
        print("\n" + s.describe(res, label), file=sys.stderr)
        s.check_outage(self, res, label)

    def test_1_outage_30s_short_timeouts(self):
        self.run_case(30, s.SHORT_TIMEOUTS, 2000 if ARGS.full else 1000,
                      "30 s outage, request.timeout.ms=5000, socket.timeout.ms=10000, message.timeout.ms=120000")

    def test_2_outage_75s_default_timeouts(self):
        if not ARGS.full:
            self.skipTest("--full only")
        self.run_case(75, s.DEFAULT_TIMEOUTS, 2000, "75 s outage, librdkafka's default timeouts")

    def test_3_outage_150s_default_timeouts(self):
        if not ARGS.full:
            self.skipTest("--full only")
        self.run_case(150, s.DEFAULT_TIMEOUTS, 2000, "150 s outage, librdkafka's default timeouts")


def options(parser):
    parser.add_argument("--full", action="store_true")


if __name__ == "__main__":
    run_tests(sys.modules[__name__], "--cluster", options=options)
