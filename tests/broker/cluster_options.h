// What a test cluster is made of: brokers, topics with their
// producer.state.batches.to.retain (KIP-1269), and the knobs that pick which
// Kafka broker generation it imitates (docs/design/PIPELINE.md D.3, D.5).
#pragma once

#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pp::test_broker {

// Kafka node ids. The test cluster numbers its brokers 1..N, as librdkafka's
// mock cluster does, so "broker 0" is never a valid id by accident.
using BrokerId = std::int32_t;

// KIP-1269: producer.state.batches.to.retain has a default and a minimum of 5
// (the NUM_BATCHES_TO_RETAIN every released broker hard-codes).
inline constexpr int kDefaultRetain = 5;
inline constexpr int kLegacyRetain = 5;

struct TopicSpec {
  std::string name;
  int partitions = 1;
  int retain = kDefaultRetain;
};

// Parses the CLI form "NAME:PARTITIONS[:RETAIN]" (docs/design/INTERFACES.md, Test cluster).
std::expected<TopicSpec, std::string> parse_topic_spec(std::string_view text);

// What a producer id the partition has no state for may start with
// (docs/design/PIPELINE.md D.3): the behaviour changed with every few Kafka releases.
enum class NoStateRule : std::uint8_t {
  // 0.11: only the last batch is retained; an older duplicate gets
  // DUPLICATE_SEQUENCE_NUMBER; an unknown producer must start at 0.
  kKafka0_11,
  // 1.0-2.4: a first sequence other than 0 without state is UNKNOWN_PRODUCER_ID.
  kKafka1_0,
  // 2.5-4.4 (KIP-360): any first sequence is accepted when there is no state
  // (ProducerAppendInfo.checkSequence, currentEntry.producerEpoch == NO_PRODUCER_EPOCH).
  kKafka2_5,
  // 4.5 (KAFKA-15591): a partition that never held records accepts only
  // sequence 0 (else OUT_OF_ORDER_SEQUENCE_NUMBER); one that did, any.
  kKafka4_5,
};

std::string_view to_string(NoStateRule rule);
std::optional<NoStateRule> parse_no_state_rule(std::string_view text);  // "0.11", "1.0", "2.5", "4.5"

// Where a v14 Produce answer carries ProducerStateBatchesToRetain (KIP-1269):
// the seed design's PartitionProduceResponse tag 1, the revised
// TopicProduceResponse tag (kTopicProducerStateBatchesToRetainTag,
// provisional), or both.
enum class RetainPlacement : std::uint8_t { kPartition, kTopic, kBoth };

std::string_view to_string(RetainPlacement placement);
std::optional<RetainPlacement> parse_retain_placement(std::string_view text);  // "partition", "topic", "both"

// What InitProducerId does with a v3+ request naming a known id and epoch.
enum class InitProducerIdMode : std::uint8_t {
  // KIP-360 as written: the same id comes back with the epoch bumped.
  kBumpEpoch,
  // What TransactionCoordinator.handleInitProducerId does for an idempotent
  // (non-transactional) producer: always a fresh id at epoch 0.
  kAlwaysNewId,
};

// How an injected "append, then drop the response" fault ends.
enum class DropMode : std::uint8_t {
  // The connection's return path goes dead: neither this response nor any
  // later one on it is written (requests still arrive and are appended), and
  // the client learns only from its request timeout. Kafka answers a
  // connection's requests in order, so a lost response can never be followed
  // by a later one; a client that saw that would advance past the lost batch
  // and retry it outside the dedup window.
  kSilent,
  // The connection is closed where the response would have gone: a network
  // cut after the append. Clients fail every in-flight request at once.
  kCloseConnection,
};

struct TestClusterOptions {
  int brokers = 1;
  std::vector<TopicSpec> topics;
  // The last K brokers behave like pre-KIP-1269 brokers: Produce up to v13 and
  // a fixed window of 5 whatever the topic says.
  int legacy_brokers = 0;
  std::uint32_t rtt_ms = 0;
  // Seeds topic ids and the fault dice; nullopt picks one (and logs it).
  std::optional<std::uint64_t> seed;
  NoStateRule no_state_rule = NoStateRule::kKafka2_5;
  RetainPlacement retain_placement = RetainPlacement::kPartition;
  InitProducerIdMode init_producer_id_mode = InitProducerIdMode::kBumpEpoch;
  std::string host = "127.0.0.1";
  std::size_t max_request_bytes = 100 * 1024 * 1024;
  // Cap on how long an empty Fetch is parked (the client's max_wait_ms is
  // honoured up to this), so consumers long-poll instead of spinning.
  std::uint32_t max_fetch_wait_ms = 1000;
  // Per-partition bound on stored batch bytes: past it the oldest payloads are
  // released and the log start advances (PartitionLog). 0 keeps everything,
  // which tests that read the whole log back rely on.
  std::size_t retain_log_bytes = 0;
};

// Checks counts, names and RETAIN >= 5; the message says what is wrong.
std::expected<void, std::string> validate(const TestClusterOptions& options);

// The environment a suite runs the test cluster under (docs/design/INTERFACES.md,
// Test cluster), so one suite runs against several broker generations:
//   PP_TEST_FIRST_SEQUENCE_RULE=1          no_state_rule 4.5 (KAFKA-15591)
//   PP_TEST_RETAIN_PLACEMENT=partition|topic|both
// Applied by the test-cluster binary and by the in-process harnesses that
// call it; an unset variable leaves `options` as they are. An unparsable
// value is an error, so a typo cannot pass as the default.
std::expected<void, std::string> apply_test_environment(TestClusterOptions& options);

}  // namespace pp::test_broker
