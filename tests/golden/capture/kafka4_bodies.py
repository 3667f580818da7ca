"""Body decoders for the Apache Kafka 4.4.0 / Java client golden capture
(capture_kafka4.py): Produce v3-v13, Metadata v0-v13, ApiVersions v0-v5 and
InitProducerId v0-v5, flexible (KIP-482) versions included. Like
kafka_bodies.py this is the capture tooling's own decoder, written from the
Kafka protocol guide / Kafka's message JSON, sharing nothing with the proxy.
Known tagged fields are decoded by name, unknown ones kept as hex; each
decoder must consume the frame exactly (kafka_decode._decode_exactly)."""
from kafka_records import decode_records
from kafka_wire import Reader

FLEX = {0: 9, 3: 9, 18: 3, 22: 2}


def uuid(r):
    b = r.take(16)
    h = b.hex()
    return "%s-%s-%s-%s-%s" % (h[:8], h[8:12], h[12:16], h[16:20], h[20:])


class F:
    """Flexible-aware primitives for one (api, version)."""

    def __init__(self, r, flexible):
        self.r, self.flex = r, flexible

    def string(self, nullable=False):
        return self.r.compact_string() if self.flex else self.r.string(nullable=nullable)

    def array(self, item):
        return self.r.compact_array(item) if self.flex else self.r.array(item)

    def nbytes(self):
        if self.flex:
            n = self.r.uvarint() - 1
            return None if n < 0 else self.r.take(n)
        return self.r.nbytes()

    def tags(self, known=None):
        """Tagged fields: {tag: decoded} for known tags, hex otherwise."""
        if not self.flex:
            return None
        out = {}
        for _ in range(self.r.uvarint()):
            tag = self.r.uvarint()
            raw = self.r.take(self.r.uvarint())
            if known and tag in known:
                sub = Reader(raw)
                name, fn = known[tag]
                val = fn(F(sub, True))
                if sub.left():
                    raise ValueError("tag %d: %d bytes left" % (tag, sub.left()))
                out[name] = val
            else:
                out[str(tag)] = raw.hex()
        return out


def _with_tags(d, f, known=None):
    t = f.tags(known)
    if t is not None:
        d["tagged_fields"] = t
    return d


# ------------------------------------------------------------------ Produce

def produce_request(r, v):
    f = F(r, v >= FLEX[0])
    body = {"transactional_id": f.string(nullable=True)} if v >= 3 else {}
    body["acks"] = r.i16()
    body["timeout_ms"] = r.i32()

    def partition():
        p = {"partition": r.i32()}
        raw = f.nbytes()
        p["records_size"] = None if raw is None else len(raw)
        p["records"] = None if raw is None else decode_records(raw)
        return _with_tags(p, f)

    def topic():
        t = {"topic_id": uuid(r)} if v >= 13 else {"topic": f.string()}
        t["partitions"] = f.array(partition)
        return _with_tags(t, f)

    body["topics"] = f.array(topic)
    return _with_tags(body, f)


def produce_response(r, v):
    f = F(r, v >= FLEX[0])

    def leader(g):
        return _with_tags({"leader_id": g.r.i32(), "leader_epoch": g.r.i32()}, g)

    def node_endpoints(g):
        def ep():
            return _with_tags({"node_id": g.r.i32(), "host": g.string(), "port": g.r.i32(),
                               "rack": g.string(nullable=True)}, g)
        return g.array(ep)

    def partition():
        p = {"partition": r.i32(), "error_code": r.i16(), "base_offset": r.i64()}
        if v >= 2:
            p["log_append_time_ms"] = r.i64()
        if v >= 5:
            p["log_start_offset"] = r.i64()
        if v >= 8:
            p["record_errors"] = f.array(lambda: _with_tags(
                {"batch_index": r.i32(), "batch_index_error_message": f.string(nullable=True)}, f))
            p["error_message"] = f.string(nullable=True)
        return _with_tags(p, f, {0: ("current_leader", leader)} if v >= 10 else None)

    def topic():
        t = {"topic_id": uuid(r)} if v >= 13 else {"topic": f.string()}
        t["partitions"] = f.array(partition)
        return _with_tags(t, f)

    body = {"topics": f.array(topic)}
    if v >= 1:
        body["throttle_time_ms"] = r.i32()
    return _with_tags(body, f, {0: ("node_endpoints", node_endpoints)} if v >= 10 else None)


# ----------------------------------------------------------------- Metadata

def metadata_request(r, v):
    f = F(r, v >= FLEX[3])

    def topic():
        if v == 0 or (not f.flex and v < 10):
            return f.string()
        t = {"topic_id": uuid(r)} if v >= 10 else {}
        t["name"] = f.string(nullable=v >= 10)
        return _with_tags(t, f)

    body = {"topics": f.array(topic)}  # null (v1+) means all topics
    if v >= 4:
        body["allow_auto_topic_creation"] = r.boolean()
    if 8 <= v <= 10:
        body["include_cluster_authorized_operations"] = r.boolean()
    if v >= 8:
        body["include_topic_authorized_operations"] = r.boolean()
    return _with_tags(body, f)


