#!/usr/bin/env python3
"""A real Apache Kafka (KRaft) cluster on 127.0.0.1 for tests. Stdlib only.

    from kafka_cluster import KafkaCluster
    with KafkaCluster(nodes=3) as k:
        k.create_topic("t", partitions=2)
        ... produce to k.bootstrap ...
        k.move_leader("t", 0, to_broker=2)
        k.kill9(2); k.restart(2)
        records = k.read_topic("t")      # {partition: [Record, ...]}

The broker jars come from tests/kafka/fetch_kafka.sh (Maven Central, pinned in
tests/kafka/pom.xml, cached outside the build tree). Admin operations and the
consumer are the small Java programs in tests/kafka/java/, compiled on first
use into the same cache. ApiVersions and Metadata are spoken directly over a
socket from Python (fast readiness checks, leader epochs).

Every process the harness starts is stopped on stop()/context exit, at
interpreter exit (atexit), on SIGTERM (when the default handler was in place),
and, should the Python process die hard, by PR_SET_PDEATHSIG.

`python3 kafka_cluster.py --port 19092` runs a 1-node cluster in the
foreground (what scripts/kafka-local.sh does).
"""

import argparse
import atexit
import base64
import ctypes
import dataclasses
import fcntl
import glob
import hashlib
import json
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
FETCH_SCRIPT = os.path.join(HERE, "fetch_kafka.sh")
JAVA_SRC_DIR = os.path.join(HERE, "java")
POM = os.path.join(HERE, "pom.xml")

HOST = "127.0.0.1"

# JVM flags. The broker gets a small heap and the serial collector so a
# 3-node cluster, the proxy and clients share 2 cores; the short-lived tools
# run C1-only, which starts fastest.
BROKER_HEAP = os.environ.get("PP_KAFKA_HEAP", "384m")
# C1-only starts ~30% faster on 2 cores and is plenty for test traffic; set
# PP_KAFKA_JVM_FLAGS (space-separated) to replace these, e.g. for benchmarks.
BROKER_JVM_FLAGS = os.environ.get("PP_KAFKA_JVM_FLAGS", "").split() or [
    "-Xms64m", "-XX:+UseSerialGC", "-XX:+ExitOnOutOfMemoryError",
    "-XX:TieredStopAtLevel=1", "-Xss512k", "-Djava.awt.headless=true",
]
TOOL_JVM_FLAGS = [
    "-Xmx128m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xshare:auto",
    "-Djava.awt.headless=true",
]

API_NAMES = {
    0: "Produce", 1: "Fetch", 2: "ListOffsets", 3: "Metadata", 8: "OffsetCommit",
    9: "OffsetFetch", 10: "FindCoordinator", 11: "JoinGroup", 12: "Heartbeat",
    13: "LeaveGroup", 14: "SyncGroup", 15: "DescribeGroups", 16: "ListGroups",
    17: "SaslHandshake", 18: "ApiVersions", 19: "CreateTopics", 20: "DeleteTopics",
    21: "DeleteRecords", 22: "InitProducerId", 23: "OffsetForLeaderEpoch",
    24: "AddPartitionsToTxn", 25: "AddOffsetsToTxn", 26: "EndTxn", 27: "WriteTxnMarkers",
    28: "TxnOffsetCommit", 29: "DescribeAcls", 30: "CreateAcls", 31: "DeleteAcls",
    32: "DescribeConfigs", 33: "AlterConfigs", 34: "AlterReplicaLogDirs", 35: "DescribeLogDirs",
    36: "SaslAuthenticate", 37: "CreatePartitions", 38: "CreateDelegationToken",
    39: "RenewDelegationToken", 40: "ExpireDelegationToken", 41: "DescribeDelegationToken",
    42: "DeleteGroups",
    43: "ElectLeaders", 44: "IncrementalAlterConfigs", 45: "AlterPartitionReassignments",
    46: "ListPartitionReassignments", 47: "OffsetDelete", 48: "DescribeClientQuotas",
    49: "AlterClientQuotas", 50: "DescribeUserScramCredentials",
    51: "AlterUserScramCredentials", 55: "DescribeQuorum", 57: "UpdateFeatures", 60: "DescribeCluster",
    61: "DescribeProducers", 64: "UnregisterBroker", 65: "DescribeTransactions",
    66: "ListTransactions", 68: "ConsumerGroupHeartbeat", 69: "ConsumerGroupDescribe",
    71: "GetTelemetrySubscriptions", 72: "PushTelemetry", 74: "ListConfigResources",
    75: "DescribeTopicPartitions", 76: "ShareGroupHeartbeat", 77: "ShareGroupDescribe",
    78: "ShareFetch", 79: "ShareAcknowledge", 80: "AddRaftVoter", 81: "RemoveRaftVoter",
    83: "InitializeShareGroupState", 84: "ReadShareGroupState", 85: "WriteShareGroupState",
    86: "DeleteShareGroupState", 87: "ReadShareGroupStateSummary", 88: "StreamsGroupHeartbeat",
    89: "StreamsGroupDescribe", 90: "DescribeShareGroupOffsets", 91: "AlterShareGroupOffsets",
    92: "DeleteShareGroupOffsets",
}  # others print as api-N


class KafkaHarnessError(RuntimeError):
    """The harness could not do what was asked (fetch, start, admin op, read)."""


# --------------------------------------------------------------------------
# Fetching the broker and compiling the Java helpers


def pinned_kafka_version():
    with open(POM, encoding="utf-8") as f:
        m = re.search(r"<kafka\.version>([^<]+)</kafka\.version>", f.read())
    if not m:
        raise KafkaHarnessError("no <kafka.version> in %s" % POM)
    return m.group(1).strip()


