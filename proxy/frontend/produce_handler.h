// Produce requests on a session: convert the record sets to runs
// (produce_conversion.h), hand each run to the sink, and answer per acks:
// acks=0 gets no response (its records are still submitted and delivered);
// acks 1 and -1 are answered once every partition has its upstream result,
// with the upstream's base offset, log_append_time and log_start_offset
// (rule of the house 6). A request already in the sink stays there if the
// client leaves.
// Rules of the house: docs/design/ARCHITECTURE.md.
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
