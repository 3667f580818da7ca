// Test doubles and a tiny Kafka client for the front end's socket tests. All
// on the test's thread: the loop is stepped (UV_RUN_NOWAIT) while the client
// waits, so the fakes are only ever touched by one thread, as in the daemon.
#pragma once

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "proxy/frontend/frontend.h"
#include "proxy/frontend/produce_conversion.h"
#include "proxy/net/timer.h"
#include "proxy/pipeline/producer_batch.h"
#include "proxy/protocol/codec.h"
#include "proxy/protocol/messages/all.h"

namespace pp::test {

// Records every submitted run; the test completes them in any order.
class FakeSink : public RecordSink {
 public:
  struct Submission {
    std::string topic;
    std::int32_t partition = 0;
    RecordRun run;
    RunCompletion done;
    bool completed = false;
    MemoryCharge charge;
    bool sent = false;  // set by the test: withdraw() finds it in flight
  };

  RunTicket submit(const std::string& topic, std::int32_t partition, RecordRun run, RunCompletion done) override {
    MemoryCharge charge = memory_.charge(MemoryUse::kDecodedRecords, run.size_bytes);
    submissions.push_back(Submission{topic, partition, std::move(run), std::move(done), false, std::move(charge)});
    // A tracker of its own per submission, only to be told apart.
    auto ticket = std::make_shared<RunTracker>();
    submission_of[ticket.get()] = submissions.size() - 1;
    tickets.push_back(ticket);
    return ticket;
  }
  // Withdraws a submission the test has not completed nor marked as sent:
  // it completes with NOT_ENOUGH_REPLICAS inside the call, as the pipeline's does.
  WithdrawOutcome withdraw(const RunTicket& ticket) override {
    const auto tracker = ticket.lock();
    if (!tracker) return WithdrawOutcome::kEnded;
    const std::size_t index = submission_of.at(tracker.get());
    Submission& s = submissions.at(index);
    if (s.completed) return WithdrawOutcome::kEnded;
    if (s.sent) return WithdrawOutcome::kInFlight;
    ++withdrawals;
    complete(index, -1, ErrorCode::kNotEnoughReplicas, true);
    return WithdrawOutcome::kWithdrawn;
  }
  MemoryBudget& memory_budget() override { return memory_; }

  // Completes submission `i` with a base offset (or an error).
  void complete(std::size_t i, std::int64_t base_offset, ErrorCode error = ErrorCode::kNone, bool withdrawn = false) {
    Submission& s = submissions.at(i);
    ASSERT_FALSE(s.completed);
    s.completed = true;
    RunResult r;
    r.error = error;
    r.base_offset = error == ErrorCode::kNone ? base_offset : -1;
    r.log_append_time_ms = -1;
    r.log_start_offset = 0;
    if (error != ErrorCode::kNone) r.error_message = "fake failure";
    r.withdrawn = withdrawn;
    auto done = std::move(s.done);
    s.run.records.clear();
    s.run.storage.reset();
    s.charge.reset();
    if (done) done(r);
  }
  // 0: never over.
  void set_budget(std::size_t bytes) { memory_.set_limit(bytes == 0 ? SIZE_MAX : bytes); }
  // Everything charged: the runs' records and the front end's frames and responses.
  std::size_t buffered() const { return memory_.used(); }
  std::size_t buffered(MemoryUse use) const { return memory_.used(use); }
  bool has_listener() const { return memory_.has_available_listener(); }

  std::deque<Submission> submissions;
  std::vector<std::shared_ptr<RunTracker>> tickets;
  std::map<const RunTracker*, std::size_t> submission_of;
  std::size_t withdrawals = 0;

 private:
  MemoryBudget memory_{SIZE_MAX};
};

// Answers describe() on a later loop turn from a fixed table.
class FakeTopicDirectory : public TopicDirectory {
 public:
  explicit FakeTopicDirectory(uv_loop_t* loop) : timer_(loop) {}