def kafka_version():
    """The version the tests run on, as fetch_kafka.sh picks it: PP_KAFKA_VERSION,
    else the newest release `fetch_kafka.sh --try-newer` (setup.sh --test-peers)
    found on Maven Central, else the pom's pinned one."""
    if os.environ.get("PP_KAFKA_VERSION"):
        return os.environ["PP_KAFKA_VERSION"].strip()
    cache = os.environ.get("PP_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "produce-proxy")
    try:
        with open(os.path.join(cache, "kafka-selected-version"), encoding="utf-8") as f:
            selected = f.read().strip()
            if selected:
                return selected
    except OSError:
        pass
    return pinned_kafka_version()


_libs_dir = None


def fetch_libs():
    """Runs fetch_kafka.sh (a no-op when cached) and returns the libs dir."""
    global _libs_dir
    if _libs_dir:
        return _libs_dir
    try:
        p = subprocess.run(["bash", FETCH_SCRIPT], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=1200, env=dict(os.environ, PP_KAFKA_VERSION=kafka_version()))
    except subprocess.TimeoutExpired:
        raise KafkaHarnessError("fetch_kafka.sh did not finish in 20 minutes")
    lines = p.stdout.strip().splitlines()
    if p.returncode != 0 or not lines or not os.path.isdir(lines[-1]):
        raise KafkaHarnessError(
            "could not fetch the Apache Kafka %s broker with Maven (tests/kafka/fetch_kafka.sh "
            "exit %d). Run scripts/setup.sh --test-peers (needs java, mvn and Maven Central).\n%s"
            % (kafka_version(), p.returncode, p.stderr.strip()))
    _libs_dir = lines[-1]
    return _libs_dir


def _classpath(*dirs):
    return ":".join(os.path.join(d, "*") if d.endswith("libs") else d for d in dirs)


_tools_dir = None
_tools_lock = threading.Lock()


def tools_dir():
    """Compiles tests/kafka/java/*.java (once per source hash) and returns the class dir."""
    global _tools_dir
    with _tools_lock:
        if _tools_dir:
            return _tools_dir
        libs = fetch_libs()
        sources = sorted(glob.glob(os.path.join(JAVA_SRC_DIR, "*.java")))
        h = hashlib.sha256()
        h.update(libs.encode())
        for s in sources:
            with open(s, "rb") as f:
                h.update(os.path.basename(s).encode() + b"\0" + f.read())
        base = os.path.dirname(libs)
        out = os.path.join(base, "tools-" + h.hexdigest()[:16])
        stamp = os.path.join(out, ".ok")
        if not os.path.exists(stamp):
            os.makedirs(base, exist_ok=True)
            with open(os.path.join(base, ".tools.lock"), "w") as lk:
                fcntl.flock(lk, fcntl.LOCK_EX)
                if not os.path.exists(stamp):
                    tmp = out + ".tmp.%d" % os.getpid()
                    shutil.rmtree(tmp, ignore_errors=True)
                    os.makedirs(tmp)
                    try:
                        p = subprocess.run(
                            ["javac", "-nowarn", "-encoding", "UTF-8", "-J-Xmx256m",
                             "-cp", _classpath(libs), "-d", tmp] + sources,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
                    except FileNotFoundError:
                        raise KafkaHarnessError("javac not found; run scripts/setup.sh --test-peers")
                    if p.returncode != 0:
                        shutil.rmtree(tmp, ignore_errors=True)
                        raise KafkaHarnessError("javac failed on tests/kafka/java:\n" + p.stdout)
                    shutil.rmtree(out, ignore_errors=True)
                    os.rename(tmp, out)
                    with open(stamp, "w") as f:
                        f.write("ok\n")
        _tools_dir = out
        return out


def run_tool(main_class, args, timeout=60.0):
    """Runs one of the Java helpers; returns stdout, raises KafkaHarnessError on failure."""
    cmd = (["java"] + TOOL_JVM_FLAGS + ["-cp", _classpath(tools_dir(), fetch_libs()), main_class]
           + [str(a) for a in args])
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=timeout, preexec_fn=_die_with_parent)
    except subprocess.TimeoutExpired:
        raise KafkaHarnessError("%s %s did not finish in %.0f s" % (main_class, " ".join(map(str, args)), timeout))
    if p.returncode != 0:
        err = KafkaHarnessError("%s %s failed (exit %d): %s" % (
            main_class, " ".join(map(str, args)), p.returncode, p.stderr.strip()[-2000:]))
        err.returncode = p.returncode
        raise err
    return p.stdout


# --------------------------------------------------------------------------
# Raw Kafka protocol: ApiVersions v0 and Metadata v7 (both non-flexible)


class _Reader:
    def __init__(self, buf):
        self.buf, self.pos = buf, 0

    def _take(self, fmt):
        v = struct.unpack_from(fmt, self.buf, self.pos)
        self.pos += struct.calcsize(fmt)
        return v[0]

    def int8(self):
        return self._take(">b")

    def int16(self):
        return self._take(">h")

    def int32(self):
        return self._take(">i")

    def string(self):
        n = self.int16()
        if n < 0:
            return None
        s = self.buf[self.pos:self.pos + n].decode("utf-8")
        self.pos += n
        return s

    def array(self, item):
        n = self.int32()
        return [] if n < 0 else [item() for _ in range(n)]


def _kafka_request(host, port, api_key, api_version, body=b"", timeout=5.0):
    corr = int.from_bytes(os.urandom(3), "big")
    client = b"pp-kafka-harness"
    header = struct.pack(">hhih", api_key, api_version, corr, len(client)) + client
    msg = header + body
    with socket.create_connection((host, port), timeout=timeout) as s:
        s.settimeout(timeout)
        s.sendall(struct.pack(">i", len(msg)) + msg)

        def recv_exact(n):
            chunks, got = [], 0
            while got < n:
                c = s.recv(n - got)
                if not c:
                    raise ConnectionError("connection closed by %s:%d" % (host, port))
                chunks.append(c)
                got += len(c)
            return b"".join(chunks)

        (size,) = struct.unpack(">i", recv_exact(4))
        if size < 4 or size > 64 << 20:
            raise ConnectionError("bad response size %d" % size)
        resp = recv_exact(size)
    (got_corr,) = struct.unpack_from(">i", resp, 0)
    if got_corr != corr:
        raise ConnectionError("correlation id mismatch")
    return resp[4:]


def api_versions(host, port, timeout=5.0):
    """ApiVersions v0 to one broker: {api_key: (min_version, max_version)}."""
    r = _Reader(_kafka_request(host, port, 18, 0, b"", timeout))
    err = r.int16()
    if err != 0:
        raise KafkaHarnessError("ApiVersions error code %d" % err)
    out = {}
    for _ in range(r.int32()):
        key, lo, hi = r.int16(), r.int16(), r.int16()
        out[key] = (lo, hi)
    return out


@dataclasses.dataclass
class PartitionState:
    partition: int
    leader: int
    leader_epoch: int
    replicas: list
    isr: list
    offline: list
    error: int = 0


@dataclasses.dataclass
class ClusterMetadata:
    brokers: dict          # id -> (host, port)
    controller_id: int
    cluster_id: str
    topics: dict           # name -> {partition: PartitionState}
    topic_errors: dict     # name -> error code


def metadata(host, port, topics=None, timeout=5.0):
    """Metadata v7 to one broker (topics=None: all topics; never auto-creates)."""
    if topics is None:
        body = struct.pack(">i", -1)
    else:
        body = struct.pack(">i", len(topics))
        for t in topics:
            b = t.encode()
            body += struct.pack(">h", len(b)) + b
    body += b"\x00"  # allow_auto_topic_creation = false
    r = _Reader(_kafka_request(host, port, 3, 7, body, timeout))
    r.int32()  # throttle

    def broker():
        node, h, p = r.int32(), r.string(), r.int32()
        r.string()  # rack
        return node, (h, p)

    brokers = dict(r.array(broker))
    cluster_id = r.string()
    controller = r.int32()
    topics_out, errors = {}, {}
    for _ in range(r.int32()):
        terr, name = r.int16(), r.string()
        r.int8()  # is_internal
        parts = {}
        for _ in range(r.int32()):
            perr, idx, leader, epoch = r.int16(), r.int32(), r.int32(), r.int32()
            replicas, isr, offline = r.array(r.int32), r.array(r.int32), r.array(r.int32)
            parts[idx] = PartitionState(idx, leader, epoch, replicas, isr, offline, perr)
        topics_out[name] = parts
        errors[name] = terr
    return ClusterMetadata(brokers, controller, cluster_id, topics_out, errors)


# --------------------------------------------------------------------------
# Process hygiene


_PR_SET_PDEATHSIG = 1
try:
    _libc = ctypes.CDLL(None, use_errno=True)
except OSError:  # pragma: no cover
    _libc = None


def _die_with_parent():
    """preexec_fn: the child gets SIGKILL if the (spawning thread of the) harness dies."""
    if _libc is not None:
        _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


_live_clusters = set()
_live_lock = threading.Lock()


def _stop_all_clusters():
    with _live_lock:
        clusters = list(_live_clusters)
    for c in clusters:
        try:
            c.stop()
        except Exception:  # best effort at exit
            pass


atexit.register(_stop_all_clusters)
_sigterm_installed = False


def _install_sigterm():
    """Turns SIGTERM (e.g. ctest's timeout) into SystemExit so cleanup runs."""
    global _sigterm_installed
    if _sigterm_installed or threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        def handler(signum, frame):
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            raise SystemExit(128 + signum)
        signal.signal(signal.SIGTERM, handler)
    _sigterm_installed = True


def free_ports(n):
    """n distinct free TCP ports on 127.0.0.1 (held open together, then released)."""
    socks = []
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind((HOST, 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def _port_is_free(port):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind((HOST, port))
            return True
        except OSError:
            return False


def _port_accepts(port, timeout=0.5):
    try:
        with socket.create_connection((HOST, port), timeout=timeout):
            return True
    except OSError:
        return False


def _tail(path, n=40):
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - 64 * 1024))
            lines = f.read().decode("utf-8", "replace").splitlines()
        return "\n".join(lines[-n:])
    except OSError as e:
        return "(no %s: %s)" % (path, e)


# --------------------------------------------------------------------------
# The cluster


@dataclasses.dataclass
class Record:
    partition: int
    offset: int
    key: bytes
    value: bytes
    headers: list           # [(name: str, value: bytes|None), ...]
    timestamp: int
    timestamp_type: str
    leader_epoch: int


@dataclasses.dataclass
class SslListener:
    """One extra listener with security protocol SSL (inter-broker traffic stays
    PLAINTEXT). PEM files: `keystore` holds the broker's private key (unencrypted
    PKCS#8) and certificate chain (Kafka's ssl.keystore.type=PEM), `truststore`
    the CA certificates client certificates must chain to. client_auth:
    none | requested | required (ssl.client.auth). sasl=True makes it a
    SASL_SSL listener offering the cluster's `sasl` mechanisms and users
    (KafkaCluster(sasl=...) is then required)."""
    keystore: str
    truststore: str = ""
    client_auth: str = "none"
    sasl: bool = False


SASL_LISTENER = "SASL_PLAINTEXT"


def sasl_listener_config(sasl, listener=None):
    """server.properties lines for a SASL listener (SASL_PLAINTEXT unless
    `listener` names a SASL_SSL one). `sasl` is
    {"mechanisms": [...], "plain_users": {name: password}, "scram_users":
    [(mechanism, name, password)]}: PLAIN users live in the listener's JAAS
    line (user_<name>="..."), SCRAM users are created at format time
    (scram_format_args), and OAUTHBEARER uses Kafka's default server callback,
    the unsecured validator (unsecured JWS tokens, alg none, with sub and exp)."""
    prefix = "listener.name.%s." % (listener or SASL_LISTENER).lower()
    mechanisms = list(sasl.get("mechanisms", []))
    cfg = {prefix + "sasl.enabled.mechanisms": ",".join(mechanisms)}
    if "PLAIN" in mechanisms:
        users = " ".join('user_%s="%s"' % (u, pw) for u, pw in sorted(sasl.get("plain_users", {}).items()))
        cfg[prefix + "plain.sasl.jaas.config"] = (
            "org.apache.kafka.common.security.plain.PlainLoginModule required %s;" % users)
    for m in ("SCRAM-SHA-256", "SCRAM-SHA-512"):
        if m in mechanisms:
            cfg[prefix + m.lower() + ".sasl.jaas.config"] = (
                "org.apache.kafka.common.security.scram.ScramLoginModule required;")
    if "OAUTHBEARER" in mechanisms:
        cfg[prefix + "oauthbearer.sasl.jaas.config"] = (
            'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required '
            'unsecuredLoginStringClaim_sub="broker";')
    return cfg


def scram_format_args(sasl):
    """kafka-storage format --add-scram arguments for sasl["scram_users"]."""
    args = []
    for mechanism, name, password in (sasl or {}).get("scram_users", []):
        args += ["--add-scram", "%s=[name=%s,password=%s]" % (mechanism, name, password)]
    return args


def unsecured_jwt(subject, expires_at):
    """An unsecured JWS (RFC 7515 with alg none) that Kafka's
    OAuthBearerUnsecuredValidatorCallbackHandler accepts until `expires_at`
    (seconds since the epoch)."""
    def part(obj):
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).rstrip(b"=").decode()
    return "%s.%s." % (part({"alg": "none"}), part({"sub": subject, "iat": int(time.time()) - 5,
                                                    "exp": int(expires_at)}))


