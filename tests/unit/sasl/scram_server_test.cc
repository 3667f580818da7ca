// The listener's SCRAM server against RFC 7677's SCRAM-SHA-256 exchange
// (section 3), against our own upstream client for SHA-512, and its parser
// refusing what the grammar forbids.
#include "proxy/sasl/scram_server.h"

#include <gtest/gtest.h>

#include "proxy/sasl/base64.h"
#include "proxy/upstream/sasl/scram.h"

namespace pp::sasl {
namespace {

// RFC 7677 section 3.
constexpr std::string_view kClientFirst = "n,,n=user,r=rOprNGfwEbeRWgbNEkqO";
constexpr std::string_view kServerNonce = "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0";
constexpr std::string_view kServerFirst =
    "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096";
constexpr std::string_view kClientFinal =
    "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=";
constexpr std::string_view kServerFinal = "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=";

Bytes b(std::string_view s) {
  return Bytes(s.begin(), s.end());
}
std::string text(const Bytes& bytes) {
  return std::string(bytes.begin(), bytes.end());
}

// The verifiers RFC 5802 section 3 derives, for a fixed salt.
ScramCredential credential(ScramHash hash, std::string_view password, const Bytes& salt, int iterations) {
  const Bytes salted = scram_hi(hash, password, salt, iterations);
  return ScramCredential{salt, iterations, scram_hash(hash, scram_hmac(hash, salted, b("Client Key"))),
                         scram_hmac(hash, salted, b("Server Key"))};
}

std::shared_ptr<const UserStore> rfc_users() {
  auto users = std::make_shared<UserStore>();
  (*users)["user"].scram_sha256 =
      credential(ScramHash::kSha256, "pencil", base64_decode("W22ZaJ0SNY7soEsUEjb6gQ==").value(), 4096);
  return users;
}

TEST(ScramServer, Rfc7677ExchangeByteForByte) {
  ScramServer server(ScramHash::kSha256, rfc_users(), Bytes{}, std::string(kServerNonce));
  auto first = server.evaluate(b(kClientFirst));
  ASSERT_TRUE(first) << first.error().detail;
  EXPECT_EQ(text(first->challenge), kServerFirst);
  EXPECT_FALSE(first->complete);
  EXPECT_EQ(server.user(), "user");
  auto final_step = server.evaluate(b(kClientFinal));
  ASSERT_TRUE(final_step) << final_step.error().detail;
  EXPECT_EQ(text(final_step->challenge), kServerFinal);
  EXPECT_TRUE(final_step->complete);
  // Nothing more is taken once the exchange is over.
  auto extra = server.evaluate(b(kClientFinal));
  ASSERT_FALSE(extra);
  EXPECT_EQ(extra.error().reason, AuthFailureReason::kProtocol);
}

TEST(ScramServer, WrongProofIsBadPassword) {
  ScramServer server(ScramHash::kSha256, rfc_users(), Bytes{}, std::string(kServerNonce));
  ASSERT_TRUE(server.evaluate(b(kClientFirst)));
  std::string forged(kClientFinal);
  forged[forged.size() - 5] = forged[forged.size() - 5] == 'A' ? 'B' : 'A';
  auto out = server.evaluate(b(forged));
  ASSERT_FALSE(out);
  EXPECT_EQ(out.error().reason, AuthFailureReason::kBadPassword);
  EXPECT_EQ(out.error().detail.find("dHzb"), std::string::npos);  // no proof in the log text
}

// The salt and count of a server-first-message: "s=...", "i=...".
std::pair<std::string, std::string> salt_and_count(const Bytes& server_first) {
  const std::string t = text(server_first);
  const auto s = t.find(",s=");
  const auto i = t.find(",i=");
  return {t.substr(s + 3, i - s - 3), t.substr(i + 3)};
}

std::expected<ServerStep, AuthFailure> first_step(ScramHash hash, const Bytes& secret, std::string_view user) {
  ScramServer server(hash, rfc_users(), secret);
  return server.evaluate(b("n,,n=" + std::string(user) + ",r=abc"));
}

// An unknown user is answered as a known one, with a salt and count derived
// from the secret and the name: the same each time, another for another
// name or secret, shaped as `users add` writes them; it fails at the end.
TEST(ScramServer, UnknownUserGetsAStableDecoySaltAndFailsAtClientFinal) {
  const Bytes secret(32, 1);
  auto first = first_step(ScramHash::kSha256, secret, "nobody");
  ASSERT_TRUE(first) << first.error().detail;
  const auto [salt, count] = salt_and_count(first->challenge);
  EXPECT_EQ(count, std::to_string(kDefaultIterations));
  EXPECT_EQ(base64_decode(salt).value().size(), kSaltBytes);
  EXPECT_EQ(salt_and_count(first_step(ScramHash::kSha256, secret, "nobody")->challenge).first, salt);
  EXPECT_NE(salt_and_count(first_step(ScramHash::kSha256, secret, "nobody2")->challenge).first, salt);
  EXPECT_NE(salt_and_count(first_step(ScramHash::kSha256, Bytes(32, 2), "nobody")->challenge).first, salt);
  EXPECT_NE(salt_and_count(first_step(ScramHash::kSha512, secret, "nobody")->challenge).first, salt);
  // A known user's answer has the same shape (users add: 24-byte salt, 4096).
  auto users = std::make_shared<UserStore>();
  (*users)["alice"].scram_sha256 = make_scram_credential(ScramHash::kSha256, "pw").value();
  ScramServer known(ScramHash::kSha256, users, secret);
  const auto [known_salt, known_count] = salt_and_count(known.evaluate(b("n,,n=alice,r=abc"))->challenge);
  EXPECT_EQ(known_salt.size(), salt.size());
  EXPECT_EQ(known_count, count);

  // Even the client that derives its proof from the decoy salt fails, as unknown.
  upstream::sasl::ScramMechanism client(ScramHash::kSha256, "nobody", "guess");
  ScramServer server(ScramHash::kSha256, rfc_users(), secret);
  auto challenge = server.evaluate(client.initial_response().value());
  ASSERT_TRUE(challenge) << challenge.error().detail;
  auto final_message = client.evaluate(challenge->challenge);
  ASSERT_TRUE(final_message && *final_message);
  auto out = server.evaluate(**final_message);
  ASSERT_FALSE(out);
  EXPECT_EQ(out.error().reason, AuthFailureReason::kUnknownUser);
  EXPECT_EQ(server.user(), "nobody");
  // A user without SHA-512 credentials is unknown to SCRAM-SHA-512 alike.
  ScramServer sha512(ScramHash::kSha512, rfc_users(), secret);
  EXPECT_TRUE(sha512.evaluate(b(kClientFirst)));
}

TEST(ScramServer, NonceChangedOrChannelBindingWrongIsRefused) {
  ScramServer server(ScramHash::kSha256, rfc_users(), Bytes{}, std::string(kServerNonce));
  ASSERT_TRUE(server.evaluate(b(kClientFirst)));
  std::string other_nonce(kClientFinal);
  other_nonce.replace(other_nonce.find("k0"), 2, "k1");
  EXPECT_EQ(server.evaluate(b(other_nonce)).error().reason, AuthFailureReason::kMalformed);
  ScramServer again(ScramHash::kSha256, rfc_users(), Bytes{}, std::string(kServerNonce));
  ASSERT_TRUE(again.evaluate(b(kClientFirst)));
  std::string binding(kClientFinal);
  binding.replace(0, 6, "c=eSws");  // "y,,"
  EXPECT_EQ(again.evaluate(b(binding)).error().reason, AuthFailureReason::kMalformed);
}

// Our upstream client and this server agree, for SHA-512 and a user name
// that needs saslname escaping, with a random server nonce.
TEST(ScramServer, TalksToTheUpstreamClient) {
  auto users = std::make_shared<UserStore>();
  (*users)["a=b,c"].scram_sha512 = make_scram_credential(ScramHash::kSha512, "s3cret").value();
  upstream::sasl::ScramMechanism client(ScramHash::kSha512, "a=b,c", "s3cret");
  ScramServer server(ScramHash::kSha512, users);
  auto first = client.initial_response();
  ASSERT_TRUE(first);
  auto challenge = server.evaluate(*first);
  ASSERT_TRUE(challenge) << challenge.error().detail;
  auto final_message = client.evaluate(challenge->challenge);
  ASSERT_TRUE(final_message && *final_message);
  auto done = server.evaluate(**final_message);
  ASSERT_TRUE(done) << done.error().detail;
  EXPECT_TRUE(done->complete);
  EXPECT_EQ(server.user(), "a=b,c");
  auto verified = client.evaluate(done->challenge);
  ASSERT_TRUE(verified) << verified.error().reason;
  EXPECT_FALSE(*verified);
}

TEST(ScramServer, WrongPasswordFromTheClient) {
  auto users = std::make_shared<UserStore>();
  (*users)["alice"].scram_sha256 = make_scram_credential(ScramHash::kSha256, "right").value();
  upstream::sasl::ScramMechanism client(ScramHash::kSha256, "alice", "wrong");
  ScramServer server(ScramHash::kSha256, users);
  auto challenge = server.evaluate(client.initial_response().value());
  ASSERT_TRUE(challenge);
  auto final_message = client.evaluate(challenge->challenge).value().value();
  auto out = server.evaluate(final_message);
  ASSERT_FALSE(out);
  EXPECT_EQ(out.error().reason, AuthFailureReason::kBadPassword);
}

TEST(ScramServerParser, ClientFirstGrammar) {
  auto ok = parse_client_first("n,a=user,n=user,r=abc,ext=1");
  ASSERT_TRUE(ok) << ok.error().detail;
  EXPECT_EQ(ok->gs2_header, "n,a=user,");
  EXPECT_EQ(ok->bare, "n=user,r=abc,ext=1");
  EXPECT_EQ(parse_client_first("y,,n=u=2Cv=3Dw,r=x")->user, "u,v=w");
  for (const std::string_view bad :
       {"", "n", "n,", "p=tls-unique,,n=user,r=abc", "n,,m=x,n=user,r=abc", "n,,n=,r=abc", "n,,n=user",
        "n,,n=user,r=", "n,,n=us=2Xr,r=abc", "n,,r=abc,n=user", "n,a=other,n=user,r=abc", "n,,n=user,r=a b",
        "n,,n=user,r=abc,=1", "n,,n=user,r=abc,tokenauth=true", "n,x=y,n=user,r=abc"}) {
    EXPECT_FALSE(parse_client_first(bad)) << bad;
  }
}

TEST(ScramServerParser, ClientFinalGrammar) {
  auto ok = parse_client_final(kClientFinal);
  ASSERT_TRUE(ok) << ok.error().detail;
  EXPECT_EQ(ok->channel_binding, "n,,");
  EXPECT_EQ(ok->proof.size(), 32u);
  EXPECT_EQ(ok->without_proof, "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0");
  for (const std::string_view bad : {"", "c=biws", "c=biws,r=abc", "c=biws,r=abc,p=", "c=bi,r=abc,p=AAAA",
                                     "r=abc,c=biws,p=AAAA", "c=biws,r=abc,x,p=AAAA", "c=biws,r=abc,p=AAAA,e=1"}) {
    EXPECT_FALSE(parse_client_final(bad)) << bad;
  }
}

}  // namespace
}  // namespace pp::sasl
