#include "tests/broker/log.h"

#include <spdlog/sinks/stdout_sinks.h>

namespace pp::test_broker {

spdlog::logger& log() {
  // Thread-safe sink: the loop thread and a test's thread may both log.
  static std::shared_ptr<spdlog::logger> logger = [] {
    auto l = std::make_shared<spdlog::logger>("test-cluster",
                                              std::make_shared<spdlog::sinks::stderr_sink_mt>());
    l->set_pattern("%H:%M:%S.%e test-cluster %l: %v");
    l->set_level(spdlog::level::info);
    return l;
  }();
  return *logger;
}

}  // namespace pp::test_broker
