// kafka-python 2.0.2 with api_version (0, 9) (Produce v1, magic 0),
// (0, 10) (Produce v2, magic 1), (0, 11) (Produce v3, magic 2) and its probed
// default, acks 0, 1 and all, uncompressed and gzip, through the proxy to both
// upstreams. Every record once, per-partition order, keys/values/headers, the
// client's timestamps (magic 1+; magic 0 gets the receive time), and the
// offsets returned to the client are the upstream's.
#include <map>

#include "tests/e2e/e2e_env.h"

namespace pp::e2e {
namespace {

struct PythonCase {
  const char* upstream;
  const char* api;
};

struct Sent {
  std::string topic;
  std::string key;
  std::int32_t partition = 0;
  std::int64_t offset = -1;
  std::int64_t timestamp = 0;
  bool headers = false;
};

class KafkaPythonThroughProxy : public ::testing::TestWithParam<PythonCase> {};

TEST_P(KafkaPythonThroughProxy, AllAcksAndCodecsLandOnceWithUpstreamOffsets) {
  const PythonCase c = GetParam();
  SharedProxy& env = shared_proxy(c.upstream);
  ASSERT_TRUE(env.proxy->ready()) << env.proxy->error();
  std::string prefix = std::string("kp-") + c.upstream + "-" + c.api;
  for (char& ch : prefix) {
    if (ch == '.' || ch == '_') ch = '-';
  }
  for (const char* acks : {"0", "1", "all"}) {
    for (const char* codec : {"none", "gzip"}) {
      env.upstream->create_topic(prefix + "-acks" + acks + "-" + codec, 2);
    }
  }
  constexpr int kRecords = 30;
  const auto produced = run({std::string(PP_SOURCE_DIR) + "/tests/e2e/kafka_python_produce.py", env.proxy->address(),
                             c.api, prefix, std::to_string(kRecords)},
                            120);
  ASSERT_EQ(produced.exit_code, 0) << produced.err;
  std::map<std::string, std::vector<Sent>> by_topic;
  std::istringstream lines(produced.out);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty()) continue;
    Sent s{json_field(line, "topic"),
           json_field(line, "key"),
           std::stoi(json_field(line, "partition")),
           std::stoll(json_field(line, "offset")),
           std::stoll(json_field(line, "timestamp")),
           json_field(line, "headers") == "true"};
    by_topic[s.topic].push_back(s);
  }
  ASSERT_EQ(by_topic.size(), 6u) << produced.out << produced.err;

  const bool magic0 = std::string(c.api) == "0.9";
  for (const auto& [topic, sent] : by_topic) {
    SCOPED_TRACE(topic);
    ASSERT_EQ(sent.size(), static_cast<std::size_t>(kRecords));
    const bool acks0 = topic.find("-acks0-") != std::string::npos;
    const auto logged = consume_upstream_until(env.upstream->bootstrap(), topic, kRecords);
    ASSERT_EQ(logged.size(), static_cast<std::size_t>(kRecords));
    std::map<std::string, const LoggedRecord*> by_key;
    std::map<std::int32_t, int> last_index;  // per-partition order of i in "k-i"
    for (const LoggedRecord& r : logged) {
      EXPECT_TRUE(by_key.emplace(r.key, &r).second) << "duplicate " << r.key;
      const int i = std::stoi(r.key.substr(2));
      auto [it, first] = last_index.emplace(r.partition, i);
      if (!first) {
        EXPECT_GT(i, it->second) << "order broken in partition " << r.partition;
        it->second = i;
      }
      EXPECT_EQ(r.value, "v-" + std::to_string(i));
    }
    for (const Sent& s : sent) {
      auto it = by_key.find(s.key);
      ASSERT_NE(it, by_key.end()) << "lost " << s.key;
      const LoggedRecord& r = *it->second;
      EXPECT_EQ(r.partition, s.partition);
      if (!acks0) {
        EXPECT_EQ(s.offset, r.offset) << s.key;  // what the client was told
      }
      if (!magic0) {
        EXPECT_EQ(r.timestamp, s.timestamp) << s.key;
      }
      if (s.headers) {
        EXPECT_EQ(r.headers, "n=" + s.key.substr(2)) << s.key;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(ApiVersions, KafkaPythonThroughProxy,
                         ::testing::Values(PythonCase{"test_cluster", "0.9"}, PythonCase{"test_cluster", "0.10"},
                                           PythonCase{"test_cluster", "0.11"}, PythonCase{"test_cluster", "auto"},
                                           PythonCase{"librdkafka_mock", "0.9"}, PythonCase{"librdkafka_mock", "0.10"},
                                           PythonCase{"librdkafka_mock", "0.11"},
                                           PythonCase{"librdkafka_mock", "auto"}),
                         [](const auto& info) {
                           std::string n = std::string(info.param.upstream) + "_" + info.param.api;
                           for (char& ch : n) {
                             if (ch == '.') ch = '_';
                           }
                           return n;
                         });

}  // namespace
}  // namespace pp::e2e
