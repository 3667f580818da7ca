// metrics-reference: prints docs/metrics.md, the metrics reference, from the
// metrics layer itself: a pp::Metrics is built on a fresh registry, every
// event the front end, the pipeline, the upstream layer and the daemon's
// samplers report is fed to it once, and what its registry collects gives
// each family's name, type, help and label names. It runs twice, with
// metrics.partition_labels true and false, to say which labels that key drops.
//
//   metrics-reference
//
// A family with no child is not collected, so one that no event below feeds
// would be missing: the program counts MetricFamilies' members and exits 1
// when the registry collected fewer families, naming the fix (feed the new
// event in feed_every_event()). The drift test then fails, so no metric
// reaches a release undocumented.
#include <prometheus/metric_family.h>

#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "metrics/metric_families.h"
#include "metrics/metrics.h"
#include "proxy/frontend/frontend_observer.h"
#include "proxy/pipeline/pipeline_observer.h"
#include "proxy/protocol/api_key.h"
#include "proxy/protocol/error_code.h"
#include "proxy/spool/spool_observer.h"
#include "proxy/upstream/upstream_observer.h"

namespace {

// MetricFamilies holds one reference per family and nothing else, so its
// size counts the families it registers.
constexpr std::size_t kFamilies = sizeof(pp::MetricFamilies) / sizeof(void*);
static_assert(sizeof(pp::MetricFamilies) % sizeof(void*) == 0, "MetricFamilies holds more than family references");

struct Family {
  std::string name;
  std::string type;
  std::string help;
  std::set<std::string> labels;
  // Label values whose series exist before any event: label -> values.
  std::map<std::string, std::set<std::string>> from_start;
};

std::string type_name(prometheus::MetricType t) {
  switch (t) {
    case prometheus::MetricType::Counter:
      return "counter";
    case prometheus::MetricType::Gauge:
      return "gauge";
    case prometheus::MetricType::Histogram:
      return "histogram";
    case prometheus::MetricType::Summary:
      return "summary";
    case prometheus::MetricType::Untyped:
      return "untyped";
  }
  return "untyped";
}

// Every event the metrics layer has a method or observer hook for, once.
void feed_every_event(pp::Metrics& m) {
  const pp::TopicPartition tp{"topic", 0};
  pp::FrontendObserver& front = m.frontend_observer();
  front.on_client_connections(1);
  front.on_request(pp::ApiKey::kProduce, 3);
  front.on_records_received(1, 100);
  front.on_backpressure(true);
  front.on_share_pause();
  front.on_request_parked();
  front.on_client_tls_failure("certificate");
  front.on_request_refused_for_memory();
  front.on_produce_done(-1, 1);
  front.on_client_duplicate("acked");
  front.on_deadline_answer(pp::DeadlineOutcome::kWithdrawn, 2);
  front.on_client_produce("librdkafka", "2.0.0", 3, 2);
  front.on_principal_request("alice");
  front.on_principal_produce("alice", 1000, 5);
  front.on_authorization_denied("alice", "write");
  pp::PipelineObserver& pipe = m.pipeline_observer();
  pipe.on_window(tp, 20);
  pipe.on_window_reset(tp);
  pipe.on_inflight_batches(tp, 1);
  pipe.on_batch_sent(tp, 1, 100, false);
  pipe.on_retry(pp::ErrorCode::kNotLeaderOrFollower);
  pipe.on_duplicate_sequence();
  pipe.on_epoch_bump("new_producer_id");
  pipe.on_ambiguous_renumbered("epoch_bump", 1);
  pipe.on_identity_state("READY");
  pipe.on_leader_change(tp);
  pipe.on_records_delivered(1);
  pipe.on_records_failed(pp::ErrorCode::kRequestTimedOut, 1);
  pipe.on_produce_request(1);
  pipe.on_produce_response(1, 1);
  pp::upstream::UpstreamObserver& up = m.upstream_observer();
  up.on_auth_failure("broker:9093", "sasl_authentication");
  pp::spool::SpoolObserver& spool = m.spool_observer();
  spool.on_fsync(0.002, 10);
  spool.on_usage(4096, 10, 0);
  spool.on_corrupt_bytes(100);
  spool.on_replayed_batches(1);
  m.on_upstream_reauthentication(1);
  front.on_authentication("SCRAM-SHA-256", "success");
  front.on_authentication("PLAIN", "bad_password");
  front.on_authentication("PLAIN", "abandoned");
  const pp::BrokerSample broker{.node_id = 1, .in_flight = 1, .connected = true};
  m.sample(1, std::span(&broker, 1));
  const std::pair<std::string_view, std::size_t> use{"request_frames", 1};
  m.sample_memory(std::span(&use, 1));
  m.sample_topics(1);
}

// The families in registration order, and by name.
struct Collected {
  std::vector<std::string> order;
  std::map<std::string, Family> by_name;
};

Collected collect(bool partition_labels, std::string& error) {
  pp::Metrics m(pp::MetricsConfig{.partition_labels = partition_labels}, "VERSION");
  Collected result;
  auto& out = result.by_name;
  for (const auto& f : m.registry()->Collect()) {
    auto& family = out[f.name];
    if (f.metric.size() < 2) continue;  // one series: nothing to list
    for (const auto& series : f.metric) {
      for (const auto& label : series.label) family.from_start[label.name].insert(label.value);
    }
  }
  feed_every_event(m);
  const auto collected = m.registry()->Collect();
  for (const auto& f : collected) {
    result.order.push_back(f.name);
    auto& family = out[f.name];
    family.name = f.name;
    family.type = type_name(f.type);
    family.help = f.help;
    for (const auto& series : f.metric) {
      for (const auto& label : series.label) family.labels.insert(label.name);
    }
  }
  if (collected.size() != kFamilies) {
    error = "MetricFamilies has " + std::to_string(kFamilies) + " families but " + std::to_string(collected.size()) +
            " were collected: feed the new family's event in feed_every_event() "
            "(tests/ops/reference_docs/metrics_reference.cc)";
  }
  return result;
}

std::string cell(const std::string& s) {
  std::string out;
  for (const char ch : s) {
    if (ch == '|') out += '\\';
    out += ch == '\n' ? ' ' : ch;
  }
  return out;
}

std::string label_cell(const Family& f, const Family& without_partitions) {
  std::string out;
  for (const auto& label : f.labels) {
    out += (out.empty() ? "" : ", ") + ("`" + label + "`");
    if (!without_partitions.labels.contains(label)) out += " (only with `metrics.partition_labels = true`)";
    if (const auto values = f.from_start.find(label); values != f.from_start.end()) {
      std::string list;
      for (const auto& v : values->second) list += (list.empty() ? "" : ", ") + v;
      out += " (from the start: " + list + ")";
    }
  }
  return out;
}

void print_preamble(std::ostream& out) {
  out << "# Metrics reference\n\n"
         "<!-- Generated by scripts/gen_docs.sh (tests/ops/reference_docs/metrics_reference.cc) from the\n"
         "     metric families of metrics/. Do not edit: change the code and run scripts/gen_docs.sh. -->\n\n"
         "`GET /metrics` on `metrics.address` (default `127.0.0.1:9464`) serves these in Prometheus' text\n"
         "format, beside the HTTP server's own `exposer_*` families. A histogram is exposed as `NAME_bucket`\n"
         "(with `le`), `NAME_sum` and `NAME_count`. Where a label lists values \"from the start\", those\n"
         "series exist at zero before anything happens, so `rate()` and alerts have a zero to start from;\n"
         "other label values appear when first seen. With `metrics.partition_labels = false` the\n"
         "per-partition families lose their `partition` label and fold per topic.\n";
}

}  // namespace

int main() {
  std::string error;
  const auto families = collect(true, error);
  const auto per_topic = collect(false, error);
  if (!error.empty()) {
    std::cerr << "metrics-reference: " << error << "\n";
    return 1;
  }
  std::ostringstream doc;
  print_preamble(doc);
  std::string type;  // the registry collects counters, then gauges, then histograms
  for (const auto& name : families.order) {
    const Family& f = families.by_name.at(name);
    const Family& folded = per_topic.by_name.at(name);
    if (f.type != type) {
      type = f.type;
      doc << "\n## " << static_cast<char>(type[0] - 'a' + 'A') << type.substr(1) << "s\n\n"
          << "| name | labels | meaning |\n|---|---|---|\n";
    }
    std::string help = f.help;
    if (folded.help != f.help) help += " With `metrics.partition_labels = false`: " + folded.help;
    if (help.empty()) {
      std::cerr << "metrics-reference: " << name << " has no help text\n";
      return 1;
    }
    doc << "| `" << name << "` | " << label_cell(f, folded) << " | " << cell(help) << " |\n";
  }
  std::cout << doc.str();
  return 0;
}
