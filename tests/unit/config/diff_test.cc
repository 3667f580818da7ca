// The SIGHUP diff: which keys changed, and which of them apply live.
#include "config/diff.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace pp::config::test {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

Settings base() {
  Settings s;
  s.upstream.bootstrap_servers = {"kafka-1:9092"};
  return s;
}

TEST(DiffSettings, NoChangeNoDiff) {
  EXPECT_THAT(diff_settings(base(), base()), IsEmpty());
  EXPECT_FALSE(needs_restart({}));
}

TEST(DiffSettings, LiveAndRestartKeysInSchemaOrder) {
  Settings after = base();
  after.log.level = LogLevel::kDebug;
  after.producer.linger_ms = 20;
  after.producer.compression = Compression::kZstd;
  after.upstream.bootstrap_servers = {"kafka-1:9092", "kafka-2:9092"};
  after.listener.address = "0.0.0.0:9092";
  const auto changes = diff_settings(base(), after);
  EXPECT_THAT(changes, ElementsAre(KeyChange{"listener.address", "\"127.0.0.1:9092\"", "\"0.0.0.0:9092\"", false},
                                   KeyChange{"upstream.bootstrap_servers", "[\"kafka-1:9092\"]",
                                             "[\"kafka-1:9092\", \"kafka-2:9092\"]", false},
                                   KeyChange{"producer.linger_ms", "5", "20", true},
                                   KeyChange{"producer.compression", "\"none\"", "\"zstd\"", true},
                                   KeyChange{"log.level", "\"info\"", "\"debug\"", true}));
  EXPECT_TRUE(needs_restart(changes));
}

TEST(DiffSettings, TheLiveSetIsWhatTheIssueNames) {
  // log level, timeouts, linger, batch size, compression: nothing else.
  Settings after = base();
  after.log.level = LogLevel::kWarn;
  after.listener.idle_timeout_ms += 1;
  after.upstream.request_timeout_ms += 1;
  after.producer.delivery_timeout_ms += 1;
  after.shutdown.drain_timeout_ms += 1;
  after.producer.linger_ms += 1;
  after.producer.batch_bytes += 1;
  after.producer.compression = Compression::kGzip;
  const auto changes = diff_settings(base(), after);
  EXPECT_EQ(changes.size(), 8u);
  EXPECT_FALSE(needs_restart(changes));

  Settings restart = base();
  restart.producer.max_partition_window = 100;
  restart.producer.buffer_memory_bytes *= 2;
  restart.metrics.partition_labels = false;
  restart.log.format = LogFormat::kJson;
  for (const auto& c : diff_settings(base(), restart)) EXPECT_FALSE(c.live) << c.key;
}

TEST(WithLiveChanges, TakesLiveKeysAndKeepsTheRest) {
  Settings reloaded = base();
  reloaded.producer.linger_ms = 50;
  reloaded.log.level = LogLevel::kError;
  reloaded.producer.max_partition_window = 7;
  reloaded.listener.address = "0.0.0.0:1";
  const Settings running = with_live_changes(base(), reloaded);
  EXPECT_EQ(running.producer.linger_ms, 50);
  EXPECT_EQ(running.log.level, LogLevel::kError);
  EXPECT_EQ(running.producer.max_partition_window, 200);
  EXPECT_EQ(running.listener.address, "127.0.0.1:9092");
  // What is left to differ is exactly what needs a restart.
  for (const auto& c : diff_settings(running, reloaded)) EXPECT_FALSE(c.live) << c.key;
}

}  // namespace
}  // namespace pp::config::test
