// End-to-end harness: the real daemon wiring (ProxyRuntime) on its own loop
// thread, an upstream (the KIP-1269 test cluster or librdkafka's mock
// cluster, both in-process on 127.0.0.1), real clients run as processes
// (kcat, kafka-python) and kcat consuming the upstream log back. Every
// process runs under timeout(1) and every wait has a deadline.
#pragma once

#include <gtest/gtest.h>
#include <spdlog/sinks/base_sink.h>
#include <sys/wait.h>
#include <unistd.h>
#include <uv.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <mutex>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "daemon/mock_cluster.h"
#include "daemon/proxy_runtime.h"
#include "proxy/frontend/log.h"
#include "proxy/net/async.h"
#include "tests/broker/test_cluster.h"

namespace pp::e2e {

// A field of the JSON lines the client scripts print, without a JSON library.
inline std::string json_field(const std::string& line, const std::string& name) {
  const std::string tag = "\"" + name + "\": ";
  std::size_t at = line.find(tag);
  if (at == std::string::npos) return {};
  at += tag.size();
  if (line[at] == '"') {
    const std::size_t end = line.find('"', at + 1);
    return line.substr(at + 1, end - at - 1);
  }
  const std::size_t end = line.find_first_of(",}", at);
  return line.substr(at, end - at);
}

inline std::int64_t wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

inline std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += (c == '\'') ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// Runs argv under timeout(1) with `input` on stdin; collects stdout and stderr.
inline CommandResult run(const std::vector<std::string>& argv, int timeout_seconds, const std::string& input = "") {
  char in_path[] = "/tmp/pp_e2e_in_XXXXXX";
  char err_path[] = "/tmp/pp_e2e_err_XXXXXX";
  const int in_fd = mkstemp(in_path);
  const int err_fd = mkstemp(err_path);
  if (in_fd >= 0) {
    std::size_t off = 0;
    while (off < input.size()) {
      const ssize_t n = ::write(in_fd, input.data() + off, input.size() - off);
      if (n <= 0) break;
      off += static_cast<std::size_t>(n);
    }
    ::close(in_fd);
  }
  if (err_fd >= 0) ::close(err_fd);
  std::string cmd = "timeout -k 2 " + std::to_string(timeout_seconds);
  for (const auto& a : argv) cmd += " " + shell_quote(a);
  cmd += std::string(" <") + in_path + " 2>" + err_path;
  CommandResult result;
  if (FILE* pipe = popen(cmd.c_str(), "r")) {
    char buf[65536];
    std::size_t n;
    while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) result.out.append(buf, n);
    const int status = pclose(pipe);
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  std::ifstream err(err_path);
  std::stringstream ss;
  ss << err.rdbuf();
  result.err = ss.str();
  ::unlink(in_path);
  ::unlink(err_path);
  return result;
}

// Counts front-end log lines that contain a phrase (thread-safe: the loop
// thread logs, the test thread reads).
class PhraseCounter final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  explicit PhraseCounter(std::string phrase) : phrase_(std::move(phrase)) {}
  int count() const { return count_.load(); }

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    if (std::string_view(msg.payload.data(), msg.payload.size()).find(phrase_) != std::string_view::npos) ++count_;
  }
  void flush_() override {}

 private:
  std::string phrase_;
  std::atomic<int> count_{0};
};

// The upstream a test produces to through the proxy.
class Upstream {
 public:
  virtual ~Upstream() = default;
  virtual std::string bootstrap() const = 0;
  virtual void create_topic(const std::string& name, int partitions) = 0;
  virtual std::string name() const = 0;
};

class TestClusterUpstream final : public Upstream {
 public:
  TestClusterUpstream() : cluster_(options()) { cluster_.start(); }
  std::string bootstrap() const override { return cluster_.bootstrap(); }
  void create_topic(const std::string& name, int partitions) override {
    auto ok = cluster_.create_topic(test_broker::TopicSpec{name, partitions, 20});
    ASSERT_TRUE(ok) << ok.error();
  }
  std::string name() const override { return "test_cluster"; }

 private:
  // Three brokers, under the environment's broker generation and window
  // placement (PP_TEST_FIRST_SEQUENCE_RULE, PP_TEST_RETAIN_PLACEMENT).
  static test_broker::TestClusterOptions options() {
    test_broker::TestClusterOptions o{.brokers = 3, .topics = {}};
    if (auto env = test_broker::apply_test_environment(o); !env) throw std::runtime_error(env.error());
    return o;
  }
  test_broker::TestCluster cluster_;
};

class MockUpstream final : public Upstream {
 public:
  MockUpstream() : mock_(3) {}
  std::string bootstrap() const override { return mock_.bootstraps(); }
  void create_topic(const std::string& name, int partitions) override {
    ASSERT_TRUE(mock_.create_topic(name, partitions));
  }
  std::string name() const override { return "librdkafka_mock"; }

