// Produce requests on a session: convert the record sets to runs
// (produce_conversion.h), hand each run to the sink, and answer per acks:
// acks=0 gets no response (its records are still submitted and delivered);
// acks 1 and -1 are answered once every partition has its upstream result,
// with the upstream's base offset, log_append_time and log_start_offset
// ("A client's acknowledgement is a promise", ARCHITECTURE.md), or at the
// request's deadline, whichever comes first: then what the sink has not sent
// is withdrawn and what it has is answered as timed out ("Answer by the
// client's deadline", PIPELINE.md). A request's runs stay in the sink if the
// client leaves, until that deadline.
#pragma once

#include <memory>

#include "proxy/base/bytes.h"
#include "proxy/base/frame_buffer.h"
#include "proxy/protocol/header.h"
#include "proxy/protocol/wire_reader.h"

namespace pp {

class ClientSession;

void handle_produce(ClientSession& session, const RequestHeader& header, std::shared_ptr<const FrameBuffer> frame,
                    WireReader& body);

}  // namespace pp
