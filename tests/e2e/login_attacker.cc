// A bounded, loopback-only attacker for the hostile-load test
// (client_hostile_test.py): opens connections to 127.0.0.1:PORT (TLS or
// plaintext) and performs failed SASL logins at a target rate, each on its
// own connection, with SaslHandshake v1 and SaslAuthenticate v1:
//   - PLAIN with a wrong password (every other one naming the known user,
//     the rest an unknown one);
//   - SCRAM-SHA-256 / SCRAM-SHA-512: client-first, then a client-final with
//     a made-up proof of the right length.
// Each waits for the proxy's (throttled) failure answer, then closes. With
// --abandon-every K, every K-th connection sends its SaslHandshake and then
// closes without a token. One epoll thread; at most --max-concurrent
// connections at once (a start past it is skipped and counted); every phase
// bounded by --timeout-s; starts stop after --seconds, stragglers are given
// --drain-s. Prints one JSON line of counts: what it saw, not what the proxy
// counted (the test reads the proxy's own metric).
//
//   login_attacker --port P [--tls] [--rate 200] [--seconds 20]
//                  [--mechanisms PLAIN,SCRAM-SHA-256] [--user alice]
//                  [--sources N] [--no-resume] [--abandon-every K]
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace {

constexpr std::int16_t kSaslHandshake = 17;
constexpr std::int16_t kSaslAuthenticate = 36;

struct Options {
  int port = 0;
  bool tls = false;
  bool resume = true;
  double rate = 200;
  double seconds = 20;
  double drain_s = 8;
  double timeout_s = 15;
  int max_concurrent = 2000;
  int sources = 0;  // 0: the kernel's choice (127.0.0.1); N: 127.0.1.1 .. 127.0.1.N in turn
  int abandon_every = 0;
  std::vector<std::string> mechanisms{"PLAIN"};
  std::string user = "alice";
};

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr, "login_attacker: %s\n", why);
  std::exit(2);
}

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    if (comma > start) out.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

double bounded(const char* text, double low, double high, const char* name) {
  const double v = std::strtod(text, nullptr);
  if (!(v >= low && v <= high)) usage(name);
  return v;
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const char* next = i + 1 < argc ? argv[i + 1] : nullptr;
    auto value = [&]() -> const char* {
      if (next == nullptr) usage("a value is missing");
      ++i;
      return next;
    };
    if (a == "--port")
      o.port = static_cast<int>(bounded(value(), 1, 65535, "--port 1..65535"));
    else if (a == "--tls")
      o.tls = true;
    else if (a == "--no-resume")
      o.resume = false;
    else if (a == "--rate")
      o.rate = bounded(value(), 0.1, 5000, "--rate 0.1..5000");
    else if (a == "--seconds")
      o.seconds = bounded(value(), 0.1, 600, "--seconds 0.1..600");
    else if (a == "--drain-s")
      o.drain_s = bounded(value(), 0, 60, "--drain-s 0..60");
    else if (a == "--timeout-s")
      o.timeout_s = bounded(value(), 0.1, 60, "--timeout-s 0.1..60");
    else if (a == "--max-concurrent")
      o.max_concurrent = static_cast<int>(bounded(value(), 1, 10000, "--max-concurrent"));
    else if (a == "--sources")
      o.sources = static_cast<int>(bounded(value(), 0, 254, "--sources 0..254"));
    else if (a == "--abandon-every")
      o.abandon_every = static_cast<int>(bounded(value(), 0, 1e6, "--abandon-every"));
    else if (a == "--mechanisms")
      o.mechanisms = split(value());
    else if (a == "--user")
      o.user = value();
    else
      usage(("unknown argument " + a).c_str());
  }
  if (o.port == 0) usage("--port is required");
  for (const auto& m : o.mechanisms) {
    if (m != "PLAIN" && m != "SCRAM-SHA-256" && m != "SCRAM-SHA-512") usage("mechanisms: PLAIN, SCRAM-SHA-256/512");
  }
  if (o.mechanisms.empty()) usage("no mechanism");
  return o;
}

// ---- Kafka framing (request header v1) ----

void put16(std::string& out, std::int16_t v) {
  out.push_back(static_cast<char>((v >> 8) & 0xFF));
  out.push_back(static_cast<char>(v & 0xFF));
}

