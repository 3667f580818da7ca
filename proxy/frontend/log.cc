#include "proxy/frontend/log.h"

namespace pp::frontend {

spdlog::logger& log() {
  static std::shared_ptr<spdlog::logger> logger = [] {
    if (auto existing = spdlog::get("frontend")) return existing;
    auto l = spdlog::default_logger()->clone("frontend");
    spdlog::register_logger(l);
    return l;
  }();
  return *logger;
}

}  // namespace pp::frontend
