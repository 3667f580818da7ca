// kcat (librdkafka 2.0.2) in its legacy modes and its default, each codec,
// through the proxy to the KIP-1269 test cluster and to librdkafka's mock
// cluster (which, like Kafka 4, refuses magic 0/1 from the same clients
// directly). Read back from the upstream with kcat: every record once, in
// order, keys/values/headers/timestamps kept, and the offsets kcat was told
// are the offsets in the upstream log.
#include <map>
#include <regex>

#include "tests/e2e/e2e_env.h"

namespace pp::e2e {
namespace {

struct KcatCase {
  const char* upstream;  // "test_cluster" | "librdkafka_mock"
  const char* mode;      // "0.8.2.2" | "0.9.0.1" | "default"
  const char* codec;
  int acks;
};

std::string case_name(const KcatCase& c) {
  std::string n =
      std::string(c.upstream) + "_" + c.mode + "_" + c.codec + "_acks" + (c.acks < 0 ? "all" : std::to_string(c.acks));
  for (char& ch : n) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return n;
}

class KcatThroughProxy : public ::testing::TestWithParam<KcatCase> {};

TEST_P(KcatThroughProxy, EveryRecordLandsOnceInOrderWithTheOffsetsTheClientWasTold) {
  const KcatCase c = GetParam();
  SharedProxy& env = shared_proxy(c.upstream);
  ASSERT_TRUE(env.proxy->ready()) << env.proxy->error();
  const std::string topic = "kcat-" + case_name(c);
  env.upstream->create_topic(topic, 2);

  constexpr int kRecords = 40;
  std::string input;
  for (int i = 0; i < kRecords; ++i) input += "key-" + std::to_string(i) + ":value-" + std::to_string(i) + "\n";
  std::vector<std::string> argv = {"kcat",
                                   "-P",
                                   "-b",
                                   env.proxy->address(),
                                   "-t",
                                   topic,
                                   "-p",
                                   "1",
                                   "-K:",
                                   "-z",
                                   c.codec,
                                   "-X",
                                   "acks=" + std::to_string(c.acks),
                                   "-X",
                                   "linger.ms=20",
                                   "-v",
                                   "-v"};
  const bool legacy = std::string(c.mode) != "default";
  if (legacy) {
    argv.insert(argv.end(),
                {"-X", "api.version.request=false", "-X", std::string("broker.version.fallback=") + c.mode});
  } else {
    argv.insert(argv.end(), {"-H", "trace=abc", "-H", "source=kcat"});
  }
  const std::int64_t before = wall_ms();
  const CommandResult produced = run(argv, 60, input);
  const std::int64_t after = wall_ms();
  ASSERT_EQ(produced.exit_code, 0) << produced.err;

  // "% Message delivered to partition 1 (offset 17) on broker 0", in order.
  std::vector<std::int64_t> told;
  const std::regex delivered(R"(delivered to partition (\d+) \(offset (-?\d+)\))");
  for (auto it = std::sregex_iterator(produced.err.begin(), produced.err.end(), delivered);
       it != std::sregex_iterator(); ++it) {
    told.push_back(std::stoll((*it)[2]));
  }
  ASSERT_EQ(told.size(), static_cast<std::size_t>(kRecords)) << produced.err;

  const auto logged = consume_upstream_until(env.upstream->bootstrap(), topic, kRecords);
  ASSERT_EQ(logged.size(), static_cast<std::size_t>(kRecords));
  std::map<std::string, int> seen;
  for (int i = 0; i < kRecords; ++i) {
    const LoggedRecord& r = logged[static_cast<std::size_t>(i)];
    SCOPED_TRACE(i);
    EXPECT_EQ(r.partition, 1);
    EXPECT_EQ(r.key, "key-" + std::to_string(i));  // order kept
    EXPECT_EQ(r.value, "value-" + std::to_string(i));
    ++seen[r.key];
    // CreateTime from the client, or (magic 0) the proxy's receive time:
    // either way inside the time the client ran.
    EXPECT_GE(r.timestamp, before - 1000);
    EXPECT_LE(r.timestamp, after + 1000);
    if (!legacy) {
      EXPECT_EQ(r.headers, "trace=abc,source=kcat");
    }
    if (c.acks != 0) {
      EXPECT_EQ(told[static_cast<std::size_t>(i)], r.offset);  // the real upstream offset
    }
  }
  EXPECT_EQ(seen.size(), static_cast<std::size_t>(kRecords));  // exactly once
}

std::vector<KcatCase> all_cases() {
  std::vector<KcatCase> out;
  for (const char* upstream : {"test_cluster", "librdkafka_mock"}) {
    for (const char* mode : {"0.8.2.2", "0.9.0.1"}) {
      for (const char* codec : {"none", "gzip", "snappy", "lz4"}) out.push_back({upstream, mode, codec, -1});
    }
    for (const char* codec : {"none", "gzip", "snappy", "lz4", "zstd"}) out.push_back({upstream, "default", codec, -1});
    out.push_back({upstream, "0.8.2.2", "none", 1});
    out.push_back({upstream, "0.8.2.2", "gzip", 0});
    out.push_back({upstream, "default", "none", 0});
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Modes, KcatThroughProxy, ::testing::ValuesIn(all_cases()),
                         [](const auto& info) { return case_name(info.param); });

// The situation the proxy fixes: the mock, like Kafka 4, refuses magic 0/1.
TEST(KcatDirect, TheMockRefusesLegacyMessageFormats) {
  SharedProxy& env = shared_proxy("librdkafka_mock");
  env.upstream->create_topic("kcat-direct-legacy", 1);
  const auto r =
      run({"kcat", "-P", "-b", env.upstream->bootstrap(), "-t", "kcat-direct-legacy", "-p", "0", "-X",
           "api.version.request=false", "-X", "broker.version.fallback=0.9.0.1", "-X", "message.send.max.retries=0"},
          30, "a\nb\n");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("version not supported"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace pp::e2e
