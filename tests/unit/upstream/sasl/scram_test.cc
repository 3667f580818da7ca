// The SCRAM client on RFC 7677's example and a SHA-512 vector, and the
// strictness of its parsers on malformed server messages.
#include "proxy/upstream/sasl/scram.h"

#include <gtest/gtest.h>

#include "proxy/sasl/base64.h"

namespace pp::upstream::sasl {
namespace {

using ::pp::sasl::base64_decode;
using ::pp::sasl::base64_encode;
using ::pp::sasl::base64url_decode;

std::string text(const Bytes& b) {
  return std::string(b.begin(), b.end());
}

constexpr std::string_view kClientNonce = "rOprNGfwEbeRWgbNEkqO";
constexpr std::string_view kServerFirst =
    "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096";

// RFC 7677 section 3, verbatim.
TEST(Scram, Rfc7677Sha256Example) {
  ScramMechanism m(ScramHash::kSha256, "user", "pencil", std::string(kClientNonce));
  EXPECT_EQ(m.name(), "SCRAM-SHA-256");
  auto first = m.initial_response();
  ASSERT_TRUE(first);
  EXPECT_EQ(text(*first), "n,,n=user,r=rOprNGfwEbeRWgbNEkqO");
  auto final_message = m.evaluate(to_bytes(kServerFirst));
  ASSERT_TRUE(final_message && *final_message);
  EXPECT_EQ(text(**final_message),
            "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
            "p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=");
  auto done = m.evaluate(to_bytes("v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="));
  ASSERT_TRUE(done) << done.error().reason;
  EXPECT_FALSE(*done);
}

// RFC 7677's inputs with SHA-512, computed with Python's hashlib/hmac:
//   sp = hashlib.pbkdf2_hmac('sha512', b'pencil', b64decode('W22ZaJ0SNY7soEsUEjb6gQ=='), 4096)
//   ck = hmac.new(sp, b'Client Key', 'sha512').digest(); sk = sha512(ck)
//   am = client-first-bare + ',' + server-first + ',' + 'c=biws,r=' + nonce
//   proof = ck XOR hmac(sk, am); v = hmac(hmac(sp, b'Server Key'), am)
// (the same script reproduces RFC 7677's SHA-256 values above).
TEST(Scram, Sha512KnownVector) {
  ScramMechanism m(ScramHash::kSha512, "user", "pencil", std::string(kClientNonce));
  ASSERT_TRUE(m.initial_response());
  auto final_message = m.evaluate(to_bytes(kServerFirst));
  ASSERT_TRUE(final_message && *final_message);
  EXPECT_EQ(text(**final_message),
            "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
            "p=gMGXRcevScNtxZ6/8lQYpGtnsNAc3mGcmNomv+xnoOMw+3R2xNJdMNnzMlTN8PPC6wdp6dybEmDYXYTxwnYPJQ==");
  auto done = m.evaluate(
      to_bytes("v=ZQnYEgWQMFmmsM8aQMF0nDDCy/AgCzkwk8CmMZYcMg0vSVlKDanekLtifDSeVGT4+5ZxXnJq199RVG2rR7N7Zw=="));
  ASSERT_TRUE(done) << done.error().reason;
  EXPECT_FALSE(*done);
}

TEST(Scram, WrongServerSignatureFails) {
  ScramMechanism m(ScramHash::kSha256, "user", "pencil", std::string(kClientNonce));
  ASSERT_TRUE(m.initial_response());
  ASSERT_TRUE(m.evaluate(to_bytes(kServerFirst)));
  auto done = m.evaluate(to_bytes("v=" + base64_encode(Bytes(32, 7))));
  ASSERT_FALSE(done);
  EXPECT_NE(done.error().reason.find("signature does not verify"), std::string::npos);
  EXPECT_EQ(done.error().reason.find("pencil"), std::string::npos);
}

TEST(Scram, ServerErrorIsReported) {
  auto parsed = parse_server_final("e=invalid-proof");
  ASSERT_FALSE(parsed);
  EXPECT_NE(parsed.error().reason.find("invalid-proof"), std::string::npos);
}

TEST(Scram, MalformedServerFirstRejected) {
  const std::string_view bad[] = {
      "",
      "r=rOprNGfwEbeRWgbNEkqO",                                             // too few attributes
      "m=ext,r=rOprNGfwEbeRWgbNEkqOxyz,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096",  // mandatory extension
      "r=rOprNGfwEbeRWgbNEkqO,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096",           // nonce not extended
      "r=someoneelse123,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096",                 // nonce not ours
      "s=W22ZaJ0SNY7soEsUEjb6gQ==,r=rOprNGfwEbeRWgbNEkqOx,i=4096",          // out of order
      "r=rOprNGfwEbeRWgbNEkqOx,s=W22ZaJ0SNY7soEsUEjb6gQ=,i=4096",           // bad base64
      "r=rOprNGfwEbeRWgbNEkqOx,s=,i=4096",                                  // empty salt
      "r=rOprNGfwEbeRWgbNEkqOx,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4095",          // below Kafka's minimum
      "r=rOprNGfwEbeRWgbNEkqOx,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=99999999",      // above the cap
      "r=rOprNGfwEbeRWgbNEkqOx,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=04096",         // leading zero
      "r=rOprNGfwEbeRWgbNEkqOx,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096x",         // trailing junk
      "r=rOprNGfwEbeRWgbNEkqOx,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=",              // empty count
      "r=rOprNGfwEbeRWgbNEkqOx,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096,",         // empty extension
      "r=rOprNGfwEbeRWgbNEkqOx\x01,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096",      // unprintable nonce
  };
  for (const auto message : bad) {
    EXPECT_FALSE(parse_server_first(message, kClientNonce)) << message;
  }
  auto ok = parse_server_first(std::string(kServerFirst) + ",x=extension", kClientNonce);
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->iterations, 4096);
  EXPECT_EQ(ok->salt.size(), 16U);
}

TEST(Scram, MalformedServerFinalRejected) {
  for (const std::string_view message :
       {"", "v=", "v=abc", "x=6rriTRBi", "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=,"}) {
    EXPECT_FALSE(parse_server_final(message)) << message;
  }
}

TEST(Scram, ChallengeOutOfTurnFails) {
  ScramMechanism m(ScramHash::kSha256, "user", "pencil");
  EXPECT_FALSE(m.evaluate(to_bytes(kServerFirst)));
}

TEST(Scram, UsernameEscapedAndAsciiOnly) {
  EXPECT_EQ(scram_username("a=b,c").value(), "a=3Db=2Cc");
  EXPECT_FALSE(scram_username("caf\xc3\xa9"));
  EXPECT_FALSE(scram_username(""));
}

TEST(Scram, RandomNonceIsFreshAndPrintable) {
  ScramMechanism a(ScramHash::kSha512, "u", "p");
  ScramMechanism b(ScramHash::kSha512, "u", "p");
  const std::string first_a = text(a.initial_response().value());
  const std::string first_b = text(b.initial_response().value());
  EXPECT_NE(first_a, first_b);
  EXPECT_TRUE(first_a.starts_with("n,,n=u,r="));
  EXPECT_EQ(first_a.find(',', 9), std::string::npos);
}

TEST(Base64, StrictDecoding) {
  EXPECT_EQ(base64_encode(to_bytes("n,,")), "biws");
  EXPECT_EQ(base64_decode("biws").value(), to_bytes("n,,"));
  EXPECT_EQ(base64_decode("YQ==").value(), to_bytes("a"));
  EXPECT_FALSE(base64_decode("YR=="));  // non-zero leftover bits
  EXPECT_FALSE(base64_decode("Y==="));
  EXPECT_FALSE(base64_decode("YQ="));
  EXPECT_FALSE(base64_decode("Y Q="));
  EXPECT_EQ(base64url_decode("_-8").value(), (Bytes{0xFF, 0xEF}));
}

}  // namespace
}  // namespace pp::upstream::sasl
