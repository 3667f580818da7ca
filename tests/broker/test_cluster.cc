#include "tests/broker/test_cluster.h"

#include <signal.h>
#include <uv.h>

#include <atomic>
#include <chrono>
#include <deque>
#include <future>
#include <mutex>
#include <random>
#include <stdexcept>
#include <thread>

#include "proxy/net/async.h"
#include "tests/broker/broker_server.h"
#include "tests/broker/cluster_state.h"
#include "tests/broker/log.h"

namespace pp::test_broker {

struct TestCluster::Impl {
  TestClusterOptions options;
  std::uint64_t seed = 0;
  uv_loop_t loop{};
  bool loop_initialized = false;
  std::unique_ptr<ClusterState> cluster;
  std::vector<std::unique_ptr<BrokerServer>> servers;  // index = broker id - 1
  net::Async wake;
  std::mutex mutex;
  std::deque<std::function<void()>> tasks;
  std::thread thread;
  std::atomic<bool> running{false};

  void drain_tasks() {
    std::deque<std::function<void()>> batch;
    {
      std::lock_guard lock(mutex);
      batch.swap(tasks);
    }
    for (auto& task : batch) task();
  }

  // Runs `fn` on the loop thread and returns its result. Inline when already
  // there, or when the loop isn't running (the state is then ours alone).
  template <class F>
  auto call(F&& fn) -> std::invoke_result_t<F&> {
    using R = std::invoke_result_t<F&>;
    if (!cluster) throw std::logic_error("TestCluster: call start() first");
    if (!running.load() || std::this_thread::get_id() == thread.get_id()) return fn();
    std::packaged_task<R()> task(std::forward<F>(fn));
    auto result = task.get_future();
    {
      std::lock_guard lock(mutex);
      tasks.emplace_back([&task] { task(); });
    }
    wake.send();
    return result.get();
  }

  BrokerServer* server(BrokerId id) {
    if (id < 1 || id > static_cast<BrokerId>(servers.size())) return nullptr;
    return servers[static_cast<std::size_t>(id - 1)].get();
  }