void put32(std::string& out, std::int32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>((v >> shift) & 0xFF));
}

std::int32_t get32(const std::string& in, std::size_t pos) {
  std::uint32_t v = 0;
  for (std::size_t i = 0; i < 4; ++i) v = (v << 8) | static_cast<std::uint8_t>(in[pos + i]);
  return static_cast<std::int32_t>(v);
}

std::int16_t get16(const std::string& in, std::size_t pos) {
  return static_cast<std::int16_t>((static_cast<std::uint8_t>(in[pos]) << 8) | static_cast<std::uint8_t>(in[pos + 1]));
}

std::string request(std::int16_t api_key, std::int32_t correlation_id, const std::string& body) {
  std::string payload;
  put16(payload, api_key);
  put16(payload, 1);
  put32(payload, correlation_id);
  const std::string client_id = "pp-login-attacker";
  put16(payload, static_cast<std::int16_t>(client_id.size()));
  payload += client_id;
  payload += body;
  std::string out;
  put32(out, static_cast<std::int32_t>(payload.size()));
  return out + payload;
}

std::string handshake_request(const std::string& mechanism) {
  std::string body;
  put16(body, static_cast<std::int16_t>(mechanism.size()));
  return request(kSaslHandshake, 1, body + mechanism);
}

std::string authenticate_request(std::int32_t correlation_id, const std::string& token) {
  std::string body;
  put32(body, static_cast<std::int32_t>(token.size()));
  return request(kSaslAuthenticate, correlation_id, body + token);
}

// SaslAuthenticate v1's answer (after the correlation id): error code and auth bytes.
bool parse_authenticate(const std::string& frame, std::int16_t& error, std::string& auth_bytes) {
  if (frame.size() < 8) return false;
  error = get16(frame, 4);
  std::size_t pos = 6;
  const std::int16_t message = get16(frame, pos);
  pos += 2 + static_cast<std::size_t>(std::max<std::int16_t>(message, 0));
  if (frame.size() < pos + 4) return false;
  const std::int32_t n = get32(frame, pos);
  if (n < 0 || frame.size() < pos + 4 + static_cast<std::size_t>(n)) return false;
  auth_bytes = frame.substr(pos + 4, static_cast<std::size_t>(n));
  return true;
}

