// The upstream layer's facts that are events, not samples: a sampler cannot
// see a handshake that failed between two of its ticks. metrics/ implements
// it (Metrics::upstream_observer()); the default does nothing.
#pragma once

#include <string_view>

namespace pp::upstream {

class UpstreamObserver {
 public:
  virtual ~UpstreamObserver() = default;
  // A connection to `broker` ("host:port") failed to authenticate. reason is
  // one of a small fixed set (tls_certificate, tls_hostname, tls_handshake,
  // tls_local), so it can be a metric label.
  virtual void on_auth_failure(std::string_view broker, std::string_view reason) = 0;
};

}  // namespace pp::upstream
