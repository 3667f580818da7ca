// Routing one request frame of a client to its handler: ApiVersions,
// Metadata and Produce are served; APIs the codec describes but the proxy
// does not serve get the protocol's error answer and a log line; an unknown
// API key or a version we cannot decode closes that connection only.
#pragma once

#include <memory>

#include "proxy/base/bytes.h"
#include "proxy/base/frame_buffer.h"

namespace pp {

class ClientSession;

void dispatch_request(ClientSession& session, std::shared_ptr<const FrameBuffer> frame);

}  // namespace pp