class _Node:
    def __init__(self, node_id, port, controller_port, workdir):
        self.id = node_id
        self.port = port
        self.ssl_ports = {}  # listener name -> port
        self.controller_port = controller_port
        self.dir = os.path.join(workdir, "node-%d" % node_id)
        self.data_dir = os.path.join(self.dir, "data")
        self.config_path = os.path.join(self.dir, "server.properties")
        self.log4j_path = os.path.join(self.dir, "log4j2.properties")
        self.server_log = os.path.join(self.dir, "server.log")
        self.stdout_log = os.path.join(self.dir, "stdout.log")
        self.sasl_port = None
        self.proc = None

    def alive(self):
        return self.proc is not None and self.proc.poll() is None


def random_cluster_id():
    """A KRaft cluster id as Kafka's Uuid.randomUuid makes one: url-safe
    base64 of 16 random bytes, never starting with '-' (StorageTool's argument
    parser would read such an id as an option: 1 run in 64 failed so)."""
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not text.startswith("-"):
            return text


class KafkaCluster:
    """A KRaft cluster of `nodes` combined broker+controller processes on 127.0.0.1.

    Node ids are 1..nodes. Ports are picked free unless `broker_ports` gives
    the client (PLAINTEXT) port of each node. `broker_config` entries override
    the defaults below (written to every node's server.properties).

    `sasl` adds a SASL_PLAINTEXT listener on its own port per node (see
    sasl_listener_config); the PLAINTEXT listener stays for the harness's own
    admin and read-back tools and for inter-broker traffic.
    """

    def __init__(self, nodes=1, workdir=None, broker_config=None, broker_ports=None,
                 heap=None, start_timeout=60.0, stop_timeout=10.0, keep_workdir=None, ssl_listeners=None,
                 sasl=None):
        if nodes < 1:
            raise ValueError("nodes must be >= 1")
        # {"SSL": SslListener(...), "MTLS": ...}: extra listeners, each on its own
        # port per node; ssl_bootstrap(name) lists them.
        self.ssl_listeners = dict(ssl_listeners or {})
        for name in self.ssl_listeners:
            if not re.fullmatch(r"[A-Z][A-Z0-9_]*", name) or name in ("PLAINTEXT", "CONTROLLER", SASL_LISTENER):
                raise ValueError("bad SSL listener name %r" % name)
            if self.ssl_listeners[name].sasl and not sasl:
                raise ValueError("SASL_SSL listener %r needs sasl=..." % name)
        self.nodes_count = nodes
        self.broker_config = dict(broker_config or {})
        self.heap = heap or BROKER_HEAP
        self.start_timeout = start_timeout
        self.stop_timeout = stop_timeout
        self._own_workdir = workdir is None
        self.workdir = workdir or tempfile.mkdtemp(prefix="pp-kafka-")
        if keep_workdir is None:
            keep_workdir = os.environ.get("PP_KAFKA_KEEP", "") not in ("", "0")
        self.keep_workdir = keep_workdir
        if broker_ports is not None and len(broker_ports) != nodes:
            raise ValueError("broker_ports needs one port per node")
        self._broker_ports = list(broker_ports) if broker_ports else None
        self.cluster_id = random_cluster_id()
        self.sasl = dict(sasl) if sasl else None
        self._nodes = {}
        self._started = False
        self.startup_seconds = None

    # ---- configuration

    def default_config(self):
        n = self.nodes_count
        rf = min(3, n)
        isr = 2 if n >= 3 else 1
        return {
            "process.roles": "broker,controller",
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": "PLAINTEXT",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
            "auto.create.topics.enable": "true",
            "num.partitions": "1",
            "default.replication.factor": str(rf),
            "min.insync.replicas": str(isr),
            "offsets.topic.replication.factor": str(rf),
            "offsets.topic.num.partitions": "1",
            "transaction.state.log.replication.factor": str(rf),
            "transaction.state.log.min.isr": str(isr),
            "transaction.state.log.num.partitions": "1",
            "share.coordinator.state.topic.replication.factor": str(rf),
            "share.coordinator.state.topic.min.isr": str(isr),
            "group.initial.rebalance.delay.ms": "0",
            # Leaders move only when a test says so (move_leader) or a broker dies.
            "auto.leader.rebalance.enable": "false",
            "unclean.leader.election.enable": "false",
            # A killed broker is fenced (and leaves the ISRs) within a few seconds.
            "broker.heartbeat.interval.ms": "500",
            "broker.session.timeout.ms": "4000",
            "replica.lag.time.max.ms": "10000",
            "controller.quorum.election.timeout.ms": "1000",
            "controller.quorum.fetch.timeout.ms": "2000",
            # Small: 2 cores, tiny test topics.
            "num.network.threads": "2",
            "num.io.threads": "2",
            "num.replica.fetchers": "1",
            "background.threads": "2",
            "num.recovery.threads.per.data.dir": "1",
            "log.cleaner.threads": "1",
            "log.cleaner.dedupe.buffer.size": str(8 << 20),
            "log.segment.bytes": str(64 << 20),
            "log.index.size.max.bytes": str(1 << 20),
            "offsets.topic.segment.bytes": str(16 << 20),
            "transaction.state.log.segment.bytes": str(16 << 20),
            "log.retention.check.interval.ms": "600000",
            # Kafka never fsyncs by default; keep it that way explicitly.
            "log.flush.interval.messages": str(2**63 - 1),
            "delete.topic.enable": "true",
        }

    def _node_config(self, node):
        voters = ",".join("%d@%s:%d" % (m.id, HOST, m.controller_port) for m in self._nodes.values())
        cfg = self.default_config()
        cfg.update({
            "node.id": str(node.id),
            "controller.quorum.voters": voters,
            "listeners": "PLAINTEXT://%s:%d,CONTROLLER://%s:%d" % (HOST, node.port, HOST, node.controller_port),
            "advertised.listeners": "PLAINTEXT://%s:%d" % (HOST, node.port),
            "log.dirs": node.data_dir,
        })
        self._add_ssl_listeners(node, cfg)
        if self.sasl:
            cfg.update(sasl_listener_config(self.sasl))
            cfg["listeners"] += ",%s://%s:%d" % (SASL_LISTENER, HOST, node.sasl_port)
            cfg["advertised.listeners"] += ",%s://%s:%d" % (SASL_LISTENER, HOST, node.sasl_port)
            cfg["listener.security.protocol.map"] += ",%s:SASL_PLAINTEXT" % SASL_LISTENER
        cfg.update({k: str(v) for k, v in self.broker_config.items()})
        return cfg

    def _add_ssl_listeners(self, node, cfg):
        for name, listener in sorted(self.ssl_listeners.items()):
            port = node.ssl_ports[name]
            cfg["listeners"] += ",%s://%s:%d" % (name, HOST, port)
            cfg["advertised.listeners"] += ",%s://%s:%d" % (name, HOST, port)
            cfg["listener.security.protocol.map"] += ",%s:%s" % (name, "SASL_SSL" if listener.sasl else "SSL")
            if listener.sasl:
                cfg.update(sasl_listener_config(self.sasl, name))
            prefix = "listener.name.%s." % name.lower()
            cfg[prefix + "ssl.keystore.type"] = "PEM"
            cfg[prefix + "ssl.keystore.location"] = listener.keystore
            cfg[prefix + "ssl.client.auth"] = listener.client_auth
            if listener.truststore:
                cfg[prefix + "ssl.truststore.type"] = "PEM"
                cfg[prefix + "ssl.truststore.location"] = listener.truststore

    def _write_files(self, node):
        os.makedirs(node.data_dir, exist_ok=True)
        with open(node.config_path, "w") as f:
            for k, v in sorted(self._node_config(node).items()):
                f.write("%s=%s\n" % (k, v))
        with open(node.log4j_path, "w") as f:
            f.write("\n".join([
                "status = warn",
                "appender.file.type = File",
                "appender.file.name = FILE",
                "appender.file.fileName = %s" % node.server_log,
                "appender.file.layout.type = PatternLayout",
                "appender.file.layout.pattern = [%d] %p %m (%c)%n",
                "rootLogger.level = INFO",
                "rootLogger.appenderRef.file.ref = FILE",
                "logger.request.name = kafka.request.logger",
                "logger.request.level = WARN",
                "logger.zk.name = org.apache.kafka.common.utils.AppInfoParser",
                "logger.zk.level = WARN",
                "",
            ]))

    # ---- lifecycle

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def start(self):
        if self._started:
            return self
        _install_sigterm()
        t0 = time.monotonic()
        with _live_lock:
            _live_clusters.add(self)
        self._started = True
        try:
            libs = fetch_libs()
            # Which Kafka ran goes in every test's output (a newer release
            # than the pinned one when fetch_kafka.sh --try-newer found one).
            print("kafka_cluster: Apache Kafka %s (pinned %s), %d node%s" % (
                kafka_version(), pinned_kafka_version(), self.nodes_count, "" if self.nodes_count == 1 else "s"),
                file=sys.stderr, flush=True)
            self._allocate_nodes()
            for node in self._nodes.values():
                self._write_files(node)
            self._format_all(libs)
            for node in self._nodes.values():
                self._launch(node, libs)
            tools_dir()  # compile the Java helpers (cached) while the brokers boot
            deadline = time.monotonic() + self.start_timeout
            for node in self._nodes.values():
                self._wait_ready(node, deadline, expect_brokers=set(self._nodes))
        except BaseException:
            self.stop()
            raise
        self.startup_seconds = time.monotonic() - t0
        return self

    def _allocate_nodes(self):
        n = self.nodes_count
        if self._broker_ports:
            for p in self._broker_ports:
                if not _port_is_free(p):
                    raise KafkaHarnessError("port %s:%d is already in use" % (HOST, p))
            ctl = [p for p in free_ports(n + len(self._broker_ports)) if p not in self._broker_ports][:n]
            ports = list(zip(self._broker_ports, ctl))
        else:
            ps = free_ports(2 * n)
            ports = [(ps[2 * i], ps[2 * i + 1]) for i in range(n)]
        self._nodes = {}
        for i, (bp, cp) in enumerate(ports, start=1):
            self._nodes[i] = _Node(i, bp, cp, self.workdir)
        used = {p for pair in ports for p in pair}
        names = sorted(self.ssl_listeners)
        extra = [p for p in free_ports(len(names) * n + len(used)) if p not in used][:len(names) * n]
        for node in self._nodes.values():
            for name in names:
                node.ssl_ports[name] = extra.pop()
        if self.sasl:
            taken = {p for pair in ports for p in pair} | {p for nd in self._nodes.values() for p in nd.ssl_ports.values()}
            spare = [p for p in free_ports(3 * n) if p not in taken][:n]
            for node, port in zip(self._nodes.values(), spare):
                node.sasl_port = port

    def _format_all(self, libs):
        procs = []
        for node in self._nodes.values():
            cmd = (["java"] + TOOL_JVM_FLAGS
                   + ["-Dlog4j2.configurationFile=" + node.log4j_path, "-cp", _classpath(libs),
                      "kafka.tools.StorageTool", "format", "-t", self.cluster_id,
                      "-c", node.config_path, "--ignore-formatted"]
                   + scram_format_args(self.sasl))
            out = open(os.path.join(node.dir, "format.log"), "w")
            procs.append((node, out, subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT,
                                                      preexec_fn=_die_with_parent)))
        errors = []
        for node, out, p in procs:
            try:
                rc = p.wait(timeout=60)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
                rc = "timeout"
            out.close()
            if rc != 0:
                errors.append("node %d: StorageTool format %s:\n%s" % (
                    node.id, rc, _tail(os.path.join(node.dir, "format.log"))))
        if errors:
            raise KafkaHarnessError("formatting the KRaft storage failed\n" + "\n".join(errors))

    def _launch(self, node, libs=None):
        libs = libs or fetch_libs()
        cmd = (["java", "-Xmx" + self.heap] + BROKER_JVM_FLAGS
               + ["-Dlog4j2.configurationFile=" + node.log4j_path,
                  "-Dkafka.logs.dir=" + node.dir,
                  "-cp", _classpath(libs), "kafka.Kafka", node.config_path])
        out = open(node.stdout_log, "ab")
        try:
            node.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out,
                                         stderr=subprocess.STDOUT, start_new_session=True,
                                         preexec_fn=_die_with_parent)
        finally:
            out.close()
        node.launched_at = time.monotonic()

    def _wait_ready(self, node, deadline, expect_brokers):
        """Port accepts and this broker's Metadata lists every expected (unfenced) broker."""
        last = "never accepted a connection"
        while True:
            if not node.alive():
                raise KafkaHarnessError(
                    "Kafka node %d exited with code %s during start-up\n--- %s\n%s\n--- %s\n%s" % (
                        node.id, node.proc.returncode if node.proc else None, node.server_log,
                        _tail(node.server_log), node.stdout_log, _tail(node.stdout_log, 20)))
            if _port_accepts(node.port):
                try:
                    md = metadata(HOST, node.port, topics=[], timeout=2.0)
                    missing = expect_brokers - set(md.brokers)
                    if not missing:
                        return md
                    last = "metadata lacks brokers %s" % sorted(missing)
                except (OSError, ConnectionError, struct.error, KafkaHarnessError) as e:
                    last = "metadata failed: %s" % e
            if time.monotonic() > deadline:
                raise KafkaHarnessError(
                    "Kafka node %d (port %d) not ready within %.0f s (%s)\n--- last lines of %s\n%s\n--- %s\n%s" % (
                        node.id, node.port, self.start_timeout, last, node.server_log,
                        _tail(node.server_log), node.stdout_log, _tail(node.stdout_log, 20)))
            time.sleep(0.2)

    def stop(self):
        """SIGTERM every live broker, SIGKILL whatever is left after stop_timeout."""
        alive = [n for n in self._nodes.values() if n.alive()]
        for n in alive:
            try:
                n.proc.terminate()
            except OSError:
                pass
        deadline = time.monotonic() + self.stop_timeout
        for n in alive:
            try:
                n.proc.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                n.proc.kill()
                n.proc.wait(timeout=10)
        with _live_lock:
            _live_clusters.discard(self)
        if self._started and self._own_workdir and not self.keep_workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)
        self._started = False

    # ---- addresses

    @property
    def broker_ids(self):
        return sorted(self._nodes)

    @property
    def bootstrap(self):
        """All nodes, "127.0.0.1:P1,127.0.0.1:P2,..."."""
        return ",".join("%s:%d" % (HOST, self._nodes[i].port) for i in self.broker_ids)

    @property
    def alive_bootstrap(self):
        return ",".join("%s:%d" % (HOST, self._nodes[i].port) for i in self.broker_ids
                        if self._nodes[i].alive())

    def port(self, broker_id):
        return self._nodes[broker_id].port

    def ssl_bootstrap(self, listener="SSL"):
        """The SSL listener `listener` of every node, "127.0.0.1:P1,..."."""
        return ",".join("%s:%d" % (HOST, self._nodes[i].ssl_ports[listener]) for i in self.broker_ids)

    @property
    def sasl_bootstrap(self):
        """The SASL_PLAINTEXT listener of every node (the cluster was made with sasl=...)."""
        return ",".join("%s:%d" % (HOST, self._nodes[i].sasl_port) for i in self.broker_ids)

    def is_alive(self, broker_id):
        return self._nodes[broker_id].alive()

    def node_dir(self, broker_id):
        return self._nodes[broker_id].dir

    def log_tail(self, broker_id, lines=40):
        return _tail(self._nodes[broker_id].server_log, lines)

    def _alive_ids(self):
        return [i for i in self.broker_ids if self._nodes[i].alive()]

    def _any_alive(self, broker_id=None):
        if broker_id is not None:
            return broker_id
        ids = self._alive_ids()
        if not ids:
            raise KafkaHarnessError("no Kafka broker is running")
        return ids[0]

    # ---- raw protocol helpers

    def api_versions(self, broker_id=None):
        """{api_key: (min, max)} as the broker answers ApiVersions v0."""
        return api_versions(HOST, self.port(self._any_alive(broker_id)))

    def api_versions_named(self, broker_id=None):
        return {API_NAMES.get(k, "api-%d" % k): v for k, v in sorted(self.api_versions(broker_id).items())}

    def metadata(self, topics=None, broker_id=None):
        return metadata(HOST, self.port(self._any_alive(broker_id)), topics)

    def describe(self, topic, broker_id=None):
        """{partition: PartitionState(leader, leader_epoch, replicas, isr, offline, error)}."""
        md = self.metadata([topic], broker_id)
        err = md.topic_errors.get(topic, 3)
        if err != 0:
            raise KafkaHarnessError("topic %s: metadata error code %d" % (topic, err))
        return md.topics[topic]

    def leader(self, topic, partition, broker_id=None):
        return self.describe(topic, broker_id)[partition].leader

    def wait_until(self, what, predicate, timeout=30.0, interval=0.2):
        """Polls predicate() (exceptions count as False) until true; raises after timeout."""
        deadline = time.monotonic() + timeout
        last_exc = None
        while True:
            try:
                v = predicate()
                if v:
                    return v
            except (OSError, ConnectionError, struct.error, KafkaHarnessError) as e:
                last_exc = e
            if time.monotonic() > deadline:
                raise KafkaHarnessError("timed out after %.0f s waiting for %s%s" % (
                    timeout, what, " (last error: %s)" % last_exc if last_exc else ""))
            time.sleep(interval)

    def _all_alive_agree(self, topic, check):
        for b in self._alive_ids():
            parts = self.describe(topic, b)
            if not parts or not check(parts):
                return False
        return True

    # ---- admin operations (Java)

    def _admin(self, *args, timeout=60.0):
        out = run_tool("KafkaAdminTool", [self.alive_bootstrap] + list(args), timeout=timeout)
        lines = out.strip().splitlines()
        return json.loads(lines[-1]) if lines else {}

    def describe_cluster(self):
        return self._admin("describe-cluster")

    def create_topic(self, name, partitions=1, replication_factor=None, configs=None, wait=True, timeout=30.0):
        """Creates the topic and (wait=True) waits until every live broker knows every
        partition's leader and the full ISR."""
        args = ["create-topic", name, partitions, -1 if replication_factor is None else replication_factor]
        args += ["%s=%s" % (k, v) for k, v in (configs or {}).items()]
        self._admin(*args)
        if wait:
            self.wait_until("topic %s to have %d partitions with leaders and full ISRs on every broker" % (name, partitions),
                            lambda: self._all_alive_agree(name, lambda ps: len(ps) == partitions and all(
                                p.leader >= 0 and sorted(p.isr) == sorted(p.replicas) for p in ps.values())),
                            timeout)
        return self.describe(name)

    def delete_topic(self, name, wait=True, timeout=30.0):
        self._admin("delete-topic", name)
        if wait:
            self.wait_until("topic %s to disappear" % name,
                            lambda: all(self.metadata([name], b).topic_errors.get(name, 3) != 0
                                        for b in self._alive_ids()), timeout)

    def alter_topic_config(self, topic, configs):
        """Sets topic configs (value None or "" deletes the override)."""
        self._admin("alter-config", topic, *["%s=%s" % (k, "" if v is None else v) for k, v in configs.items()])

    def move_leader(self, topic, partition, to_broker, timeout=30.0):
        """Makes to_broker the preferred replica (reassignment reordering the replicas)
        and leader (preferred election); waits until every live broker agrees."""
        if not self.is_alive(to_broker):
            raise KafkaHarnessError("broker %d is not running" % to_broker)
        self.wait_until("broker %d in the ISR of %s-%d" % (to_broker, topic, partition),
                        lambda: to_broker in self.describe(topic)[partition].isr, timeout)
        self._admin("move-leader", topic, partition, to_broker, timeout=timeout + 30)
        self.wait_until("broker %d to lead %s-%d on every broker" % (to_broker, topic, partition),
                        lambda: self._all_alive_agree(topic, lambda ps: ps[partition].leader == to_broker),
                        timeout)
        return self.describe(topic)[partition]

    # ---- faults

    def kill9(self, broker_id, wait_fenced=False, timeout=30.0):
        """SIGKILL one node. wait_fenced=True also waits until the others drop it from metadata."""
        node = self._nodes[broker_id]
        if node.alive():
            node.proc.kill()
            node.proc.wait(timeout=10)
        if wait_fenced:
            self.wait_until("broker %d to be fenced" % broker_id,
                            lambda: all(broker_id not in self.metadata([], b).brokers for b in self._alive_ids()),
                            timeout)

    def stop_broker(self, broker_id, timeout=None):
        """Graceful stop (SIGTERM, SIGKILL after stop_timeout) of one node."""
        node = self._nodes[broker_id]
        if node.alive():
            node.proc.terminate()
            try:
                node.proc.wait(timeout=timeout or self.stop_timeout)
            except subprocess.TimeoutExpired:
                node.proc.kill()
                node.proc.wait(timeout=10)

    def restart(self, broker_id, timeout=None, wait_isr=True):
        """Starts a stopped/killed node with the same config and log dirs; waits until
        every live broker lists it and (wait_isr) it is back in the ISR of every
        partition it replicates."""
        node = self._nodes[broker_id]
        if node.alive():
            raise KafkaHarnessError("broker %d is still running" % broker_id)
        timeout = timeout or self.start_timeout
        self._launch(node)
        deadline = time.monotonic() + timeout
        self._wait_ready(node, deadline, expect_brokers=set(self._alive_ids()))
        self.wait_until("every broker to list broker %d" % broker_id,
                        lambda: all(broker_id in self.metadata([], b).brokers for b in self._alive_ids()),
                        max(1.0, deadline - time.monotonic()))
        if wait_isr:
            def rejoined():
                md = self.metadata(None, broker_id)
                return all(broker_id in p.isr
                           for parts in md.topics.values() for p in parts.values()
                           if broker_id in p.replicas)
            self.wait_until("broker %d to rejoin every ISR" % broker_id, rejoined,
                            max(1.0, deadline - time.monotonic()))

    # ---- reading

    def read_topic(self, topic, timeout=30.0, read_committed=False, with_ranges=False):
        """Every record of the topic up to each partition's end offset (high watermark;
        last stable offset if read_committed) taken before reading, with a real
        KafkaConsumer: {partition: [Record, ...]} (every partition present).
        with_ranges=True returns (records, {partition: (begin, end)})."""
        args = [self.alive_bootstrap, topic, "--timeout-ms", int(timeout * 1000)]
        if read_committed:
            args.append("--read-committed")
        out = run_tool("ReadTopic", args, timeout=timeout + 30)
        records, ranges = {}, {}

        def b(v):
            return None if v is None else base64.b64decode(v)

        for line in out.splitlines():
            if not line.strip():
                continue
            o = json.loads(line)
            if o["type"] == "range":
                ranges[o["partition"]] = (o["begin"], o["end"])
                records.setdefault(o["partition"], [])
            elif o["type"] == "record":
                records.setdefault(o["partition"], []).append(Record(
                    o["partition"], o["offset"], b(o["key"]), b(o["value"]),
                    [(b(k).decode("utf-8"), b(v)) for k, v in o["headers"]],
                    o["timestamp"], o["timestamp_type"], o["leader_epoch"]))
        for p, (begin, end) in ranges.items():
            recs = records[p]
            if recs and (recs[0].offset < begin or recs[-1].offset >= end):
                raise KafkaHarnessError("ReadTopic returned offsets outside [%d, %d) for partition %d" % (begin, end, p))
        return (records, ranges) if with_ranges else records


