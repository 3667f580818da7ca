#include "proxy/upstream/log.h"

namespace pp::upstream {

spdlog::logger& log() {
  static std::shared_ptr<spdlog::logger> logger = [] {
    if (auto existing = spdlog::get("upstream")) return existing;
    auto l = spdlog::default_logger()->clone("upstream");
    spdlog::register_logger(l);
    return l;
  }();
  return *logger;
}

}  // namespace pp::upstream
