// test-cluster: the KIP-1269 test cluster as a process (docs/design/INTERFACES.md, Test
// cluster). Prints "bootstrap=..." first, then answers control commands read
// from stdin, one reply line each, until stdin closes or SIGTERM/SIGINT.
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <iostream>
#include <string>

#include "tests/broker/log.h"
#include "tests/broker/test_cluster.h"

namespace {

int g_signal_pipe[2] = {-1, -1};

void on_signal(int) {
  const char c = 's';
  [[maybe_unused]] auto n = write(g_signal_pipe[1], &c, 1);
}

// Reads stdin lines and answers each, until EOF or a signal.
void serve_control_commands(pp::test_broker::TestCluster& cluster) {
  std::string pending;
  char buf[4096];
  for (;;) {
    pollfd fds[2] = {{STDIN_FILENO, POLLIN, 0}, {g_signal_pipe[0], POLLIN, 0}};
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[1].revents & POLLIN) {
      pp::test_broker::log().info("signal received, stopping");
      return;
    }
    if (!(fds[0].revents & (POLLIN | POLLHUP | POLLERR))) continue;
    const ssize_t n = read(STDIN_FILENO, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // stdin closed
    pending.append(buf, static_cast<std::size_t>(n));
    for (auto nl = pending.find('\n'); nl != std::string::npos; nl = pending.find('\n')) {
      std::string line = pending.substr(0, nl);
      pending.erase(0, nl + 1);
      if (!line.empty() && line.back() == '\r') line.pop_back();
      std::cout << cluster.execute(line) << std::endl;  // endl: a script waits for each reply
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  using namespace pp::test_broker;
  CLI::App app{"KIP-1269 test cluster: fake Kafka brokers with broker-side idempotence"};
  TestClusterOptions options;
  std::vector<std::string> topics;
  std::uint64_t seed = 0;
  app.add_option("--brokers", options.brokers, "number of brokers (ids 1..N)")->required();
  app.add_option("--topic", topics, "NAME:PARTITIONS[:RETAIN], repeatable (RETAIN >= 5, default 5)");
  app.add_option("--legacy-brokers", options.legacy_brokers,
                 "the last K brokers are pre-KIP-1269 (Produce <= v13, window 5)");
  app.add_option("--rtt-ms", options.rtt_ms, "delay every response by this much");
  app.add_option("--retain-log-bytes", options.retain_log_bytes,
                 "per partition: release the oldest batches' payload past this many bytes (0 = keep all)")
      ->check(CLI::NonNegativeNumber);  // CLI11 would wrap "-1" into a huge size_t
  auto* seed_option = app.add_option("--seed", seed, "seed for topic ids and fault dice");
  bool first_sequence_rule = false;
  app.add_flag("--first-sequence-rule", first_sequence_rule,
               "KAFKA-15591 (Kafka 4.5): a producer without state on a partition that never held a record must "
               "start at sequence 0, else OUT_OF_ORDER_SEQUENCE_NUMBER (also PP_TEST_FIRST_SEQUENCE_RULE=1)");
  std::string placement;
  app.add_option("--retain-placement", placement,
                 "where v14 answers carry ProducerStateBatchesToRetain: partition (default), topic or both "
                 "(also PP_TEST_RETAIN_PLACEMENT)")
      ->check(CLI::IsMember({"partition", "topic", "both"}));
  if (auto env = apply_test_environment(options); !env) {
    std::cerr << "test-cluster: " << env.error() << "\n";
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  if (first_sequence_rule) options.no_state_rule = NoStateRule::kKafka4_5;
  if (!placement.empty()) options.retain_placement = *parse_retain_placement(placement);
  for (const auto& t : topics) {
    auto spec = parse_topic_spec(t);
    if (!spec) {
      std::cerr << "test-cluster: --topic " << t << ": " << spec.error() << "\n";
      return 2;
    }
    options.topics.push_back(*spec);
  }
  if (seed_option->count() > 0) options.seed = seed;
  if (auto v = validate(options); !v) {
    std::cerr << "test-cluster: " << v.error() << "\n";
    return 2;
  }

  log().info("no-state rule {}, window placement {}", to_string(options.no_state_rule),
             to_string(options.retain_placement));
  if (pipe(g_signal_pipe) != 0) return 1;
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);

  TestCluster cluster(options);
  try {
    cluster.start();
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
  std::cout << "bootstrap=" << cluster.bootstrap() << std::endl;
  serve_control_commands(cluster);
  cluster.stop();
  return 0;
}
