#include "proxy/upstream/sasl/scram.h"

#include <algorithm>
#include <charconv>
#include <vector>

#include "proxy/sasl/base64.h"
#include "proxy/sasl/scram_attributes.h"
#include "proxy/sasl/scram_crypto.h"

namespace pp::upstream::sasl {
namespace {

using ::pp::sasl::attribute;
using ::pp::sasl::base64_decode;
using ::pp::sasl::base64_encode;
using ::pp::sasl::random_bytes;
using ::pp::sasl::scram_hash;
using ::pp::sasl::scram_hi;
using ::pp::sasl::scram_hmac;
using ::pp::sasl::split_attributes;

constexpr std::string_view kGs2Header = "n,,";  // no channel binding, no authzid
constexpr std::size_t kNonceBytes = 24;
constexpr std::size_t kMaxShownError = 64;

bool printable(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c >= 0x21 && c <= 0x7E; });
}

// RFC 5802 section 7: any further attribute is an extension, "letter=value".
bool valid_extensions(const std::vector<std::string_view>& attrs, std::size_t from) {
  for (std::size_t i = from; i < attrs.size(); ++i) {
    const std::string_view a = attrs[i];
    const bool letter = !a.empty() && ((a[0] >= 'a' && a[0] <= 'z') || (a[0] >= 'A' && a[0] <= 'Z'));
    if (!letter || a.size() < 2 || a[1] != '=') return false;
  }
  return true;
}

SaslError scram_error(std::string what) {
  return SaslError{"SCRAM: " + std::move(what)};
}

Bytes xor_bytes(ByteView a, ByteView b) {
  Bytes out(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) out[i] = static_cast<std::uint8_t>(a[i] ^ b[i]);
  return out;
}

}  // namespace

std::expected<ServerFirst, SaslError> parse_server_first(std::string_view message, std::string_view client_nonce) {
  const auto attrs = split_attributes(message);
  if (!attrs.empty() && attrs[0].starts_with("m=")) {
    return std::unexpected(scram_error("server-first-message demands an unsupported mandatory extension"));
  }
  if (attrs.size() < 3) return std::unexpected(scram_error("server-first-message has fewer than 3 attributes"));
  ServerFirst out;
  const auto nonce = attribute(attrs[0], 'r');
  if (!nonce || !printable(*nonce)) return std::unexpected(scram_error("server-first-message: bad nonce attribute"));
  if (!nonce->starts_with(client_nonce) || nonce->size() <= client_nonce.size()) {
    return std::unexpected(scram_error("server-first-message: the nonce does not extend the client nonce"));
  }
  out.nonce = std::string(*nonce);
  const auto salt_text = attribute(attrs[1], 's');
  auto salt = salt_text ? base64_decode(*salt_text) : std::nullopt;
  if (!salt || salt->empty()) return std::unexpected(scram_error("server-first-message: bad salt attribute"));
  out.salt = std::move(*salt);
  const auto count = attribute(attrs[2], 'i');
  if (!count || count->empty() || count->size() > 9 || (*count)[0] == '0') {
    return std::unexpected(scram_error("server-first-message: bad iteration count"));
  }
  const auto [end, ec] = std::from_chars(count->data(), count->data() + count->size(), out.iterations);
  if (ec != std::errc() || end != count->data() + count->size()) {
    return std::unexpected(scram_error("server-first-message: bad iteration count"));
  }
  if (out.iterations < kScramMinIterations || out.iterations > kScramMaxIterations) {
    return std::unexpected(scram_error("server-first-message: iteration count " + std::to_string(out.iterations) +
                                       " outside [" + std::to_string(kScramMinIterations) + ", " +
                                       std::to_string(kScramMaxIterations) + "]"));
  }
  if (!valid_extensions(attrs, 3)) return std::unexpected(scram_error("server-first-message: malformed extension"));
  return out;
}

std::expected<ServerFinal, SaslError> parse_server_final(std::string_view message) {
  const auto attrs = split_attributes(message);
  if (const auto e = attribute(attrs[0], 'e')) {
    // The server's reason ("invalid-proof", "unknown-user"): its words, no
    // secret of ours; bounded and printable before it reaches a log line.
    std::string shown(e->substr(0, kMaxShownError));
    if (!printable(shown)) shown = "(unprintable)";
    return std::unexpected(scram_error("the server refused: " + shown));
  }
  const auto v = attribute(attrs[0], 'v');
  auto signature = v ? base64_decode(*v) : std::nullopt;
  if (!signature || signature->empty()) return std::unexpected(scram_error("server-final-message: bad verifier"));
  if (!valid_extensions(attrs, 1)) return std::unexpected(scram_error("server-final-message: malformed extension"));
  return ServerFinal{std::move(*signature)};
}

