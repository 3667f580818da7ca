// Issue 14 "Isolation" with real clients and no record_errors: three
// kafka-python producers share one partition through the proxy; the test
// cluster refuses, without record_errors, every batch holding a record keyed
// "poison" (reject-key, as brokers before 2.4 and policy plugins answer).
// Only the client request carrying it fails; every other record lands once,
// in order, at the offset its client was told (docs/design/PIPELINE.md C.11).
#include <map>
#include <set>

#include "tests/e2e/e2e_support.h"

namespace pp::e2e {
namespace {

struct Told {
  std::string client;
  std::string key;
  std::int64_t offset = -1;
  std::string error;
};

std::vector<Told> parse(const std::string& out) {
  std::vector<Told> told;
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty()) continue;
    told.push_back(Told{json_field(line, "client"), json_field(line, "key"), std::stoll(json_field(line, "offset")),
                        json_field(line, "error")});
  }
  return told;
}

std::string text(const std::optional<Bytes>& b) {
  return b ? std::string(b->begin(), b->end()) : std::string();
}

TEST(PoisonedRecord, OnlyTheClientThatSentItFailsAndTheOthersLandOnceInOrder) {
  test_broker::TestCluster cluster(test_broker::TestClusterOptions{.brokers = 1, .topics = {{"shared", 1, 20}}});
  cluster.start();
  ASSERT_TRUE(cluster.reject_key("shared", 0, "poison", ErrorCode::kPolicyViolation));
  // While one batch is in flight (30 ms) the proxy lingers (C.4 rule 8), so
  // the clients' records that arrive meanwhile share the next batch.
  cluster.set_rtt_ms(30);
  config::Settings settings = proxy_settings(cluster.bootstrap());
  settings.producer.linger_ms = 100;
  ProxyUnderTest proxy(settings);
  ASSERT_TRUE(proxy.ready()) << proxy.error();

  constexpr int kRounds = 30;
  const auto produced = run({std::string(PP_SOURCE_DIR) + "/tests/e2e/shared_partition_produce.py", proxy.address(),
                             "shared", std::to_string(kRounds)},
                            180);
  ASSERT_EQ(produced.exit_code, 0) << produced.err;
  const std::vector<Told> told = parse(produced.out);
  ASSERT_EQ(told.size(), 3u * kRounds) << produced.out << produced.err;

  std::map<std::string, std::int64_t> offset_of;
  int poisoned = 0;
  for (const Told& t : told) {
    SCOPED_TRACE(t.client + " " + t.key);
    if (t.key == "poison") {
      ++poisoned;
      EXPECT_EQ(t.error, "PolicyViolationError") << "the sender of the refused record hears the broker's code";
      continue;
    }
    EXPECT_EQ(t.error, "") << "a record that merely shared a batch with the poisoned one failed";
    offset_of[t.key] = t.offset;
  }
  EXPECT_EQ(poisoned, kRounds / 5);

  std::map<std::string, int> last_round;  // per client, the round of its last record in the log
  std::set<std::string> seen;
  for (const auto& r : cluster.records("shared", 0)) {
    const std::string key = text(r.key);
    ASSERT_NE(key, "poison");
    EXPECT_TRUE(seen.insert(key).second) << "twice: " << key;
    const std::string client = key.substr(0, 1);
    const int round = std::stoi(key.substr(2));
    auto [it, first] = last_round.emplace(client, round);
    if (!first) {
      EXPECT_GT(round, it->second) << "client " << client << " out of order";
      it->second = round;
    }
    auto told_at = offset_of.find(key);
    ASSERT_NE(told_at, offset_of.end()) << "in the log but never acknowledged: " << key;
    EXPECT_EQ(told_at->second, r.offset) << key << ": the client was told another offset";
  }
  EXPECT_EQ(seen.size(), offset_of.size()) << "every acknowledged record is in the log";
  // Bisection ran: at least one refused batch also held other clients'
  // records, so more batches were refused than there are poisoned records.
  EXPECT_GT(cluster.rejected_batches("shared", 0), poisoned);
  EXPECT_EQ(proxy.stop(), 0);
}

}  // namespace
}  // namespace pp::e2e
