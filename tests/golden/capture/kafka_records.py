"""Decodes Kafka record data (MessageSet v0/v1 and RecordBatch v2) for the
golden-capture sanity checks and JSON descriptions.

Checks the CRCs (CRC-32 over magic..end for v0/v1, CRC-32C over
attributes..end for v2, KIP-98) and unwraps one level of compression the way
brokers do. Optional codec modules (python3-snappy, python3-lz4,
python3-zstandard) are imported lazily; without them a compressed payload is
reported but not expanded.
"""
import gzip
import struct
import zlib

CODECS = {0: "none", 1: "gzip", 2: "snappy", 3: "lz4", 4: "zstd"}


class RecordsError(Exception):
    pass


# ------------------------------------------------------------ checksums

def _crc32c_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_CRC32C = _crc32c_table()


def crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c = _CRC32C[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


_P1, _P2, _P3, _P4, _P5 = 2654435761, 2246822519, 3266489917, 668265263, 374761393
_M = 0xFFFFFFFF


def _rotl(x, r):
    return ((x << r) | (x >> (32 - r))) & _M


def xxh32(data, seed=0):
    """XXH32, needed only to check an LZ4 frame's header checksum byte."""
    n, i = len(data), 0
    if n >= 16:
        v = [(seed + _P1 + _P2) & _M, (seed + _P2) & _M, seed & _M, (seed - _P1) & _M]
        while i <= n - 16:
            for lane in range(4):
                word = struct.unpack_from("<I", data, i)[0]
                v[lane] = (_rotl((v[lane] + word * _P2) & _M, 13) * _P1) & _M
                i += 4
        h = (_rotl(v[0], 1) + _rotl(v[1], 7) + _rotl(v[2], 12) + _rotl(v[3], 18)) & _M
    else:
        h = (seed + _P5) & _M
    h = (h + n) & _M
    while i + 4 <= n:
        h = (h + struct.unpack_from("<I", data, i)[0] * _P3) & _M
        h = (_rotl(h, 17) * _P4) & _M
        i += 4
    while i < n:
        h = (h + data[i] * _P5) & _M
        h = (_rotl(h, 11) * _P1) & _M
        i += 1
    h ^= h >> 15
    h = (h * _P2) & _M
    h ^= h >> 13
    h = (h * _P3) & _M
    h ^= h >> 16
    return h


# ---------------------------------------------------------- compression

def _lz4(data, info):
    import lz4.frame
    if data[:4] != b"\x04\x22\x4d\x18":
        raise RecordsError("lz4: not an LZ4 frame")
    flg = data[4]
    desc_end = 6 + (8 if flg & 0x08 else 0) + (4 if flg & 0x01 else 0)
    hc = data[desc_end]
    proper = (xxh32(data[4:desc_end]) >> 8) & 0xFF
    legacy = (xxh32(data[0:desc_end]) >> 8) & 0xFF
    # Kafka before KIP-57 (message format 0) computed the frame header
    # checksum over the magic number too (KAFKA-3160); brokers accept that
    # only for magic 0.
    if hc == proper:
        info["lz4_header_checksum"] = "standard"
    elif hc == legacy:
        info["lz4_header_checksum"] = "kafka_legacy_includes_magic"
        data = data[:desc_end] + bytes([proper]) + data[desc_end + 1:]
    else:
        info["lz4_header_checksum"] = "invalid"
    return lz4.frame.decompress(data)


def _snappy(data, info):
    import snappy
    if data[:8] == b"\x82SNAPPY\x00":
        # xerial snappy-java framing: 8-byte magic, two int32 versions, then
        # [int32 length, raw snappy block]*.
        info["snappy_framing"] = "xerial"
        pos, out = 16, b""
        while pos < len(data):
            (n,) = struct.unpack_from(">i", data, pos)
            out += snappy.uncompress(data[pos + 4:pos + 4 + n])
            pos += 4 + n
        return out
    info["snappy_framing"] = "raw"
    return snappy.uncompress(data)


def _zstd(data, info):
    import zstandard
    return zstandard.ZstdDecompressor().decompressobj().decompress(data)


def decompress(codec, data, info):
    if codec == 1:
        return gzip.decompress(data)
    try:
        if codec == 2:
            return _snappy(data, info)
        if codec == 3:
            return _lz4(data, info)
        if codec == 4:
            return _zstd(data, info)
    except ImportError as e:
        info["not_expanded"] = f"missing python module: {e.name}"
        return None
    raise RecordsError(f"unknown codec {codec}")


# -------------------------------------------------------------- helpers

def text(b):
    """Keys/values as strings when they are UTF-8, else as hex."""
    if b is None:
        return None
    try:
        return b.decode("utf-8")
    except UnicodeDecodeError:
        return {"hex": b.hex()}


class _R:
    def __init__(self, data):
        self.d, self.p = data, 0

    def take(self, n):
        if n < 0 or self.p + n > len(self.d):
            raise RecordsError(f"truncated at {self.p} (+{n} of {len(self.d)})")
        b = self.d[self.p:self.p + n]
        self.p += n
        return b

    def unpack(self, fmt):
        return struct.unpack(fmt, self.take(struct.calcsize(fmt)))[0]

    def uvarint(self):
        shift = value = 0
        while True:
            byte = self.take(1)[0]
            value |= (byte & 0x7F) << shift
            if not byte & 0x80:
                return value
            shift += 7

    def varint(self):
        v = self.uvarint()
        return (v >> 1) ^ -(v & 1)

    def vbytes(self):
        n = self.varint()
        return None if n < 0 else self.take(n)


# ------------------------------------------------------------- formats

def _message(r, offset, size, inner=False):
    """One MessageSet v0/v1 entry (after its offset and size)."""
    body = r.take(size)
    m = _R(body)
    crc = m.unpack(">I")
    magic = m.unpack(">b")
    attributes = m.unpack(">b")
    msg = {"offset": offset, "magic": magic, "attributes": attributes,
           "codec": CODECS.get(attributes & 7, attributes & 7),
           "crc_ok": zlib.crc32(body[4:]) == crc}
    if magic == 1:
        msg["timestamp_type"] = "log_append" if attributes & 8 else "create"
        msg["timestamp"] = m.unpack(">q")
    n = m.unpack(">i")
    key = None if n < 0 else m.take(n)
    n = m.unpack(">i")
    value = None if n < 0 else m.take(n)
    if m.p != len(body):
        raise RecordsError("message size does not match its fields")
    msg["key"] = text(key)
    if attributes & 7 and value is not None:
        if inner:
            raise RecordsError("nested compressed message")
        msg["compressed_size"] = len(value)
        plain = decompress(attributes & 7, value, msg)
        if plain is not None:
            msg["inner"] = _message_set(plain, inner=True)
    else:
        msg["value"] = text(value)
    return msg


def _message_set(data, inner=False):
    r = _R(data)
    out = []
    while r.p < len(data):
        offset = r.unpack(">q")
        size = r.unpack(">i")
        out.append(_message(r, offset, size, inner))
    return out


def _record(r):
    length = r.varint()
    start = r.p
    rec = {"attributes": r.unpack(">b"), "timestamp_delta": r.varint(),
           "offset_delta": r.varint()}
    rec["key"] = text(r.vbytes())
    rec["value"] = text(r.vbytes())
    rec["headers"] = []
    for _ in range(r.varint()):
        n = r.varint()
        hkey = r.take(n).decode("utf-8")
        rec["headers"].append({"key": hkey, "value": text(r.vbytes())})
    if r.p - start != length:
        raise RecordsError("record length does not match its fields")
    return rec


def _batch(r, base_offset, length):
    body = r.take(length)
    b = _R(body)
    batch = {"base_offset": base_offset, "batch_length": length,
             "partition_leader_epoch": b.unpack(">i"), "magic": b.unpack(">b")}
    crc = b.unpack(">I")
    batch["crc_ok"] = crc32c(body[9:]) == crc
    attributes = b.unpack(">h")
    batch.update({
        "attributes": attributes, "codec": CODECS.get(attributes & 7, attributes & 7),
        "timestamp_type": "log_append" if attributes & 8 else "create",
        "transactional": bool(attributes & 16), "control": bool(attributes & 32),
        "last_offset_delta": b.unpack(">i"), "first_timestamp": b.unpack(">q"),
        "max_timestamp": b.unpack(">q"), "producer_id": b.unpack(">q"),
        "producer_epoch": b.unpack(">h"), "base_sequence": b.unpack(">i"),
        "record_count": b.unpack(">i")})
    payload = body[b.p:]
    if attributes & 7:
        batch["compressed_size"] = len(payload)
        payload = decompress(attributes & 7, payload, batch)
        if payload is None:
            return batch
    rr = _R(payload)
    batch["records"] = [_record(rr) for _ in range(batch["record_count"])]
    if rr.p != len(payload):
        raise RecordsError("bytes left after the batch's records")
    return batch


def decode_records(data, allow_partial=False):
    """Decodes a records field: a sequence of entries, each a v0/v1 message
    or a v2 batch (the magic byte sits at the same offset, 16, in both).
    A fetch may end in a partial entry (allow_partial)."""
    r = _R(data)
    entries = []
    while r.p < len(data):
        if len(data) - r.p < 17:
            break
        offset = r.unpack(">q")
        size = r.unpack(">i")
        if r.p + size > len(data):
            r.p -= 12
            break
        magic = data[r.p + 4]
        if magic == 2:
            entries.append({"batch": _batch(r, offset, size)})
        else:
            entries.append({"message": _message(r, offset, size)})
    out = {"entries": entries}
    if r.p != len(data):
        if not allow_partial:
            raise RecordsError(f"{len(data) - r.p} trailing bytes in records")
        out["partial_tail_bytes"] = len(data) - r.p
    return out


def flatten(decoded):
    """(key, value, headers) of every record, unwrapping compression."""
    out = []

    def msgs(ms):
        for m in ms:
            if "inner" in m:
                msgs(m["inner"])
            elif "value" in m:
                out.append({"key": m["key"], "value": m["value"], "headers": []})

    for e in (decoded or {}).get("entries", []):
        if "message" in e:
            msgs([e["message"]])
        else:
            for rec in e["batch"].get("records", []):
                out.append({"key": rec["key"], "value": rec["value"],
                            "headers": rec["headers"]})
    return out
