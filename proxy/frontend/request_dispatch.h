// Routing one request frame of a client to its handler: ApiVersions,
// Metadata and Produce are served; APIs the codec describes but the proxy
// does not serve get the protocol's error answer and a log line; an unknown
// API key or a version we cannot decode closes that connection only.
// Stateless; Frontend hands one to each session it accepts. Loop thread only.
#pragma once

#include <memory>

#include "proxy/base/frame_buffer.h"
#include "proxy/frontend/client_session.h"

namespace pp {

class RequestDispatch final : public RequestRouter {
 public:
  void route(ClientSession& session, std::shared_ptr<const FrameBuffer> frame) override;
};

}  // namespace pp
