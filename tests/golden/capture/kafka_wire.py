"""Kafka wire primitives for the golden-capture tooling: API names, which
versions are flexible (KIP-482), and a bounds-checked big-endian Reader."""
import struct

# Kafka API keys (protocol guide), snake_case as used for directory names.
API_NAMES = {
    0: "produce", 1: "fetch", 2: "list_offsets", 3: "metadata",
    4: "leader_and_isr", 5: "stop_replica", 6: "update_metadata",
    7: "controlled_shutdown", 8: "offset_commit", 9: "offset_fetch",
    10: "find_coordinator", 11: "join_group", 12: "heartbeat",
    13: "leave_group", 14: "sync_group", 15: "describe_groups",
    16: "list_groups", 17: "sasl_handshake", 18: "api_versions",
    19: "create_topics", 20: "delete_topics", 21: "delete_records",
    22: "init_producer_id", 23: "offset_for_leader_epoch",
    24: "add_partitions_to_txn", 25: "add_offsets_to_txn", 26: "end_txn",
    27: "write_txn_markers", 28: "txn_offset_commit",
    29: "describe_acls", 30: "create_acls", 31: "delete_acls",
    32: "describe_configs", 33: "alter_configs",
    36: "sasl_authenticate", 37: "create_partitions", 42: "delete_groups",
    47: "offset_delete",
}

# First version whose request header is v2 (flexible, KIP-482). Responses
# then use header v1, except ApiVersions, whose response header stays v0 so
# that a client can always read it.
FIRST_FLEXIBLE = {
    0: 9, 1: 12, 2: 6, 3: 9, 8: 8, 9: 6, 10: 3, 11: 6, 12: 4, 13: 4,
    14: 4, 15: 5, 16: 3, 18: 3, 19: 5, 20: 4, 22: 2, 32: 4, 36: 2, 37: 2,
}


def is_flexible(api_key, api_version):
    first = FIRST_FLEXIBLE.get(api_key)
    return first is not None and api_version >= first


class DecodeError(Exception):
    pass


class Reader:
    def __init__(self, data, pos=0):
        self.data = bytes(data)
        self.pos = pos

    def left(self):
        return len(self.data) - self.pos

    def take(self, n):
        if n < 0 or n > self.left():
            raise DecodeError(f"need {n} bytes at {self.pos}, have {self.left()}")
        b = self.data[self.pos:self.pos + n]
        self.pos += n
        return b

    def _fmt(self, fmt):
        size = struct.calcsize(fmt)
        return struct.unpack(fmt, self.take(size))[0]

    def i8(self): return self._fmt(">b")
    def i16(self): return self._fmt(">h")
    def i32(self): return self._fmt(">i")
    def u32(self): return self._fmt(">I")
    def i64(self): return self._fmt(">q")
    def boolean(self): return self.i8() != 0

    def uvarint(self):
        shift = value = 0
        while True:
            byte = self.take(1)[0]
            value |= (byte & 0x7F) << shift
            if not byte & 0x80:
                return value
            shift += 7
            if shift > 63:
                raise DecodeError("varint too long")

    def varint(self):  # zig-zag, as in RecordBatch v2 records
        v = self.uvarint()
        return (v >> 1) ^ -(v & 1)

    def string(self, nullable=False):
        n = self.i16()
        if n < 0:
            if nullable:
                return None
            raise DecodeError("null non-nullable string")
        return self.take(n).decode("utf-8")

    def nbytes(self):
        n = self.i32()
        return None if n < 0 else self.take(n)

    def array(self, item):
        n = self.i32()
        if n < 0:
            return None
        if n > self.left():
            raise DecodeError(f"array count {n} > bytes left")
        return [item() for _ in range(n)]

    def compact_string(self):
        n = self.uvarint() - 1
        return None if n < 0 else self.take(n).decode("utf-8")

    def compact_array(self, item):
        n = self.uvarint() - 1
        return None if n < 0 else [item() for _ in range(n)]

    def tagged_fields(self):
        fields = {}
        for _ in range(self.uvarint()):
            tag = self.uvarint()
            fields[tag] = self.take(self.uvarint()).hex()
        return fields
