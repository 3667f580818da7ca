// The client listener's SASL server over a client's bytes: the first input
// byte picks the target, the rest is the message.
//   0: SCRAM client-first-message parser; 1: client-final-message parser;
//   2: PLAIN's token; 3: a whole SCRAM-SHA-256 exchange (client-first, then
//   the rest after a '\n' as client-final) against a fixed user.
// Whatever parses must hold what the grammar promises, and no failure text
// may carry the proof or password the input held.
#include <memory>
#include <string_view>

#include "proxy/sasl/plain_server.h"
#include "proxy/sasl/scram_server.h"

namespace {

std::shared_ptr<const pp::sasl::UserStore> users() {
  static const auto store = [] {
    auto s = std::make_shared<pp::sasl::UserStore>();
    const pp::Bytes salt(16, 7);
    const pp::Bytes salted = pp::sasl::scram_hi(pp::sasl::ScramHash::kSha256, "pencil", salt, 4096);
    const pp::Bytes client_key = pp::sasl::scram_hmac(pp::sasl::ScramHash::kSha256, salted,
                                                      pp::Bytes{'C', 'l', 'i', 'e', 'n', 't', ' ', 'K', 'e', 'y'});
    (*s)["user"].scram_sha256 =
        pp::sasl::ScramCredential{salt, 4096, pp::sasl::scram_hash(pp::sasl::ScramHash::kSha256, client_key),
                                  pp::sasl::scram_hmac(pp::sasl::ScramHash::kSha256, salted,
                                                       pp::Bytes{'S', 'e', 'r', 'v', 'e', 'r', ' ', 'K', 'e', 'y'})};
    return std::shared_ptr<const pp::sasl::UserStore>(s);
  }();
  return store;
}

void check_first(std::string_view message) {
  auto first = pp::sasl::parse_client_first(message);
  if (!first) return;
  if (!pp::sasl::valid_user_name(first->user) || first->nonce.empty()) __builtin_trap();
  if (first->nonce.find(',') != std::string::npos) __builtin_trap();
  if (first->gs2_header.size() + first->bare.size() != message.size()) __builtin_trap();
}

void check_final(std::string_view message) {
  auto final_message = pp::sasl::parse_client_final(message);
  if (!final_message) return;
  if (final_message->proof.empty() || final_message->nonce.empty()) __builtin_trap();
  if (!message.starts_with(final_message->without_proof)) __builtin_trap();
}

void exchange(std::string_view input) {
  const std::size_t newline = input.find('\n');
  pp::sasl::ScramServer server(pp::sasl::ScramHash::kSha256, users(), pp::Bytes{}, "fuzznonce");
  const std::string_view first = input.substr(0, newline);
  auto step = server.evaluate(pp::ByteView(reinterpret_cast<const std::uint8_t*>(first.data()), first.size()));
  if (!step || newline == std::string_view::npos) return;
  const std::string_view rest = input.substr(newline + 1);
  auto done = server.evaluate(pp::ByteView(reinterpret_cast<const std::uint8_t*>(rest.data()), rest.size()));
  if (done && !done->complete) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::string_view message(reinterpret_cast<const char*>(data + 1), size - 1);
  switch (data[0] % 4) {
    case 0:
      check_first(message);
      break;
    case 1:
      check_final(message);
      break;
    case 2: {
      auto token = pp::sasl::parse_plain_token(pp::ByteView(data + 1, size - 1));
      if (token && (token->authcid.empty() || token->password.empty())) __builtin_trap();
      pp::sasl::PlainServer server(users());
      (void)pp::sasl::evaluate_in_place(server, pp::ByteView(data + 1, size - 1));
      break;
    }
    default:
      exchange(message);
      break;
  }
  return 0;
}
