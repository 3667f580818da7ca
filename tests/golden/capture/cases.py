"""The golden-capture cases: which real client runs against the mock cluster,
with which exact command and records. run_cases() runs them one after
another (never overlapping, so split_frames.py can attribute each TCP
connection to the case whose time window contains its SYN) and writes one
JSON line per case.

Every client is bounded by coreutils `timeout`; the recorded command is the
exact argv that ran.
"""
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PY = "/usr/bin/python3"  # Debian's python has the kafka modules
TOPIC = "golden"

# Records as key/value strings; None is a null key or value (a tombstone).
# The last value is long and repetitive: librdkafka sends a batch
# uncompressed when compression would not make it smaller, so tiny values
# alone would never show a compressed v2 batch on the wire.
ORDERS = [
    {"key": "order-1", "value": "created"},
    {"key": "order-2", "value": "paid"},
    {"key": "order-1", "value": "shipped"},
    {"key": "order-3", "value": "note: " + "gift wrap please; " * 8},
]
# kafka-python: a tombstone and a keyless record pinned to partition 0 (a
# keyless record otherwise lands on a random partition, run to run).
ORDERS_TOMBSTONE = ORDERS + [
    {"key": "order-2", "value": None},
    {"key": None, "value": "no-key event", "partition": 0},
]
KCAT_HEADERS = [("trace-id", "abc123"), ("source", "kcat")]

LEGACY_CODECS = ["none", "gzip", "snappy", "lz4"]
ALL_CODECS = LEGACY_CODECS + ["zstd"]


def kcat_version():
    """"kcat 1.7.1 (librdkafka 2.0.2)" from `kcat -V`."""
    out = subprocess.run(["kcat", "-V"], capture_output=True, text=True).stdout
    m = re.search(r"Version (\S+) .*librdkafka (\S+)", out)
    return f"kcat {m.group(1)} (librdkafka {m.group(2)})" if m else out.strip()


def _kcat_lines(records):
    return "".join(f"{r['key']}:{r['value'] or ''}\n" if r["key"] is not None
                   else f"{r['value']}\n" for r in records)


def kcat_producer(name, fallback, codec, acks, records=ORDERS, headers=(),
                  null_empty=False, partition=None):
    cmd = ["timeout", "20", "kcat", "-P", "-b", "{bootstrap}", "-t", TOPIC, "-K:"]
    if partition is not None:
        cmd += ["-p", str(partition)]
    if fallback:
        cmd += ["-X", "api.version.request=false",
                "-X", f"broker.version.fallback={fallback}"]
    if codec != "none":
        cmd += ["-z", codec]
    cmd += ["-X", f"acks={acks}", "-X", "linger.ms=50"]
    for k, v in headers:
        cmd += ["-H", f"{k}={v}"]
    if null_empty:
        cmd += ["-Z"]
    sent = []
    for r in records:
        rec = {"key": r["key"], "value": r["value"],
               "headers": [{"key": k, "value": v} for k, v in headers]}
        if null_empty and not rec["value"]:
            rec["value"] = None
        elif rec["value"] is None:
            rec["value"] = ""
        sent.append(rec)
    return {"case": name, "peer": "kcat", "role": "producer", "argv": cmd,
            "stdin": _kcat_lines(records), "records_sent": sent,
            "config": {"broker.version.fallback": fallback, "compression": codec,
                       "acks": acks, "linger.ms": 50}}


def kcat_consumer(name, fallback):
    cmd = ["timeout", "20", "kcat", "-C", "-b", "{bootstrap}", "-t", TOPIC,
           "-o", "beginning", "-e", "-f", "%p %o %k %s\\n"]
    if fallback:
        cmd += ["-X", "api.version.request=false",
                "-X", f"broker.version.fallback={fallback}"]
    return {"case": name, "peer": "kcat", "role": "consumer", "argv": cmd,
            "config": {"broker.version.fallback": fallback}}


def kafka_python_producer(version, codec, acks, records=ORDERS_TOMBSTONE):
    vname = "auto" if version == "auto" else version.replace(",", "_")
    name = f"kafka_python_{vname}_{codec}_acks_{acks}"
    cmd = ["timeout", "30", PY, os.path.join(HERE, "kafka_python_peer.py"),
           "produce", "{bootstrap}", version, codec, acks, json.dumps(records)]
    sent = [{"key": r["key"], "value": r["value"], "headers": [],
             **({"partition": r["partition"]} if "partition" in r else {})}
            for r in records]
    return {"case": name, "peer": "kafka-python", "role": "producer", "argv": cmd,
            "records_sent": sent,
            "config": {"api_version": version, "compression_type": codec,
                       "acks": acks, "linger_ms": 50}}


def kafka_python_consumer(version, group=None):
    vname = "auto" if version == "auto" else version.replace(",", "_")
    name = f"kafka_python_{'group_' if group else ''}consumer_{vname}"
    cmd = ["timeout", "40", PY, os.path.join(HERE, "kafka_python_peer.py"),
           "consume", "{bootstrap}", version, group or "-"]
    return {"case": name, "peer": "kafka-python", "role": "consumer", "argv": cmd,
            "config": {"api_version": version, "group_id": group,
                       "auto_offset_reset": "earliest"}}