# --------------------------------------------------------------------------
# Foreground mode (scripts/kafka-local.sh)


def main(argv=None):
    ap = argparse.ArgumentParser(description="Run a real Apache Kafka (KRaft) cluster on 127.0.0.1 in the foreground.")
    ap.add_argument("--nodes", type=int, default=1)
    ap.add_argument("--port", type=int, default=19092,
                    help="client port of node 1 (node i uses port+i-1); 0 picks free ports")
    ap.add_argument("--workdir", help="keep data here (default: a temporary dir removed on exit)")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="broker config override (repeatable)")
    ap.add_argument("--duration", type=float, default=0, help="stop after this many seconds (0: until Ctrl-C)")
    ap.add_argument("--api-versions", action="store_true", help="print the broker's ApiVersions ranges")
    args = ap.parse_args(argv)

    cfg = {}
    for kv in args.set:
        k, sep, v = kv.partition("=")
        if not sep:
            ap.error("--set wants KEY=VALUE, got %r" % kv)
        cfg[k] = v
    ports = None if args.port == 0 else [args.port + i for i in range(args.nodes)]
    if args.workdir:
        os.makedirs(args.workdir, exist_ok=True)
    signal.signal(signal.SIGTERM, lambda s, f: (_ for _ in ()).throw(KeyboardInterrupt()))
    cluster = KafkaCluster(nodes=args.nodes, workdir=args.workdir, broker_config=cfg, broker_ports=ports)
    print("starting Apache Kafka %s (%d node%s, KRaft) in %s ..." % (
        kafka_version(), args.nodes, "" if args.nodes == 1 else "s", cluster.workdir), flush=True)
    try:
        cluster.start()
        print("Kafka is up in %.1f s; bootstrap: %s" % (cluster.startup_seconds, cluster.bootstrap))
        if args.api_versions:
            for name, (lo, hi) in cluster.api_versions_named().items():
                print("  %-28s v%d-v%d" % (name, lo, hi))
        servers = ",".join('"%s"' % s for s in cluster.bootstrap.split(","))
        print("try the proxy against it:\n  scripts/run.sh --config config/produce-proxy.example.toml "
              "--set 'upstream.bootstrap_servers=[%s]'" % servers)
        print("logs: %s/node-*/server.log   Ctrl-C stops it." % cluster.workdir, flush=True)
        end = time.monotonic() + args.duration if args.duration > 0 else None
        while end is None or time.monotonic() < end:
            dead = [i for i in cluster.broker_ids if not cluster.is_alive(i)]
            if dead:
                print("Kafka node(s) %s exited; last log lines:\n%s" % (dead, cluster.log_tail(dead[0])),
                      file=sys.stderr)
                return 1
            time.sleep(1)
    except KeyboardInterrupt:
        print("\nstopping Kafka ...", flush=True)
    except KafkaHarnessError as e:
        print("kafka_cluster: %s" % e, file=sys.stderr)
        return 1
    finally:
        cluster.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
