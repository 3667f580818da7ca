// The users file of [listener.sasl] (proxy/sasl/users_file.h): whatever
// parses holds only valid names and verifiers of the right sizes, and
// writes back to a text that parses to the same users.
#include <string_view>

#include "proxy/sasl/users_file.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto users = pp::sasl::parse_users_file(text, "fuzz.toml");
  if (!users) return 0;
  for (const auto& [name, user] : *users) {
    if (!pp::sasl::valid_user_name(name)) __builtin_trap();
    if (user.plain && user.plain->hash.size() != 32) __builtin_trap();
    if (user.scram_sha256 && user.scram_sha256->stored_key.size() != 32) __builtin_trap();
    if (user.scram_sha512 && user.scram_sha512->server_key.size() != 64) __builtin_trap();
  }
  auto again = pp::sasl::parse_users_file(pp::sasl::format_users_file(*users), "again.toml");
  if (!again || *again != *users) __builtin_trap();
  return 0;
}