std::string random_base64(std::size_t bytes) {
  std::vector<unsigned char> raw(bytes);
  RAND_bytes(raw.data(), static_cast<int>(raw.size()));
  std::string out(4 * ((bytes + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), raw.data(), static_cast<int>(bytes));
  out.resize(static_cast<std::size_t>(n));
  return out;
}

// ---- one connection's login ----

enum class Phase : std::uint8_t { kConnecting, kTls, kHandshake, kFirst, kFinal };

struct Conn {
  std::uint64_t id = 0;
  int fd = -1;
  SSL* ssl = nullptr;
  Phase phase = Phase::kConnecting;
  std::string mechanism;
  std::string user;
  bool abandon = false;
  std::string out;
  std::size_t out_off = 0;
  std::string in;
  double deadline = 0;
  ~Conn() {
    if (ssl != nullptr) SSL_free(ssl);
    if (fd >= 0) ::close(fd);
  }
};

struct Counts {
  std::uint64_t started = 0, skipped_at_cap = 0, connect_failed = 0, tls_failed = 0, tls_resumed = 0,
                failed_answered = 0, succeeded = 0, abandoned = 0, closed_by_peer = 0, timed_out = 0, unexpected = 0;
  std::map<std::string, std::uint64_t> failed_by_mechanism;
};

enum class Io : std::uint8_t { kDone, kWait, kError };

class Attacker {
 public:
  explicit Attacker(Options o) : o_(std::move(o)) {}
  ~Attacker() {
    conns_.clear();
    if (session_ != nullptr) SSL_SESSION_free(session_);
    if (ctx_ != nullptr) SSL_CTX_free(ctx_);
    if (epoll_ >= 0) ::close(epoll_);
  }
  Attacker(const Attacker&) = delete;
  Attacker& operator=(const Attacker&) = delete;
  int run();

 private:
  void set_up_tls();
  static int on_new_session(SSL* ssl, SSL_SESSION* session);
  void start_one(std::uint64_t index);
  void advance(Conn& c);
  bool step_tls(Conn& c);
  Io write_out(Conn& c);
  Io read_in(Conn& c);
  bool on_frame(Conn& c, const std::string& frame);
  std::string first_token(const Conn& c) const;
  void finish(std::uint64_t id);
  void sweep(double now);
  void print(double elapsed) const;

  Options o_;
  SSL_CTX* ctx_ = nullptr;
  SSL_SESSION* session_ = nullptr;  // the newest ticket, for resumption
  int epoll_ = -1;
  std::uint64_t next_id_ = 1;
  std::unordered_map<std::uint64_t, std::unique_ptr<Conn>> conns_;
  std::vector<std::uint64_t> done_;
  Counts counts_;
};

Attacker* g_attacker = nullptr;  // for OpenSSL's new-session callback

void Attacker::set_up_tls() {
  ctx_ = SSL_CTX_new(TLS_client_method());
  SSL_CTX_set_min_proto_version(ctx_, TLS1_2_VERSION);
  SSL_CTX_set_verify(ctx_, SSL_VERIFY_NONE, nullptr);  // an attacker does not care whom it hits
  SSL_CTX_set_session_cache_mode(ctx_, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
  SSL_CTX_sess_set_new_cb(ctx_, &Attacker::on_new_session);
}

int Attacker::on_new_session(SSL* /*ssl*/, SSL_SESSION* session) {
  if (g_attacker == nullptr || !g_attacker->o_.resume) return 0;
  if (g_attacker->session_ != nullptr) SSL_SESSION_free(g_attacker->session_);
  g_attacker->session_ = session;
  return 1;  // kept: we own the reference
}

void Attacker::start_one(std::uint64_t index) {
  if (conns_.size() >= static_cast<std::size_t>(o_.max_concurrent)) {
    ++counts_.skipped_at_cap;
    return;
  }
  ++counts_.started;
  auto c = std::make_unique<Conn>();
  c->id = next_id_++;
  c->mechanism = o_.mechanisms[index % o_.mechanisms.size()];
  c->user = (index / o_.mechanisms.size()) % 2 == 0 ? o_.user : "mallory-" + std::to_string(index);
  c->abandon = o_.abandon_every > 0 && index % static_cast<std::uint64_t>(o_.abandon_every) == 0;
  c->deadline = now_s() + o_.timeout_s;
  c->fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  if (c->fd >= 0 && o_.sources > 0) {
    addr.sin_addr.s_addr = htonl(0x7F000101U + static_cast<std::uint32_t>(index % o_.sources));
    if (::bind(c->fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
      ++counts_.connect_failed;
      return;
    }
  }
  addr.sin_port = htons(static_cast<std::uint16_t>(o_.port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const int r = c->fd < 0 ? -1 : ::connect(c->fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
  if (c->fd < 0 || (r != 0 && errno != EINPROGRESS)) {
    ++counts_.connect_failed;
    return;
  }
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLOUT | EPOLLET | EPOLLRDHUP;
  ev.data.u64 = c->id;
  epoll_ctl(epoll_, EPOLL_CTL_ADD, c->fd, &ev);
  conns_.emplace(c->id, std::move(c));
}

std::string Attacker::first_token(const Conn& c) const {
  if (c.mechanism == "PLAIN") return std::string(1, '\0') + c.user + '\0' + "wrong-" + random_base64(6);
  return "n,,n=" + c.user + ",r=" + random_base64(18);
}

// The connect, TLS handshake, then the exchange's messages, as far as the
// socket lets them go now; the connection is finished (done_) on its end.
void Attacker::advance(Conn& c) {
  if (c.phase == Phase::kConnecting) {
    int error = 0;
    socklen_t len = sizeof error;
    getsockopt(c.fd, SOL_SOCKET, SO_ERROR, &error, &len);
    if (error != 0) {
      ++counts_.connect_failed;
      done_.push_back(c.id);
      return;
    }
    sockaddr_in peer{};
    socklen_t peer_len = sizeof peer;
    if (::getpeername(c.fd, reinterpret_cast<sockaddr*>(&peer), &peer_len) != 0) return;  // not connected yet
    c.phase = o_.tls ? Phase::kTls : Phase::kHandshake;
    if (o_.tls) {
      c.ssl = SSL_new(ctx_);
      SSL_set_fd(c.ssl, c.fd);
      if (session_ != nullptr) SSL_set_session(c.ssl, session_);
    } else {
      c.out = handshake_request(c.mechanism);
    }
  }
  if (c.phase == Phase::kTls && !step_tls(c)) return;
  for (;;) {
    const Io w = write_out(c);
    if (w != Io::kDone) {
      if (w == Io::kError) done_.push_back(c.id);
      return;
    }
    // The answer may come with the proxy's close: its frame first, then the end.
    const Io r = read_in(c);
    if (c.in.size() < 4 || c.in.size() < 4 + static_cast<std::size_t>(get32(c.in, 0))) {
      if (r == Io::kError) {
        ++counts_.closed_by_peer;
        done_.push_back(c.id);
      }
      return;
    }
    const std::size_t size = static_cast<std::size_t>(get32(c.in, 0));
    const std::string frame = c.in.substr(4, size);
    c.in.erase(0, 4 + size);
    if (!on_frame(c, frame)) {
      done_.push_back(c.id);
      return;
    }
  }
}

bool Attacker::step_tls(Conn& c) {
  const int r = SSL_connect(c.ssl);
  if (r == 1) {
    if (SSL_session_reused(c.ssl) != 0) ++counts_.tls_resumed;
    c.phase = Phase::kHandshake;
    c.out = handshake_request(c.mechanism);
    return true;
  }
  const int e = SSL_get_error(c.ssl, r);
  if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE) {
    ++counts_.tls_failed;
    ERR_clear_error();
    done_.push_back(c.id);
  }
  return false;
}

Io Attacker::write_out(Conn& c) {
  while (c.out_off < c.out.size()) {
    const char* data = c.out.data() + c.out_off;
    const std::size_t left = c.out.size() - c.out_off;
    long n = 0;
    if (c.ssl != nullptr) {
      const int r = SSL_write(c.ssl, data, static_cast<int>(left));
      if (r <= 0) {
        const int e = SSL_get_error(c.ssl, r);
        ERR_clear_error();
        return e == SSL_ERROR_WANT_WRITE || e == SSL_ERROR_WANT_READ ? Io::kWait : Io::kError;
      }
      n = r;
    } else {
      n = ::send(c.fd, data, left, MSG_NOSIGNAL);
      if (n < 0) return errno == EAGAIN ? Io::kWait : Io::kError;
    }
    c.out_off += static_cast<std::size_t>(n);
  }
  c.out.clear();
  c.out_off = 0;
  return Io::kDone;
}

// Reads what is there; kError when the peer closed or the socket failed.
Io Attacker::read_in(Conn& c) {
  char buf[16384];
  for (;;) {
    long n = 0;
    if (c.ssl != nullptr) {
      const int r = SSL_read(c.ssl, buf, sizeof buf);
      if (r <= 0) {
        const int e = SSL_get_error(c.ssl, r);
        ERR_clear_error();
        return e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE ? Io::kWait : Io::kError;
      }
      n = r;
    } else {
      n = ::recv(c.fd, buf, sizeof buf, 0);
      if (n == 0) return Io::kError;
      if (n < 0) return errno == EAGAIN ? Io::kWait : Io::kError;
    }
    c.in.append(buf, static_cast<std::size_t>(n));
  }
}

// One answer of the exchange: the next message queued, or false when the
// connection is done (its outcome counted).
bool Attacker::on_frame(Conn& c, const std::string& frame) {
  if (c.phase == Phase::kHandshake) {
    if (frame.size() < 6 || get16(frame, 4) != 0) {
      ++counts_.unexpected;
      return false;
    }
    if (c.abandon) {
      ++counts_.abandoned;
      return false;
    }
    c.phase = Phase::kFirst;
    c.out = authenticate_request(2, first_token(c));
    return true;
  }
  std::int16_t error = 0;
  std::string auth_bytes;
  if (!parse_authenticate(frame, error, auth_bytes)) {
    ++counts_.unexpected;
    return false;
  }
  if (error != 0) {
    ++counts_.failed_answered;
    ++counts_.failed_by_mechanism[c.mechanism];
    return false;
  }
  if (c.phase == Phase::kFirst && c.mechanism != "PLAIN") {
    const std::size_t r = auth_bytes.find("r=");
    const std::string nonce = auth_bytes.substr(r + 2, auth_bytes.find(',', r) - r - 2);
    const std::size_t proof = c.mechanism == "SCRAM-SHA-512" ? 64 : 32;
    c.phase = Phase::kFinal;
    c.out = authenticate_request(3, "c=biws,r=" + nonce + ",p=" + random_base64(proof));
    return true;
  }
  ++counts_.succeeded;  // a wrong password that logged in: the test fails on it
  return false;
}

void Attacker::finish(std::uint64_t id) {
  const auto it = conns_.find(id);
  if (it == conns_.end()) return;
  epoll_ctl(epoll_, EPOLL_CTL_DEL, it->second->fd, nullptr);
  conns_.erase(it);
}

void Attacker::sweep(double now) {
  for (const auto& [id, c] : conns_) {
    if (now >= c->deadline) {
      ++counts_.timed_out;
      done_.push_back(id);
    }
  }
}

void Attacker::print(double elapsed) const {
  std::string by;
  for (const auto& [m, n] : counts_.failed_by_mechanism) {
    by += (by.empty() ? "" : ", ") + ("\"" + m + "\": " + std::to_string(n));
  }
  std::printf(
      "{\"started\": %llu, \"skipped_at_cap\": %llu, \"connect_failed\": %llu, \"tls_failed\": %llu, "
      "\"tls_resumed\": %llu, \"failed_answered\": %llu, \"succeeded\": %llu, \"abandoned\": %llu, "
      "\"closed_by_peer\": %llu, \"timed_out\": %llu, \"unexpected\": %llu, \"seconds\": %.2f, "
      "\"failed_by_mechanism\": {%s}}\n",
      static_cast<unsigned long long>(counts_.started), static_cast<unsigned long long>(counts_.skipped_at_cap),
      static_cast<unsigned long long>(counts_.connect_failed), static_cast<unsigned long long>(counts_.tls_failed),
      static_cast<unsigned long long>(counts_.tls_resumed), static_cast<unsigned long long>(counts_.failed_answered),
      static_cast<unsigned long long>(counts_.succeeded), static_cast<unsigned long long>(counts_.abandoned),
      static_cast<unsigned long long>(counts_.closed_by_peer), static_cast<unsigned long long>(counts_.timed_out),
      static_cast<unsigned long long>(counts_.unexpected), elapsed, by.c_str());
  std::fflush(stdout);
}

int Attacker::run() {
  epoll_ = epoll_create1(EPOLL_CLOEXEC);
  if (o_.tls) set_up_tls();
  const double start = now_s();
  const double stop_starting = start + o_.seconds;
  double last_sweep = start;
  std::uint64_t index = 0;
  std::vector<epoll_event> events(1024);
  for (;;) {
    const double now = now_s();
    while (now < stop_starting && start + static_cast<double>(index) / o_.rate <= now) start_one(index++);
    if (now >= stop_starting && (conns_.empty() || now >= stop_starting + o_.drain_s)) break;
    const double next_due = std::min(start + static_cast<double>(index) / o_.rate, stop_starting + o_.drain_s);
    const int wait_ms = std::clamp(static_cast<int>((next_due - now) * 1000), 0, 20);
    const int n = epoll_wait(epoll_, events.data(), static_cast<int>(events.size()), wait_ms);
    for (int i = 0; i < n; ++i) {
      const std::uint64_t id = events[static_cast<std::size_t>(i)].data.u64;  // epoll_event is packed: copy
      const auto it = conns_.find(id);
      if (it != conns_.end()) advance(*it->second);
    }
    if (now - last_sweep > 0.1) {
      sweep(now);
      last_sweep = now;
    }
    for (const std::uint64_t id : done_) finish(id);
    done_.clear();
  }
  counts_.timed_out += conns_.size();  // still waiting at the end of the drain
  print(now_s() - start);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  ::signal(SIGPIPE, SIG_IGN);  // OpenSSL writes to sockets the proxy may have closed
  Attacker attacker(parse(argc, argv));
  g_attacker = &attacker;
  const int rc = attacker.run();
  g_attacker = nullptr;
  return rc;
}
