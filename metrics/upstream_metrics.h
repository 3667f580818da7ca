// The upstream layer's events as metrics: pp::upstream::UpstreamObserver over
// upstream_auth_failures_total{broker,reason}. Loop thread. The broker label
// is "host:port" (bootstrap connections, which fail first, have no node id);
// reasons are the small fixed set the upstream layer names.
#pragma once

#include <prometheus/counter.h>
#include <prometheus/family.h>

#include <map>
#include <string>
#include <utility>

#include "proxy/upstream/upstream_observer.h"

namespace pp {

class UpstreamMetrics final : public upstream::UpstreamObserver {
 public:
  explicit UpstreamMetrics(prometheus::Family<prometheus::Counter>& auth_failures) : auth_failures_(auth_failures) {}

  void on_auth_failure(std::string_view broker, std::string_view reason) override;

 private:
  prometheus::Family<prometheus::Counter>& auth_failures_;
  std::map<std::pair<std::string, std::string>, prometheus::Counter*> by_broker_reason_;
};

}  // namespace pp