  void describe(std::optional<std::vector<std::string>> topics, bool allow_auto_topic_creation,
                std::function<void(std::vector<TopicDescription>)> done) override {
    ++calls;
    last_auto_create = allow_auto_topic_creation;
    last_topics = topics;
    std::vector<TopicDescription> out;
    if (!topics) {
      for (auto& [name, d] : table) out.push_back(d);
    } else {
      for (const auto& name : *topics) {
        auto it = table.find(name);
        if (it != table.end()) {
          out.push_back(it->second);
        } else {
          out.push_back(TopicDescription{name, ErrorCode::kUnknownTopicOrPartition, {}, false, 0});
        }
      }
    }
    queue_.push_back([done, out] { done(out); });
    if (!timer_.active()) {
      timer_.start(delay_ms, 0, [this] {
        auto q = std::move(queue_);
        queue_.clear();
        for (auto& f : q) f();
      });
    }
  }

  // The name rule is the real one; `refused` stands in for the topic cap.
  TopicAdmission admit_topic(std::string_view name) override {
    if (!is_legal_topic_name(name)) return {ErrorCode::kInvalidTopicException, "not a legal name"};
    if (auto it = refused.find(std::string(name)); it != refused.end()) return {it->second, "refused by the test"};
    return {};
  }

  // The first topic whose id is `id` (zero is no topic's id).
  std::optional<std::string> topic_name(const Uuid& id) const override {
    if (id.is_zero()) return std::nullopt;
    for (const auto& [name, d] : table) {
      if (d.topic_id == id) return name;
    }
    return std::nullopt;
  }
  bool offers_topic_ids() const override { return topic_ids; }

  void add(const std::string& name, std::int32_t partitions, Uuid id = {}) {
    table[name] = TopicDescription{name, ErrorCode::kNone, id, false, partitions};
  }

  std::map<std::string, TopicDescription> table;
  std::map<std::string, ErrorCode> refused;
  bool topic_ids = true;  // offers_topic_ids(): an upstream that serves Produce v13
  int calls = 0;
  bool last_auto_create = false;
  std::optional<std::vector<std::string>> last_topics;
  std::uint64_t delay_ms = 0;

 private:
  net::Timer timer_;
  std::vector<std::function<void()>> queue_;
};

// Runs the loop in small steps until `done()` or the deadline.
inline bool run_until(uv_loop_t* loop, const std::function<bool()>& done, int timeout_ms = 3000) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    uv_run(loop, UV_RUN_NOWAIT);
    if (done()) break;
    ::poll(nullptr, 0, 1);
  }
  return true;
}

inline void run_for(uv_loop_t* loop, int ms) {
  run_until(
      loop, [] { return false; }, ms);
}

