#include "tests/broker/log.h"

#include <spdlog/sinks/stdout_sinks.h>

#include <cstdlib>

namespace pp::test_broker {

spdlog::logger& log() {
  // Thread-safe sink: the loop thread and a test's thread may both log.
  static std::shared_ptr<spdlog::logger> logger = [] {
    auto l = std::make_shared<spdlog::logger>("test-cluster", std::make_shared<spdlog::sinks::stderr_sink_mt>());
    l->set_pattern("%H:%M:%S.%e test-cluster %l: %v");
    // PP_TEST_CLUSTER_LOG=debug shows every refused batch and every dedup.
    const char* level = std::getenv("PP_TEST_CLUSTER_LOG");
    l->set_level(level ? spdlog::level::from_str(level) : spdlog::level::info);
    return l;
  }();
  return *logger;
}

}  // namespace pp::test_broker
