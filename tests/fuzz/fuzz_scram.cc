// The SCRAM client's parsers of the broker's messages (RFC 5802 section 7):
// the first input byte picks server-first (even) or server-final (odd); the
// rest is the message. Whatever parses must hold what the grammar promises.
#include <string_view>

#include "proxy/upstream/sasl/scram.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::string_view message(reinterpret_cast<const char*>(data + 1), size - 1);
  constexpr std::string_view kClientNonce = "rOprNGfwEbeRWgbNEkqO";
  if (data[0] % 2 == 0) {
    auto first = pp::upstream::sasl::parse_server_first(message, kClientNonce);
    if (first) {
      if (!first->nonce.starts_with(kClientNonce) || first->nonce.size() <= kClientNonce.size()) __builtin_trap();
      if (first->salt.empty()) __builtin_trap();
      if (first->iterations < pp::upstream::sasl::kScramMinIterations ||
          first->iterations > pp::upstream::sasl::kScramMaxIterations) {
        __builtin_trap();
      }
    }
  } else {
    auto final_message = pp::upstream::sasl::parse_server_final(message);
    if (final_message && final_message->server_signature.empty()) __builtin_trap();
  }
  return 0;
}