  Partition* partition(std::string_view topic, std::int32_t index) { return cluster->partition(topic, index); }
};

namespace {

std::string no_partition(std::string_view topic, std::int32_t partition) {
  return "unknown partition " + std::string(topic) + "-" + std::to_string(partition);
}

}  // namespace

TestCluster::TestCluster(TestClusterOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
}

TestCluster::~TestCluster() {
  stop();
}

void TestCluster::start() {
  Impl& m = *impl_;
  if (m.running) return;
  if (auto v = validate(m.options); !v) throw std::runtime_error("test cluster: " + v.error());
  // A client that disconnects while a response is being written must not
  // kill the process (libuv writes with write(2), which raises SIGPIPE).
  signal(SIGPIPE, SIG_IGN);
  m.seed = m.options.seed ? *m.options.seed : std::random_device{}();
  if (!m.options.seed) log().info("seed {} (pass it back to repeat this run)", m.seed);
  m.cluster = std::make_unique<ClusterState>(m.options, m.seed);
  uv_loop_init(&m.loop);
  m.loop_initialized = true;
  for (const auto& b : m.cluster->brokers()) {
    auto server = std::make_unique<BrokerServer>(&m.loop, *m.cluster, b.id);
    if (auto st = server->start(); !st) {
      m.servers.clear();
      uv_run(&m.loop, UV_RUN_DEFAULT);
      uv_loop_close(&m.loop);
      m.loop_initialized = false;
      throw std::runtime_error("test cluster: broker " + std::to_string(b.id) + ": " + st.error());
    }
    m.servers.push_back(std::move(server));
  }
  m.wake = net::Async(&m.loop, [&m] { m.drain_tasks(); });
  m.running = true;
  m.thread = std::thread([&m] {
    uv_run(&m.loop, UV_RUN_DEFAULT);  // until uv_stop from stop()
    // Tear down on the loop thread, then let libuv run the close callbacks.
    m.drain_tasks();
    m.servers.clear();
    m.wake = net::Async();
    uv_run(&m.loop, UV_RUN_DEFAULT);
  });
  log().info("started: {} broker(s) at {}", m.cluster->brokers().size(), bootstrap());
}

void TestCluster::stop() {
  Impl& m = *impl_;
  if (!m.running) return;
  m.call([&m] { uv_stop(&m.loop); });
  m.thread.join();
  m.running = false;
  if (m.loop_initialized && uv_loop_close(&m.loop) != 0) log().warn("a libuv handle was left open");
  m.loop_initialized = false;
}

bool TestCluster::running() const {
  return impl_->running;
}

std::string TestCluster::bootstrap() const {
  return impl_->call([this] {
    std::string out;
    for (const auto& b : impl_->cluster->brokers()) {
      if (!out.empty()) out += ",";
      out += b.host + ":" + std::to_string(b.port);
    }
    return out;
  });
}

std::uint16_t TestCluster::port(BrokerId broker) const {
  return impl_->call([&] {
    const BrokerInfo* b = impl_->cluster->broker(broker);
    return b ? b->port : std::uint16_t{0};
  });
}

int TestCluster::broker_count() const {
  return impl_->options.brokers;
}
std::uint64_t TestCluster::seed() const {
  return impl_->seed;
}

Status TestCluster::create_topic(const TopicSpec& spec) {
  return impl_->call([&] { return impl_->cluster->create_topic(spec); });
}

Status TestCluster::delete_topic(std::string_view topic) {
  return impl_->call([&] { return impl_->cluster->delete_topic(topic); });
}

Status TestCluster::create_partitions(std::string_view topic, int total) {
  return impl_->call([&] { return impl_->cluster->create_partitions(topic, total); });
}

Status TestCluster::move_leader(std::string_view topic, std::int32_t partition, BrokerId to,
                                std::size_t truncate_batches) {
  return impl_->call([&]() -> Status {
    Partition* p = impl_->partition(topic, partition);
    if (!p) return std::unexpected(no_partition(topic, partition));
    return impl_->cluster->move_leader(*p, to, truncate_batches);
  });
}

void TestCluster::flip_leaders() {
  impl_->call([&] { impl_->cluster->flip_leaders(); });
}

Status TestCluster::broker_down(BrokerId broker) {
  return impl_->call([&]() -> Status {
    BrokerServer* s = impl_->server(broker);
    if (!s) return std::unexpected("no broker " + std::to_string(broker));
    s->stop();
    return impl_->cluster->set_broker_up(broker, false);
  });
}

Status TestCluster::broker_up(BrokerId broker) {
  // The old listener's close completes on a later loop iteration; until then
  // the port may still be taken, so retry briefly.
  Status st;
  for (int attempt = 0; attempt < 100; ++attempt) {
    st = impl_->call([&]() -> Status {
      BrokerServer* s = impl_->server(broker);
      if (!s) return std::unexpected("no broker " + std::to_string(broker));
      if (auto started = s->start(); !started) return started;
      return impl_->cluster->set_broker_up(broker, true);
    });
    if (st || st.error().find("address already in use") == std::string::npos) return st;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return st;
}

void TestCluster::set_rtt_ms(std::uint32_t rtt_ms) {
  impl_->call([&] { impl_->cluster->faults().rtt_ms = rtt_ms; });
}

Status TestCluster::drop_responses(double rate, DropMode mode) {
  if (!(rate >= 0.0 && rate <= 1.0)) return std::unexpected("RATE must be between 0 and 1");
  impl_->call([&] {
    impl_->cluster->faults().drop_rate = rate;
    impl_->cluster->faults().drop_mode = mode;
  });
  return {};
}

Status TestCluster::inject_error(std::string_view topic, std::int32_t partition, ErrorCode error, int count) {
  if (count < 0) return std::unexpected("COUNT must not be negative");
  return impl_->call([&]() -> Status {
    Partition* p = impl_->partition(topic, partition);
    if (!p) return std::unexpected(no_partition(topic, partition));
    p->injected_errors.push_back(InjectedError{error, count});
    return {};
  });
}

Status TestCluster::reject_key(std::string_view topic, std::int32_t partition, std::string key, ErrorCode error) {
  return impl_->call([&]() -> Status {
    Partition* p = impl_->partition(topic, partition);
    if (!p) return std::unexpected(no_partition(topic, partition));
    if (error == ErrorCode::kNone) {
      p->rejected_keys.erase(key);
    } else {
      p->rejected_keys[key] = error;
    }
    return {};
  });
}

std::int64_t TestCluster::rejected_batches(std::string_view topic, std::int32_t partition) const {
  return impl_->call([&]() -> std::int64_t {
    const Partition* p = impl_->partition(topic, partition);
    return p ? p->rejected_batches : -1;
  });
}

Status TestCluster::disconnect_next_produce(BrokerId broker, int count, bool after_append) {
  if (count < 0) return std::unexpected("COUNT must not be negative");
  return impl_->call([&]() -> Status {
    if (!impl_->server(broker)) return std::unexpected("no broker " + std::to_string(broker));
    impl_->cluster->faults().disconnects[broker] = FaultSettings::Disconnects{count, after_append};
    return {};
  });
}

Status TestCluster::close_connections(BrokerId broker) {
  return impl_->call([&]() -> Status {
    BrokerServer* s = impl_->server(broker);
    if (!s) return std::unexpected("no broker " + std::to_string(broker));
    s->close_connections();
    return {};
  });
}

ClusterStats TestCluster::stats() const {
  return impl_->call([&] { return collect_stats(*impl_->cluster); });
}

std::vector<AppendedRecord> TestCluster::records(std::string_view topic, std::int32_t partition) const {
  return impl_->call([&] {
    Partition* p = impl_->partition(topic, partition);
    return p ? p->log.records() : std::vector<AppendedRecord>{};
  });
}

std::vector<AppendedBatch> TestCluster::batches(std::string_view topic, std::int32_t partition) const {
  return impl_->call([&] {
    Partition* p = impl_->partition(topic, partition);
    return p ? p->log.batches() : std::vector<AppendedBatch>{};
  });
}

std::optional<PartitionInfo> TestCluster::partition_info(std::string_view topic, std::int32_t partition) const {
  return impl_->call([&]() -> std::optional<PartitionInfo> {
    Partition* p = impl_->partition(topic, partition);
    if (!p) return std::nullopt;
    return PartitionInfo{p->topic_id, p->leader, p->leader_epoch, impl_->cluster->effective_retain(*p),
                         p->log.log_end_offset()};
  });
}

std::size_t TestCluster::connection_count(BrokerId broker) const {
  return impl_->call([&] {
    BrokerServer* s = impl_->server(broker);
    return s ? s->connection_count() : std::size_t{0};
  });
}

void TestCluster::with_state(const std::function<void(ClusterState&)>& fn) {
  impl_->call([&] { fn(*impl_->cluster); });
}

}  // namespace pp::test_broker