def metadata_response(r, v):
    f = F(r, v >= FLEX[3])
    body = {"throttle_time_ms": r.i32()} if v >= 3 else {}

    def broker():
        b = {"node_id": r.i32(), "host": f.string(), "port": r.i32()}
        if v >= 1:
            b["rack"] = f.string(nullable=True)
        return _with_tags(b, f)

    body["brokers"] = f.array(broker)
    if v >= 2:
        body["cluster_id"] = f.string(nullable=True)
    if v >= 1:
        body["controller_id"] = r.i32()

    def partition():
        p = {"error_code": r.i16(), "partition": r.i32(), "leader": r.i32()}
        if v >= 7:
            p["leader_epoch"] = r.i32()
        p["replicas"] = f.array(r.i32)
        p["isr"] = f.array(r.i32)
        if v >= 5:
            p["offline_replicas"] = f.array(r.i32)
        return _with_tags(p, f)

    def topic():
        t = {"error_code": r.i16(), "topic": f.string(nullable=v >= 12)}
        if v >= 10:
            t["topic_id"] = uuid(r)
        if v >= 1:
            t["is_internal"] = r.boolean()
        t["partitions"] = f.array(partition)
        if v >= 8:
            t["topic_authorized_operations"] = r.i32()
        return _with_tags(t, f)

    body["topics"] = f.array(topic)
    if 8 <= v <= 10:
        body["cluster_authorized_operations"] = r.i32()
    if v >= 13:
        body["error_code"] = r.i16()  # KIP-1102: top-level error (e.g. REBOOTSTRAP_REQUIRED)
    return _with_tags(body, f)


# -------------------------------------------------------------- ApiVersions

def api_versions_request(r, v):
    f = F(r, v >= FLEX[18])
    body = {}
    if v >= 3:
        body = {"client_software_name": f.string(), "client_software_version": f.string()}
    if v >= 5:  # which cluster and node the client thinks it is talking to (null, -1 at bootstrap)
        body["cluster_id"] = f.string(nullable=True)
        body["node_id"] = r.i32()
    return _with_tags(body, f)


def api_versions_response(r, v):
    f = F(r, v >= FLEX[18])
    body = {"error_code": r.i16()}

    def key():
        return _with_tags({"api_key": r.i16(), "min_version": r.i16(), "max_version": r.i16()}, f)

    body["api_keys"] = f.array(key)
    if v >= 1:
        body["throttle_time_ms"] = r.i32()

    def supported(g):
        return g.array(lambda: _with_tags({"name": g.string(), "min_version": g.r.i16(),
                                           "max_version": g.r.i16()}, g))

    def finalized(g):
        return g.array(lambda: _with_tags({"name": g.string(), "max_version_level": g.r.i16(),
                                           "min_version_level": g.r.i16()}, g))

    known = {0: ("supported_features", supported),
             1: ("finalized_features_epoch", lambda g: g.r.i64()),
             2: ("finalized_features", finalized),
             3: ("zk_migration_ready", lambda g: g.r.boolean())}
    return _with_tags(body, f, known)


# ----------------------------------------------------------- InitProducerId

def init_producer_id_request(r, v):
    f = F(r, v >= FLEX[22])
    body = {"transactional_id": f.string(nullable=True), "transaction_timeout_ms": r.i32()}
    if v >= 3:
        body["producer_id"] = r.i64()
        body["producer_epoch"] = r.i16()
    if v >= 6:
        body["enable_2pc"] = r.boolean()
        body["keep_prepared_txn"] = r.boolean()
    return _with_tags(body, f)


def init_producer_id_response(r, v):
    f = F(r, v >= FLEX[22])
    body = {"throttle_time_ms": r.i32(), "error_code": r.i16(),
            "producer_id": r.i64(), "producer_epoch": r.i16()}
    if v >= 6:
        body["ongoing_txn_producer_id"] = r.i64()
        body["ongoing_txn_producer_epoch"] = r.i16()
    return _with_tags(body, f)


BODIES = {
    0: (produce_request, produce_response),
    3: (metadata_request, metadata_response),
    18: (api_versions_request, api_versions_response),
    22: (init_producer_id_request, init_producer_id_response),
}


def decode_body(direction, api_key, api_version, reader):
    """(body or None, error or None); a known body must consume the frame exactly."""
    fns = BODIES.get(api_key)
    if not fns:
        return None, None
    fn = fns[0] if direction == "request" else fns[1]
    try:
        body = fn(reader, api_version)
    except Exception as e:  # DecodeError, RecordsError, codec and UTF-8 errors alike
        return None, "%s: %s" % (type(e).__name__, e)
    if reader.left():
        return None, "%d bytes left after the body" % reader.left()
    return body, None
