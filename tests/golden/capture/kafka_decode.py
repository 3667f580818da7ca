"""A small, independent Kafka decoder used only to label and sanity-check the
golden captures (it is not the proxy's codec and shares nothing with it).

It decodes frame headers for every API and the bodies the captures need to
describe (kafka_bodies.py), including MessageSet v0/v1 and RecordBatch v2
with one level of compression (kafka_records.py). Every body decoder must
consume its frame exactly; leftover bytes are an error, which catches
mis-split frames.
"""
from kafka_bodies import BODIES, api_versions_response_mock_v3_error
from kafka_wire import API_NAMES, Reader, is_flexible


def decode_request_header(frame):
    r = Reader(frame)
    h = {"api_key": r.i16(), "api_version": r.i16(), "correlation_id": r.i32()}
    # ControlledShutdown v0 is the only request with header v0 (no client id).
    if not (h["api_key"] == 7 and h["api_version"] == 0):
        h["client_id"] = r.string(nullable=True)
    if is_flexible(h["api_key"], h["api_version"]):
        h["tagged_fields"] = r.tagged_fields()
    h["api"] = API_NAMES.get(h["api_key"], f"api_{h['api_key']}")
    return h, r


def decode_response_header(frame, api_key, api_version):
    r = Reader(frame)
    h = {"correlation_id": r.i32()}
    if is_flexible(api_key, api_version) and api_key != 18:
        h["tagged_fields"] = r.tagged_fields()
    return h, r


def decode_body(direction, api_key, api_version, reader):
    """Decodes a body if we know it; returns (body or None, error or None).
    A known body must consume the frame exactly."""
    fns = BODIES.get(api_key)
    if not fns:
        return None, None
    fn = fns[0] if direction == "request" else fns[1]
    start = reader.pos
    body, err = _decode_exactly(fn, reader, api_version)
    if err and api_key == 18 and direction == "response" and api_version > 0:
        # KIP-511: a broker answers an ApiVersions version it does not know
        # with a v0 body (error 35 and its own version ranges).
        reader.pos = start
        body, err0 = _decode_exactly(fn, reader, 0)
        if not err0:
            body["decoded_as"] = "v0 body (KIP-511 answer to an unsupported version)"
            return body, None
        if api_version >= 3:
            reader.pos = start
            body, err3 = _decode_exactly(api_versions_response_mock_v3_error, reader,
                                         api_version)
            if not err3:
                body["decoded_as"] = ("librdkafka 2.0.2 mock's non-standard v3 error layout: "
                                      "raw int8 key count, no tag buffers")
                return body, None
    return body, err


def _decode_exactly(fn, reader, api_version):
    try:
        body = fn(reader, api_version)
    except Exception as e:  # DecodeError, RecordsError, codec and UTF-8 errors alike
        return None, f"{type(e).__name__}: {e}"
    if reader.left():
        return None, f"{reader.left()} bytes left after the body"
    return body, None