 private:
  MockCluster mock_;
};

// ProxyRuntime on its own loop thread, as the daemon runs it.
class ProxyUnderTest {
 public:
  explicit ProxyUnderTest(config::Settings settings) {
    thread_ = std::thread([this, settings = std::move(settings)]() mutable { run(std::move(settings)); });
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!ready_ && !failed_ && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  ~ProxyUnderTest() { stop(); }

  bool ready() const { return ready_; }
  std::string error() const { return error_; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_.load()); }

  // Drains (every accepted record delivered, or the deadline) and joins;
  // returns the runtime's exit code.
  int stop() {
    if (thread_.joinable()) {
      {
        std::lock_guard<std::mutex> lock(stop_mutex_);
        if (stop_) stop_->send();
      }
      thread_.join();
    }
    return exit_code_;
  }

 private:
  void run(config::Settings settings) {
    uv_loop_t loop;
    uv_loop_init(&loop);
    {
      auto runtime = std::make_unique<ProxyRuntime>(&loop, std::move(settings));
      bool stopping = false;
      std::unique_lock<std::mutex> lock(stop_mutex_);
      stop_ = std::make_unique<net::Async>(&loop, [&] {
        if (stopping) return;
        stopping = true;
        if (!ready_) {
          exit_code_ = 1;
          uv_stop(&loop);
          return;
        }
        runtime->drain([&](int code) {
          exit_code_ = code;
          uv_stop(&loop);
        });
      });
      lock.unlock();
      auto started = runtime->start(
          [&] {
            port_ = runtime->client_port();
            ready_ = true;
          },
          [&](int code) {
            exit_code_ = code;
            error_ = "start-up failed after start()";
            failed_ = true;
            uv_stop(&loop);
          });
      if (!started) {
        error_ = started.error();
        failed_ = true;
      } else {
        uv_run(&loop, UV_RUN_DEFAULT);
      }
      runtime.reset();
      std::lock_guard<std::mutex> done(stop_mutex_);
      stop_.reset();
    }
    // Let every handle close, then the loop.
    for (int i = 0; i < 1000 && uv_run(&loop, UV_RUN_NOWAIT) != 0; ++i) {
    }
    uv_loop_close(&loop);
  }

  std::thread thread_;
  std::mutex stop_mutex_;  // the test thread sends, the loop thread creates and destroys
  std::unique_ptr<net::Async> stop_;
  std::atomic<bool> ready_{false};
  std::atomic<bool> failed_{false};
  std::atomic<std::uint16_t> port_{0};
  std::string error_;
  int exit_code_ = -1;
};

inline config::Settings proxy_settings(const std::string& bootstrap, std::int64_t buffer_memory_bytes = 67108864) {
  config::Settings s;
  s.listener.address = "127.0.0.1:0";
  s.metrics.address = "127.0.0.1:0";
  std::size_t at = 0;
  while (at <= bootstrap.size()) {
    const std::size_t comma = bootstrap.find(',', at);
    s.upstream.bootstrap_servers.push_back(
        bootstrap.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  s.upstream.request_timeout_ms = 10000;
  s.producer.delivery_timeout_ms = 60000;
  s.producer.buffer_memory_bytes = buffer_memory_bytes;
  s.shutdown.drain_timeout_ms = 20000;
  return s;
}

// One record as kcat reads it back from the upstream log.
struct LoggedRecord {
  std::int32_t partition = 0;
  std::int64_t offset = 0;
  std::int64_t timestamp = 0;
  std::string key;
  std::string value;
  std::string headers;  // kcat's "k=v,k2=v2"
};

// Reads `topic` from the beginning to the end with kcat, straight from the
// upstream (not through the proxy).
inline std::vector<LoggedRecord> consume_upstream(const std::string& bootstrap, const std::string& topic) {
  auto r =
      run({"kcat", "-C", "-b", bootstrap, "-t", topic, "-o", "beginning", "-e", "-q", "-f", "%p\t%o\t%T\t%k\t%s\t%h\n"},
          60);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::vector<LoggedRecord> out;
  std::istringstream lines(r.out);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty()) continue;
    std::vector<std::string> f;
    std::size_t at = 0;
    for (int i = 0; i < 5; ++i) {
      const std::size_t tab = line.find('\t', at);
      f.push_back(line.substr(at, tab - at));
      at = tab == std::string::npos ? line.size() : tab + 1;
    }
    f.push_back(line.substr(std::min(at, line.size())));
    LoggedRecord rec;
    rec.partition = std::stoi(f[0]);
    rec.offset = std::stoll(f[1]);
    rec.timestamp = std::stoll(f[2]);
    rec.key = f[3];
    rec.value = f[4];
    rec.headers = f[5];
    out.push_back(std::move(rec));
  }
  return out;
}

}  // namespace pp::e2e
