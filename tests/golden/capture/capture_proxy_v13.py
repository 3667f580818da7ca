#!/usr/bin/env python3
"""Golden frames of Produce v13 (topics by id, KIP-516) between the real Java
producer (kafka-clients 4.4.0) and produce-proxy in front of a real Apache
Kafka 4.4.0 broker, recorded by the relay of kafka4_relay.py between the
client and the proxy. Run by capture_proxy_v13.sh, which fetches the client
and compiles java/GoldenProducer.java first.

    capture_proxy_v13.py PROXY_BINARY CLASSES_DIR CLIENT_LIBS_DIR [--out DIR]

The proxy listens on 127.0.0.1:P and advertises the relay, 127.0.0.1:R, so
the client's bootstrap and node connections both pass the relay unchanged.
Writes the cases java_kafka_clients_4_4_0_via_proxy_* (requests as the client
sent them, responses named produce_proxy_to_<case>) like capture_kafka4.py,
replaces their MANIFEST rows and prints a counts table. Exits 1 when a client
fails or the proxy did not offer Produce v13.
"""
import argparse
import datetime
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(REPO, "tests", "kafka"))
sys.path.insert(0, os.path.join(REPO, "tests", "daemon"))

from capture_kafka4 import JVM, TOPIC, records_sent, write_cases  # noqa: E402
from daemon_support import Proxy  # noqa: E402
from kafka4_relay import Relay  # noqa: E402
from kafka_cluster import KafkaCluster, free_ports, kafka_version  # noqa: E402

CLIENT = "4.4.0"
CASES = [("java_kafka_clients_4_4_0_via_proxy_idempotent_none_headers", "none", True),
         ("java_kafka_clients_4_4_0_via_proxy_idempotent_zstd", "zstd", False)]
EXAMPLE_CONFIG = os.path.join(REPO, "config", "produce-proxy.example.toml")


def proxy_version(binary):
    p = subprocess.run([binary, "--version"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=30)
    return p.stdout.strip().splitlines()[0] if p.stdout.strip() else "produce-proxy (version unknown)"


def run_case(case, codec, headers, classes, libs, relay, relay_port):
    cmd = ["timeout", "60", "java"] + JVM + ["-cp", "%s:%s/*" % (classes, libs), "GoldenProducer",
                                           "127.0.0.1:%d" % relay_port, TOPIC, codec, "1" if headers else "0"]
    relay.set_case(case)
    t0 = time.time()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    closed = relay.wait_closed(case, 10)
    relay.set_case(None)
    time.sleep(0.3)
    out = {"exit_code": p.returncode, "stderr_tail": p.stderr[-300:], "seconds": round(time.time() - t0, 1)}
    try:
        out["report"] = json.loads(p.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        out["stdout_tail"] = p.stdout[-300:]
    if not closed:
        out["note"] = "a connection was still open 10 s after the client exited"
    print("%s: exit %d, %d connections, %.1f s" % (case, p.returncode, len(relay.connections_of(case)),
                                                   out["seconds"]), file=sys.stderr)
    config = {"main": "tests/golden/capture/java/GoldenProducer.java",
              "bootstrap.servers": "127.0.0.1:%d" % relay_port, "acks": "all", "enable.idempotence": "true",
              "compression.type": codec, "linger.ms": "50", "client.id": "golden-java-%s" % CLIENT,
              "max.in.flight.requests.per.connection": "5", "headers": headers}
    return {"case": case, "peer": "kafka-clients (Java KafkaProducer)",
            "version": "org.apache.kafka:kafka-clients %s" % CLIENT, "role": "producer", "command": cmd,
            "config": config, "outcome": out, "records_sent": records_sent(headers),
            "conns": relay.connections_of(case)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("proxy_binary")
    ap.add_argument("classes")
    ap.add_argument("libs")
    ap.add_argument("--out", default=os.path.join(REPO, "tests", "golden"))
    args = ap.parse_args()
    date = datetime.date.today().isoformat()
    kafka = kafka_version()
    proxy_port, relay_port, metrics_port = free_ports(3)
    broker = "%s, in front of Apache Kafka %s (org.apache.kafka:kafka_2.13:%s, KRaft, 1 node, " \
             "tests/kafka/kafka_cluster.py)" % (proxy_version(args.proxy_binary), kafka, kafka)
    runs = []
    with KafkaCluster(nodes=1, broker_config={"auto.create.topics.enable": "false"}) as k:
        k.create_topic(TOPIC, partitions=2)
        proxy = Proxy(args.proxy_binary, config_path=EXAMPLE_CONFIG, sets=[
            'upstream.bootstrap_servers=["%s"]' % k.bootstrap,
            'listener.address="127.0.0.1:%d"' % proxy_port,
            'listener.advertised_address="127.0.0.1:%d"' % relay_port,
            'metrics.address="127.0.0.1:%d"' % metrics_port])
        try:
            if not proxy.wait_ready(timeout=60):
                raise SystemExit("produce-proxy not ready:\n" + proxy.text()[-3000:])
            relay = Relay(relay_port, proxy_port).start()
            for case, codec, headers in CASES:
                runs.append(run_case(case, codec, headers, args.classes, args.libs, relay, relay_port))
            relay.stop()
        finally:
            proxy.stop(timeout=30)
    write_cases(runs, args.out, date, broker, "produce_proxy",
                {"relay_port": relay_port, "proxy_port": proxy_port})
    bad = [r["case"] for r in runs if r["outcome"]["exit_code"] != 0]
    if bad:
        print("clients that failed: %s" % bad, file=sys.stderr)
        return 1
    produce = [ln for ln in open(os.path.join(args.out, "MANIFEST.tsv"))
               if "_via_proxy_" in ln and ln.startswith("produce_request/v13/")]
    if not produce:
        print("no Produce v13 request was captured: the proxy did not offer v13", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
