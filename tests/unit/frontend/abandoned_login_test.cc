// A SASL login abandoned mid-exchange counts as a failure of the peer's
// address in the login slow-down (login_throttle.h): a client that hangs up
// before the delayed answer does not spare its address's next failure the
// longer wait. Real sockets on loopback, each client bound to its own source
// address in 127.0.0.0/8 (one peer address each).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <string>

#include "proxy/frontend/login_throttle.h"
#include "tests/unit/frontend/frontend_test_support.h"

namespace pp::test {
namespace {

constexpr std::uint32_t kAttacker = INADDR_LOOPBACK + 7;   // 127.0.0.8
constexpr std::uint32_t kBystander = INADDR_LOOPBACK + 8;  // 127.0.0.9

class AbandonedLoginTest : public FrontendFixture {
 protected:
  void start_sasl() {
    FrontendConfig config;
    config.sasl_mechanisms = {"SCRAM-SHA-256"};
    start(config);
  }

  // SaslHandshake v1 for `mechanism`; the answer's error, or nullopt when
  // none came within `timeout_ms`.
  static std::optional<ErrorCode> handshake(TestClient& c, const std::string& mechanism, int timeout_ms = 3000) {
    SaslHandshakeRequest request;
    request.mechanism = mechanism;
    if (!c.send(ApiKey::kSaslHandshake, 1, 1, request)) return std::nullopt;
    const auto frame = c.read_frame(timeout_ms);
    if (!frame) return std::nullopt;
    const auto response = decode_response<SaslHandshakeResponse>(*frame, 1);
    if (!response) return std::nullopt;
    return response->error_code;
  }

  // Waits until the front end has counted `n` failed logins in all.
  bool failures_reach(std::uint64_t n) {
    return run_until(&loop_, [&] { return frontend_->counters().authentication_failures_total >= n; });
  }

  // A failed login from `source` (a mechanism not enabled) and how long its
  // answer took, in ms; -1 when none came.
  std::int64_t failed_login_ms(std::uint32_t source) {
    auto c = connect(source);
    const auto sent = std::chrono::steady_clock::now();
    const auto error = handshake(*c, "NOT-A-MECHANISM", 8000);
    const auto took = std::chrono::steady_clock::now() - sent;
    if (error != ErrorCode::kUnsupportedSaslMechanism) return -1;
    return std::chrono::duration_cast<std::chrono::milliseconds>(took).count();
  }
};

TEST_F(AbandonedLoginTest, AbandonedLoginsSlowThePeersNextFailure) {
  start_sasl();
  // One client hangs up right after SaslHandshake, another half way through
  // a SCRAM exchange (client-first answered, client-final never sent).
  {
    auto c = connect(kAttacker);
    ASSERT_EQ(handshake(*c, "SCRAM-SHA-256"), ErrorCode::kNone);
    c->close();
    ASSERT_TRUE(failures_reach(1)) << "the first abandoned login was not counted";
  }
  {
    auto c = connect(kAttacker);
    ASSERT_EQ(handshake(*c, "SCRAM-SHA-256"), ErrorCode::kNone);
    SaslAuthenticateRequest first;
    const std::string client_first = "n,,n=mallory,r=abandoned-nonce";
    first.auth_bytes = Bytes(client_first.begin(), client_first.end());
    ASSERT_TRUE(c->send(ApiKey::kSaslAuthenticate, 1, 2, first));
    const auto frame = c->read_frame();
    ASSERT_TRUE(frame.has_value());
    const auto answer = decode_response<SaslAuthenticateResponse>(*frame, 1);
    ASSERT_TRUE(answer.has_value());
    ASSERT_EQ(answer->error_code, ErrorCode::kNone) << "a server-first-message, decoy or not";
    c->close();
    ASSERT_TRUE(failures_reach(2)) << "the second abandoned login was not counted";
  }
  // The address's third failure: 250 ms doubled twice.
  const std::uint64_t third = LoginThrottle::kBaseDelayMs << 2;
  const std::int64_t attacker_ms = failed_login_ms(kAttacker);
  ASSERT_GE(attacker_ms, 0) << "no UNSUPPORTED_SASL_MECHANISM answer";
  EXPECT_GE(static_cast<std::uint64_t>(attacker_ms), third - 50)
      << "the abandoned logins did not count towards the address's slow-down";
  // Another address has failed nothing: its first failure waits the base delay.
  const std::int64_t bystander_ms = failed_login_ms(kBystander);
  ASSERT_GE(bystander_ms, 0) << "no UNSUPPORTED_SASL_MECHANISM answer";
  EXPECT_GE(static_cast<std::uint64_t>(bystander_ms), LoginThrottle::kBaseDelayMs - 50);
  EXPECT_LT(static_cast<std::uint64_t>(bystander_ms), third - 50) << "the slow-down is per peer address";
  EXPECT_EQ(frontend_->counters().authentication_failures_total, 4U);
}

}  // namespace
}  // namespace pp::test
