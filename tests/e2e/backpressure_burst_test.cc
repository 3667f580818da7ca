// A burst far over buffer_memory_bytes from a legacy client: the front end
// pauses its reads (the log says so) and still every record lands once, in
// order; nothing is dropped or refused for being fast.
#include "tests/e2e/e2e_env.h"

namespace pp::e2e {
namespace {

TEST(BackpressureBurst, ABurstOverTheBudgetIsPausedAndDeliveredCompletely) {
  auto pauses = std::make_shared<PhraseCounter>("of memory budget in use, pausing reads");
  frontend::log().sinks().push_back(pauses);  // before the proxy's loop thread logs
  SharedProxy& env = shared_proxy("burst");   // buffer_memory_bytes = 256 KiB
  ASSERT_TRUE(env.proxy->ready()) << env.proxy->error();
  env.upstream->create_topic("burst", 1);

  constexpr int kRecords = 30000;  // ~6 MB of values: over 20 times the budget
  std::string input;
  input.reserve(kRecords * 220);
  for (int i = 0; i < kRecords; ++i) input += "key-" + std::to_string(i) + ":" + std::string(200, 'x') + "\n";
  const auto started = std::chrono::steady_clock::now();
  const auto produced = run({"kcat", "-P", "-b", env.proxy->address(), "-t", "burst", "-p", "0", "-K:", "-z", "gzip",
                             "-X", "acks=-1", "-X", "api.version.request=false", "-X",
                             "broker.version.fallback=0.9.0.1", "-X", "queue.buffering.max.messages=100000"},
                            120, input);
  const auto produce_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started).count();
  ASSERT_EQ(produced.exit_code, 0) << produced.err;
  EXPECT_GE(pauses->count(), 1) << "no back-pressure pause was logged";

  const auto logged = consume_upstream_until(env.upstream->bootstrap(), "burst", kRecords);
  ASSERT_EQ(logged.size(), static_cast<std::size_t>(kRecords));
  for (int i = 0; i < kRecords; ++i) {
    ASSERT_EQ(logged[static_cast<std::size_t>(i)].key, "key-" + std::to_string(i)) << "order or duplicate at " << i;
  }
  std::printf("burst: %d records (%zu bytes) through a 256 KiB budget in %lld ms, %d pause lines logged\n", kRecords,
              input.size(), static_cast<long long>(produce_ms), pauses->count());
  frontend::log().sinks().pop_back();
}

}  // namespace
}  // namespace pp::e2e
