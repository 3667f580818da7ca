#include "proxy/protocol/types.h"

namespace pp {

bool Uuid::is_zero() const {
  for (auto b : bytes) {
    if (b != 0) return false;
  }
  return true;
}

std::string Uuid::to_string() const {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out;
  std::uint32_t acc = 0;
  int bits = 0;
  for (auto b : bytes) {
    acc = (acc << 8) | b;
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out.push_back(kAlphabet[(acc >> bits) & 0x3f]);
    }
  }
  if (bits > 0) out.push_back(kAlphabet[(acc << (6 - bits)) & 0x3f]);
  return out;
}

}  // namespace pp