def confluent_idempotent(codec, records):
    config = {"bootstrap.servers": "{bootstrap}", "enable.idempotence": True,
              "linger.ms": 50, "compression.type": codec}
    cmd = ["timeout", "30", PY, os.path.join(HERE, "confluent_peer.py"),
           json.dumps(config), json.dumps(records)]
    sent = [{"key": r["key"], "value": r["value"], "headers": r.get("headers", [])}
            for r in records]
    return {"case": f"confluent_kafka_idempotent_{codec}", "peer": "confluent-kafka",
            "role": "producer", "argv": cmd, "records_sent": sent, "config": config}


def all_cases(have_python_codecs):
    cases = []
    # Magic 2 first, so the consumers later find data in the mock.
    for codec in ALL_CODECS:
        cases.append(kcat_producer(f"kcat_default_{codec}_acks_all", None, codec, "-1"))
    cases.append(kcat_producer("kcat_default_none_acks_1", None, "none", "1"))
    cases.append(kcat_producer("kcat_default_none_acks_0", None, "none", "0"))
    cases.append(kcat_producer("kcat_default_headers_none_acks_all", None, "none", "-1",
                               headers=KCAT_HEADERS))
    cases.append(kcat_producer("kcat_default_headers_gzip_acks_all", None, "gzip", "-1",
                               headers=KCAT_HEADERS))
    cases.append(kcat_producer(
        "kcat_default_tombstone_none_acks_all", None, "none", "-1", null_empty=True,
        records=ORDERS + [{"key": "order-2", "value": None}]))
    for fallback in ("0.8.2.2", "0.9.0.1"):
        tag = "kcat_fallback_" + fallback.replace(".", "_")
        for codec in LEGACY_CODECS:
            cases.append(kcat_producer(f"{tag}_{codec}_acks_all", fallback, codec, "-1"))
        cases.append(kcat_producer(f"{tag}_none_acks_1", fallback, "none", "1"))
        cases.append(kcat_producer(
            f"{tag}_keyless_none_acks_all", fallback, "none", "-1", partition=0,
            records=[{"key": None, "value": "no-key event"},
                     {"key": None, "value": "second"}]))

    codecs = ["none", "gzip"] + (["snappy", "lz4"] if have_python_codecs["lz4_snappy"] else [])
    for version in ("0,9", "0,10", "0,11", "auto"):
        for codec in codecs:
            cases.append(kafka_python_producer(version, codec, "1"))
        cases.append(kafka_python_producer(version, "none", "0"))
        cases.append(kafka_python_producer(version, "none", "all"))
    if have_python_codecs["zstd"]:
        cases.append(kafka_python_producer("auto", "zstd", "all"))

    with_headers = [dict(r, headers=[{"key": "trace-id", "value": "abc123"}]) for r in ORDERS]
    cases.append(confluent_idempotent("none", with_headers))
    cases.append(confluent_idempotent("lz4", ORDERS))

    cases.append(kcat_consumer("kcat_consumer_default", None))
    cases.append(kcat_consumer("kcat_consumer_fallback_0_8_2_2", "0.8.2.2"))
    cases.append(kcat_consumer("kcat_consumer_fallback_0_9_0_1", "0.9.0.1"))
    for version in ("0,9", "0,10", "0,11", "auto"):
        cases.append(kafka_python_consumer(version))
    cases.append(kafka_python_consumer("auto", group="golden-group"))
    return cases


def have_modules():
    def has(*mods):
        try:
            for m in mods:
                __import__(m)
            return True
        except ImportError:
            return False
    return {"lz4_snappy": has("lz4", "snappy"), "zstd": has("zstandard")}


def peer_versions():
    import confluent_kafka
    import kafka
    return {"kcat": kcat_version(), "kafka-python": f"kafka-python {kafka.__version__}",
            "confluent-kafka": "confluent-kafka %s (librdkafka %s)" % (
                confluent_kafka.version()[0], confluent_kafka.libversion()[0])}


def run_cases(bootstrap, out_path, only=None):
    mods = have_modules()
    versions = peer_versions()
    with open(out_path, "w") as out:
        for case in all_cases(mods):
            if only and case["case"] not in only:
                continue
            argv = [a.replace("{bootstrap}", bootstrap) for a in case["argv"]]
            case["peer_version"] = versions[case["peer"]]
            case["command"] = argv
            case["start"] = time.time()
            proc = subprocess.run(argv, input=case.get("stdin", ""), capture_output=True,
                                  text=True)
            case["end"] = time.time()
            case["rc"] = proc.returncode
            case["stdout"] = proc.stdout[-4000:]
            case["stderr"] = proc.stderr[-4000:]
            del case["argv"]
            out.write(json.dumps(case) + "\n")
            out.flush()
            print(f"capture: {case['case']}: rc={proc.returncode} "
                  f"{case['end'] - case['start']:.1f}s", file=sys.stderr)
            # A quiet gap keeps the next case's SYN out of this window.
            time.sleep(0.3)
    return mods


if __name__ == "__main__":
    run_cases(sys.argv[1], sys.argv[2], set(sys.argv[3:]) or None)
