"""Builds the JSON description written next to each golden .hex file: what is
known about the frame (who sent it, exact command and config, decoded header
and body) so tests can assert decoded fields without trusting our codec."""
import json

import kafka_decode as kd
from kafka_records import flatten

# Kafka error codes seen in these captures (protocol guide names).
ERRORS = {0: "NONE", 1: "OFFSET_OUT_OF_RANGE", 2: "CORRUPT_MESSAGE",
          3: "UNKNOWN_TOPIC_OR_PARTITION", 6: "NOT_LEADER_OR_FOLLOWER",
          10: "MESSAGE_TOO_LARGE", 15: "COORDINATOR_NOT_AVAILABLE",
          16: "NOT_COORDINATOR", 25: "UNKNOWN_MEMBER_ID", 27: "REBALANCE_IN_PROGRESS",
          35: "UNSUPPORTED_VERSION", 45: "OUT_OF_ORDER_SEQUENCE_NUMBER",
          46: "DUPLICATE_SEQUENCE_NUMBER", 47: "INVALID_PRODUCER_EPOCH",
          76: "UNSUPPORTED_COMPRESSION_TYPE", 79: "MEMBER_ID_REQUIRED"}


def error_name(code):
    return ERRORS.get(code, f"error_{code}")


def produce_summary(body):
    """Per partition: magic, codec, producer ids and the records as strings."""
    parts = []
    for t in body["topics"]:
        for p in t["partitions"]:
            entries = (p["records"] or {}).get("entries", [])
            magics = sorted({e["message"]["magic"] if "message" in e else e["batch"]["magic"]
                             for e in entries})
            codecs = sorted({(e.get("message") or e.get("batch"))["codec"] for e in entries})
            s = {"topic": t["topic"], "partition": p["partition"], "magic": magics,
                 "compression": codecs, "entries": len(entries),
                 "records": flatten(p["records"])}
            batches = [e["batch"] for e in entries if "batch" in e]
            if batches:
                b = batches[0]
                s.update(producer_id=b["producer_id"], producer_epoch=b["producer_epoch"],
                         base_sequence=b["base_sequence"], transactional=b["transactional"])
            if any(e.get("message", {}).get("inner") for e in entries):
                s["compressed_wrapper"] = True
            parts.append(s)
    return {"acks": body["acks"], "timeout_ms": body["timeout_ms"],
            "transactional_id": body.get("transactional_id"), "partitions": parts}


def response_errors(api_key, body):
    out = []
    if api_key in (0, 1, 2):
        for t in body.get("topics") or []:
            for p in t["partitions"]:
                out.append({"topic": t["topic"], "partition": p["partition"],
                            "error_code": p["error_code"],
                            "error": error_name(p["error_code"])})
    if "error_code" in body:
        out.append({"error_code": body["error_code"], "error": error_name(body["error_code"])})
    return out


def produce_notes(direction, req_frame):
    """Facts about a Produce exchange that a test should not mistake for
    normal broker behaviour."""
    hdr, reader = kd.decode_request_header(req_frame)
    body, err = kd.decode_body("request", 0, hdr["api_version"], reader)
    notes = {}
    if err:
        return notes
    magics = {m for p in produce_summary(body)["partitions"] for m in p["magic"]}
    if direction == "response" and magics & {0, 1}:
        notes["note"] = ("the mock refuses message formats 0 and 1 with UNSUPPORTED_VERSION "
                         "(35), as Kafka 4.x does; this is the expected answer")
    if body["acks"] == 0:
        notes["acks_zero_note"] = ("acks=0: a real Kafka broker sends no Produce response; "
                                   "librdkafka 2.0.2's mock answers anyway (pair is null "
                                   "only when the client closed first)")
    return notes


def client_outcome(run):
    """How the client run ended: exit code, the end of its stderr, and for
    the python peers their one-line JSON report (negotiated api_version,
    delivery results) without the consumed messages."""
    out = {"exit_code": run["rc"], "stderr_tail": run["stderr"][-300:]}
    if run["peer"] != "kcat" and run["stdout"].strip():
        try:
            report = json.loads(run["stdout"].strip().splitlines()[-1])
            report.pop("messages", None)
            out["report"] = report
        except ValueError:
            out["stdout_tail"] = run["stdout"][-300:]
    return out


def describe_frame(direction, frame, req_hdr, req_frame, run, pair, where, date, mock):
    api_key, v = req_hdr["api_key"], req_hdr["api_version"]
    client = {"peer": run["peer"], "version": run["peer_version"], "role": run["role"],
              "command": run["command"], "config": run["config"]}
    if run.get("stdin"):
        client["stdin"] = run["stdin"]
    client["outcome"] = client_outcome(run)
    doc = {"api": req_hdr["api"], "api_key": api_key, "api_version": v,
           "direction": direction, "case": run["case"], "date": date,
           "frame_size": len(frame), "size_prefix_included": False,
           "flexible": kd.is_flexible(api_key, v), "pair": pair, "client": client,
           "broker": mock, "captured": dict(where, how="tshark on lo, TCP stream "
                                            "reassembled with -z follow,tcp,raw, split "
                                            "by the 4-byte size prefix")}
    if direction == "request":
        doc["sent_by"] = run["peer_version"]
        hdr, reader = kd.decode_request_header(frame)
    else:
        doc["sent_by"] = mock
        hdr, reader = kd.decode_response_header(frame, api_key, v)
    doc["header"] = hdr
    body, err = kd.decode_body(direction, api_key, v, reader)
    if err:
        doc["body_decode_error"] = err
    if body is not None:
        doc["body"] = body
        if api_key == 0 and direction == "request":
            doc["produce"] = produce_summary(body)
            doc["records_sent"] = run.get("records_sent")
        if direction == "response":
            errs = response_errors(api_key, body)
            if errs:
                doc["errors"] = errs
    elif not err:
        doc["body_note"] = "body not decoded by the capture tooling (header only)"
    if api_key == 0:
        doc.update(produce_notes(direction, req_frame))
    return doc
