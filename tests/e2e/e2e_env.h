// One upstream and one proxy per upstream kind, shared by every test of the
// binary (starting them costs more than most tests), torn down at exit.
#pragma once

#include <map>

#include "tests/e2e/e2e_support.h"

namespace pp::e2e {

struct SharedProxy {
  std::unique_ptr<Upstream> upstream;
  std::unique_ptr<ProxyUnderTest> proxy;
};

inline std::map<std::string, SharedProxy>& shared_proxies() {
  static std::map<std::string, SharedProxy> all;
  return all;
}

class SharedProxiesTeardown : public ::testing::Environment {
 public:
  void TearDown() override {
    for (auto& [name, env] : shared_proxies()) {
      if (env.proxy) {
        EXPECT_EQ(env.proxy->stop(), 0) << name << ": the drain lost records";
      }
      env.proxy.reset();
      env.upstream.reset();
    }
    shared_proxies().clear();
  }
};

inline SharedProxy& shared_proxy(const std::string& kind) {
  static bool registered = [] {
    ::testing::AddGlobalTestEnvironment(new SharedProxiesTeardown);
    return true;
  }();
  (void)registered;
  SharedProxy& env = shared_proxies()[kind];
  if (!env.upstream) {
    if (kind == "librdkafka_mock") {
      env.upstream = std::make_unique<MockUpstream>();
    } else {
      env.upstream = std::make_unique<TestClusterUpstream>();
    }
    // "burst": a small buffer_memory_bytes, so a burst must be back-pressured.
    const std::int64_t budget = kind == "burst" ? 256 * 1024 : 67108864;
    env.proxy = std::make_unique<ProxyUnderTest>(proxy_settings(env.upstream->bootstrap(), budget));
  }
  return env;
}

// Polls the upstream until `expected` records are there (acks=0 answers
// nothing, so the test can't know when they landed) or 30 s pass.
inline std::vector<LoggedRecord> consume_upstream_until(const std::string& bootstrap, const std::string& topic,
                                                        std::size_t expected) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  std::vector<LoggedRecord> got;
  do {
    got = consume_upstream(bootstrap, topic);
    if (got.size() >= expected) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  } while (std::chrono::steady_clock::now() < deadline);
  return got;
}

}  // namespace pp::e2e