std::expected<std::string, SaslError> scram_username(std::string_view username) {
  if (username.empty()) return std::unexpected(scram_error("the username is empty"));
  std::string out;
  for (const char c : username) {
    if (c < 0x20 || c > 0x7E) {
      return std::unexpected(
          scram_error("the username has a byte outside printable ASCII (SASLprep is not "
                      "implemented for other characters)"));
    }
    if (c == '=') {
      out += "=3D";
    } else if (c == ',') {
      out += "=2C";
    } else {
      out += c;
    }
  }
  return out;
}

ScramMechanism::ScramMechanism(ScramHash hash, std::string username, std::string password, std::string client_nonce)
    : hash_(hash),
      username_(std::move(username)),
      password_(std::move(password)),
      client_nonce_(std::move(client_nonce)) {}

std::string_view ScramMechanism::name() const {
  return ::pp::sasl::scram_mechanism_name(hash_);
}

std::expected<Bytes, SaslError> ScramMechanism::initial_response() {
  auto user = scram_username(username_);
  if (!user) return std::unexpected(user.error());
  if (client_nonce_.empty()) {
    // Base64 of random bytes: printable and comma-free, as a nonce must be.
    auto random = random_bytes(kNonceBytes);
    if (!random) return std::unexpected(scram_error("RAND_bytes failed to make a nonce"));
    client_nonce_ = base64_encode(*random);
  }
  client_first_bare_ = "n=" + *user + ",r=" + client_nonce_;
  step_ = Step::kSentFirst;
  return to_bytes(std::string(kGs2Header) + client_first_bare_);
}

std::expected<std::optional<Bytes>, SaslError> ScramMechanism::evaluate(ByteView challenge) {
  switch (step_) {
    case Step::kSentFirst:
      return client_final(as_text(challenge));
    case Step::kSentFinal:
      return verify_server_final(as_text(challenge));
    case Step::kStart:
    case Step::kDone:
      break;
  }
  return std::unexpected(scram_error("a challenge arrived out of turn"));
}

std::expected<std::optional<Bytes>, SaslError> ScramMechanism::client_final(std::string_view server_first) {
  auto first = parse_server_first(server_first, client_nonce_);
  if (!first) return std::unexpected(first.error());
  const Bytes salted = scram_hi(hash_, password_, first->salt, first->iterations);
  const Bytes client_key = scram_hmac(hash_, salted, to_bytes("Client Key"));
  const Bytes stored_key = scram_hash(hash_, client_key);
  // c= is base64("n,,"): the GS2 header, no channel binding data.
  const std::string without_proof = "c=" + base64_encode(to_bytes(kGs2Header)) + ",r=" + first->nonce;
  const std::string auth_message = client_first_bare_ + "," + std::string(server_first) + "," + without_proof;
  const Bytes client_signature = scram_hmac(hash_, stored_key, to_bytes(auth_message));
  const Bytes proof = xor_bytes(client_key, client_signature);
  const Bytes server_key = scram_hmac(hash_, salted, to_bytes("Server Key"));
  expected_server_signature_ = scram_hmac(hash_, server_key, to_bytes(auth_message));
  step_ = Step::kSentFinal;
  return std::optional<Bytes>(to_bytes(without_proof + ",p=" + base64_encode(proof)));
}

std::expected<std::optional<Bytes>, SaslError> ScramMechanism::verify_server_final(std::string_view server_final) {
  auto final_message = parse_server_final(server_final);
  if (!final_message) return std::unexpected(final_message.error());
  // Not secret-dependent timing worth guarding: the expected value is ours.
  if (!bytes_equal(final_message->server_signature, expected_server_signature_)) {
    return std::unexpected(
        scram_error("the server signature does not verify (the broker does not know the "
                    "credentials, or the exchange was tampered with)"));
  }
  step_ = Step::kDone;
  return std::optional<Bytes>{};
}

}  // namespace pp::upstream::sasl
