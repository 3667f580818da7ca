// The stdin control language of test-cluster (docs/design/INTERFACES.md, Test cluster):
// one command per line, answered "ok", "error: ...", or for `stats` one line
// of JSON. Beyond docs/design/INTERFACES.md (optional, compatible extensions):
//   leader TOPIC PARTITION BROKER [truncate N]   drop N tail batches on the move
//   leader TOPIC PARTITION -1                    no leader until moved (LEADER_NOT_AVAILABLE)
//   drop-responses RATE [silent|close]           close the connection instead
//   disconnect-produce BROKER COUNT before|after cut the next Produce requests
//   close-connections BROKER                     close every client connection now
//   reject-key TOPIC PARTITION KEY ERROR_NAME    refuse batches holding that key, no record_errors
//   create-topic NAME:PARTITIONS[:RETAIN]        CreateTopics (a new topic id)
//   delete-topic NAME                            DeleteTopics
//   create-partitions NAME TOTAL                 CreatePartitions: grow to TOTAL partitions
#include <charconv>
#include <sstream>
#include <vector>

#include "tests/broker/test_cluster.h"

namespace pp::test_broker {

namespace {

std::vector<std::string> split_words(std::string_view line) {
  std::vector<std::string> words;
  std::istringstream in{std::string(line)};
  std::string w;
  while (in >> w) words.push_back(w);
  return words;
}

template <class T>
std::optional<T> parse_number(const std::string& s) {
  T v{};
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

std::string reply(const Status& st) {
  return st ? "ok" : "error: " + st.error();
}

std::string usage(std::string_view form) {
  return "error: usage: " + std::string(form);
}

}  // namespace

std::string TestCluster::execute(std::string_view command_line) {
  const auto w = split_words(command_line);
  if (w.empty()) return "error: empty command";
  const std::string& cmd = w[0];

  if (cmd == "stats") {
    if (w.size() != 1) return usage("stats");
    return to_json(stats());
  }
  if (cmd == "leader") {
    constexpr std::string_view kForm = "leader TOPIC PARTITION BROKER [truncate N]";
    if (w.size() != 4 && w.size() != 6) return usage(kForm);
    auto partition = parse_number<std::int32_t>(w[2]);
    auto broker = parse_number<BrokerId>(w[3]);
    std::optional<std::size_t> truncate = 0;
    if (w.size() == 6) {
      if (w[4] != "truncate") return usage(kForm);
      truncate = parse_number<std::size_t>(w[5]);
    }
    if (!partition || !broker || !truncate) return usage(kForm);
    return reply(move_leader(w[1], *partition, *broker, *truncate));
  }
  if (cmd == "flip-leaders") {
    if (w.size() != 1) return usage("flip-leaders");
    flip_leaders();
    return "ok";
  }
  if (cmd == "down" || cmd == "up") {
    const std::string form = cmd + " BROKER";
    if (w.size() != 2) return usage(form);
    auto broker = parse_number<BrokerId>(w[1]);
    if (!broker) return usage(form);
    return reply(cmd == "down" ? broker_down(*broker) : broker_up(*broker));
  }
  if (cmd == "rtt") {
    if (w.size() != 2) return usage("rtt MS");
    auto ms = parse_number<std::uint32_t>(w[1]);
    if (!ms) return usage("rtt MS");
    set_rtt_ms(*ms);
    return "ok";
  }
  if (cmd == "drop-responses") {
    constexpr std::string_view kForm = "drop-responses RATE [silent|close]";
    if (w.size() != 2 && w.size() != 3) return usage(kForm);
    double rate = 0;
    try {
      std::size_t used = 0;
      rate = std::stod(w[1], &used);
      if (used != w[1].size()) return usage(kForm);
    } catch (const std::exception&) {
      return usage(kForm);
    }
    DropMode mode = DropMode::kSilent;
    if (w.size() == 3) {
      if (w[2] == "close") {
        mode = DropMode::kCloseConnection;
      } else if (w[2] != "silent") {
        return usage(kForm);
      }
    }
    return reply(drop_responses(rate, mode));
  }
  if (cmd == "error") {
    constexpr std::string_view kForm = "error TOPIC PARTITION ERROR_NAME COUNT";
    if (w.size() != 5) return usage(kForm);
    auto partition = parse_number<std::int32_t>(w[2]);
    auto count = parse_number<int>(w[4]);
    if (!partition || !count) return usage(kForm);
    auto code = error_from_name(w[3]);
    if (!code) return "error: unknown Kafka error name '" + w[3] + "'";
    return reply(inject_error(w[1], *partition, *code, *count));
  }
  if (cmd == "reject-key") {
    constexpr std::string_view kForm = "reject-key TOPIC PARTITION KEY ERROR_NAME";
    if (w.size() != 5) return usage(kForm);
    auto partition = parse_number<std::int32_t>(w[2]);
    if (!partition) return usage(kForm);
    auto code = error_from_name(w[4]);
    if (!code) return "error: unknown Kafka error name '" + w[4] + "'";
    return reply(reject_key(w[1], *partition, w[3], *code));
  }
  if (cmd == "disconnect-produce") {
    constexpr std::string_view kForm = "disconnect-produce BROKER COUNT before|after";
    if (w.size() != 4 || (w[3] != "before" && w[3] != "after")) return usage(kForm);
    auto broker = parse_number<BrokerId>(w[1]);
    auto count = parse_number<int>(w[2]);
    if (!broker || !count) return usage(kForm);
    return reply(disconnect_next_produce(*broker, *count, w[3] == "after"));
  }
  if (cmd == "create-topic") {
    if (w.size() != 2) return usage("create-topic NAME:PARTITIONS[:RETAIN]");
    auto spec = parse_topic_spec(w[1]);
    if (!spec) return "error: " + spec.error();
    return reply(create_topic(*spec));
  }
  if (cmd == "delete-topic") {
    if (w.size() != 2) return usage("delete-topic NAME");
    return reply(delete_topic(w[1]));
  }
  if (cmd == "create-partitions") {
    if (w.size() != 3) return usage("create-partitions NAME TOTAL");
    auto total = parse_number<int>(w[2]);
    if (!total) return usage("create-partitions NAME TOTAL");
    return reply(create_partitions(w[1], *total));
  }
  if (cmd == "close-connections") {
    if (w.size() != 2) return usage("close-connections BROKER");
    auto broker = parse_number<BrokerId>(w[1]);
    if (!broker) return usage("close-connections BROKER");
    return reply(close_connections(*broker));
  }
  return "error: unknown command '" + cmd + "'";
}

}  // namespace pp::test_broker
