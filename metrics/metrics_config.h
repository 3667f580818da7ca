// The metrics layer's own settings: [metrics] of docs/design/INTERFACES.md. Kept here
// rather than taken from config/ so metrics/ depends on nothing the daemon
// owns; the daemon copies config::MetricsSettings into it field by field.
#pragma once

#include <string>

namespace pp {

struct MetricsConfig {
  // host:port of /metrics, /healthz and /readyz; port 0 picks a free port (tests).
  std::string address = "127.0.0.1:9464";
  // false: per-partition series (inflight_batches, partition_window,
  // window_resets_total) lose their partition label and become per topic, so
  // a client with thousands of partitions cannot explode a Prometheus server.
  bool partition_labels = true;
};

}  // namespace pp