// A blocking-free Kafka client over a plain socket.
class TestClient {
 public:
  // `source`: the local IPv4 address to connect from (host order); any of
  // 127.0.0.0/8 works on loopback, so tests can be several peers.
  TestClient(uv_loop_t* loop, std::uint16_t port, std::uint32_t source = INADDR_LOOPBACK) : loop_(loop) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in from{};
    from.sin_family = AF_INET;
    from.sin_addr.s_addr = htonl(source);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&from), sizeof from);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  }
  ~TestClient() { close(); }
  TestClient(const TestClient&) = delete;
  TestClient& operator=(const TestClient&) = delete;

  bool connected() const { return connected_; }
  // A small receive buffer makes a client that does not read fill up fast.
  void set_receive_buffer(int bytes) { ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof bytes); }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

  // Writes all of `bytes`, stepping the loop while the socket is full.
  bool write_raw(ByteView bytes) {
    std::size_t off = 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (off < bytes.size()) {
      const ssize_t n = ::send(fd_, bytes.data() + off, bytes.size() - off, MSG_DONTWAIT | MSG_NOSIGNAL);
      if (n > 0) {
        off += static_cast<std::size_t>(n);
        continue;
      }
      if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) return false;
      if (std::chrono::steady_clock::now() > deadline) return false;
      uv_run(loop_, UV_RUN_NOWAIT);
      ::poll(nullptr, 0, 1);
    }
    return true;
  }

  template <Message M>
  bool send(ApiKey key, std::int16_t version, std::int32_t correlation_id, const M& body,
            std::optional<std::string> client_id = "test-client") {
    RequestHeader h;
    h.api_key = key;
    h.api_version = version;
    h.correlation_id = correlation_id;
    h.client_id = std::move(client_id);
    return write_raw(encode_request_frame(h, body));
  }

  // The next response frame (without its size prefix), or nullopt on timeout or EOF.
  std::optional<Bytes> read_frame(int timeout_ms = 3000) {
    std::optional<Bytes> out;
    run_until(
        loop_,
        [&] {
          pump();
          out = take_frame();
          return out.has_value() || eof_;
        },
        timeout_ms);
    return out;
  }

  // True once the server closed the connection (EOF or reset).
  bool wait_closed(int timeout_ms = 3000) {
    return run_until(
        loop_,
        [&] {
          pump();
          return eof_;
        },
        timeout_ms);
  }
  bool eof() const { return eof_; }
  std::size_t buffered() const { return in_.size(); }

 private:
  void pump() {
    std::uint8_t buf[65536];
    while (fd_ >= 0 && !eof_) {
      const ssize_t n = ::recv(fd_, buf, sizeof buf, MSG_DONTWAIT);
      if (n > 0) {
        in_.insert(in_.end(), buf, buf + n);
      } else if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) {
        eof_ = true;
      } else {
        break;
      }
    }
  }
  std::optional<Bytes> take_frame() {
    if (in_.size() < 4) return std::nullopt;
    const std::uint32_t size = static_cast<std::uint32_t>(in_[0]) << 24 | static_cast<std::uint32_t>(in_[1]) << 16 |
                               static_cast<std::uint32_t>(in_[2]) << 8 | in_[3];
    if (in_.size() < 4 + size) return std::nullopt;
    Bytes frame(in_.begin() + 4, in_.begin() + 4 + size);
    in_.erase(in_.begin(), in_.begin() + 4 + size);
    return frame;
  }

  uv_loop_t* loop_;
  int fd_ = -1;
  bool connected_ = false;
  bool eof_ = false;
  Bytes in_;
};

// Decodes a response frame (no size prefix) of M at `version`.
template <Message M>
std::optional<M> decode_response(const Bytes& frame, std::int16_t version, std::int32_t* correlation = nullptr) {
  WireReader r(frame);
  auto c = decode_response_header(r, M::kApiKey, version);
  if (!c) return std::nullopt;
  if (correlation) *correlation = *c;
  auto body = decode_body<M>(r, version);
  if (!body || !r.empty()) return std::nullopt;
  return std::move(*body);
}

// A loop, a fake sink and directory, and a started front end on 127.0.0.1:0.
class FrontendFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    uv_loop_init(&loop_);
    directory_ = std::make_unique<FakeTopicDirectory>(&loop_);
    directory_->add("orders", 3);
    directory_->add("events", 1);
  }
  void TearDown() override {
    frontend_.reset();
    directory_.reset();
    // Let every handle close, then the loop.
    for (int i = 0; i < 100 && uv_loop_alive(&loop_); ++i) uv_run(&loop_, UV_RUN_NOWAIT);
    uv_loop_close(&loop_);
  }

  void start(FrontendConfig config = {}) {
    config.listen_address = {"127.0.0.1", 0};
    frontend_ = std::make_unique<Frontend>(&loop_, config, sink_, *directory_);
    auto ok = frontend_->start();
    ASSERT_TRUE(ok) << ok.error();
  }
  std::unique_ptr<TestClient> connect(std::uint32_t source = INADDR_LOOPBACK) {
    auto c = std::make_unique<TestClient>(&loop_, frontend_->port(), source);
    EXPECT_TRUE(c->connected());
    return c;
  }
  bool wait_for_submissions(std::size_t n, int timeout_ms = 3000) {
    return run_until(
        &loop_, [&] { return sink_.submissions.size() >= n; }, timeout_ms);
  }

  uv_loop_t loop_{};
  FakeSink sink_;
  std::unique_ptr<FakeTopicDirectory> directory_;
  std::unique_ptr<Frontend> frontend_;
};

}  // namespace pp::test
