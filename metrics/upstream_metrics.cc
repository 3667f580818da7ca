#include "metrics/upstream_metrics.h"

namespace pp {

void UpstreamMetrics::on_auth_failure(std::string_view broker, std::string_view reason) {
  auto key = std::make_pair(std::string(broker), std::string(reason));
  auto found = by_broker_reason_.find(key);
  if (found == by_broker_reason_.end()) {
    prometheus::Counter& c = auth_failures_.Add({{"broker", key.first}, {"reason", key.second}});
    found = by_broker_reason_.emplace(std::move(key), &c).first;
  }
  found->second->Increment();
}

}  // namespace pp
