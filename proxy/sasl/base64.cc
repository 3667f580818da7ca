#include "proxy/sasl/base64.h"

#include <array>

namespace pp::sasl {
namespace {

constexpr std::string_view kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

constexpr std::array<std::int8_t, 256> decode_table(char c62, char c63) {
  std::array<std::int8_t, 256> table{};
  table.fill(-1);
  for (std::size_t i = 0; i < 62; ++i) table[static_cast<unsigned char>(kAlphabet[i])] = static_cast<std::int8_t>(i);
  table[static_cast<unsigned char>(c62)] = 62;
  table[static_cast<unsigned char>(c63)] = 63;
  return table;
}

constexpr auto kStandard = decode_table('+', '/');
constexpr auto kUrl = decode_table('-', '_');

// Unpadded groups of 2-4 symbols; a last group of 1 symbol is no encoding.
std::optional<Bytes> decode_symbols(std::string_view text, const std::array<std::int8_t, 256>& table) {
  if (text.size() % 4 == 1) return std::nullopt;
  Bytes out;
  out.reserve(text.size() / 4 * 3 + 2);
  std::uint32_t acc = 0;
  int bits = 0;
  for (const char c : text) {
    const std::int8_t v = table[static_cast<unsigned char>(c)];
    if (v < 0) return std::nullopt;
    acc = (acc << 6) | static_cast<std::uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<std::uint8_t>((acc >> bits) & 0xFF));
    }
  }
  // The leftover bits must be zero, or two texts would decode alike.
  if ((acc & ((1U << bits) - 1)) != 0) return std::nullopt;
  return out;
}

}  // namespace

std::string base64_encode(ByteView data) {
  std::string out;
  out.reserve((data.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 3 <= data.size(); i += 3) {
    const std::uint32_t v = (std::uint32_t{data[i]} << 16) | (std::uint32_t{data[i + 1]} << 8) | data[i + 2];
    for (int shift = 18; shift >= 0; shift -= 6) out += kAlphabet[(v >> shift) & 0x3F];
  }
  const std::size_t left = data.size() - i;
  if (left > 0) {
    std::uint32_t v = std::uint32_t{data[i]} << 16;
    if (left == 2) v |= std::uint32_t{data[i + 1]} << 8;
    out += kAlphabet[(v >> 18) & 0x3F];
    out += kAlphabet[(v >> 12) & 0x3F];
    out += left == 2 ? kAlphabet[(v >> 6) & 0x3F] : '=';
    out += '=';
  }
  return out;
}

std::optional<Bytes> base64_decode(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  std::size_t pad = 0;
  while (pad < 2 && text.size() > pad && text[text.size() - 1 - pad] == '=') ++pad;
  return decode_symbols(text.substr(0, text.size() - pad), kStandard);
}

std::optional<Bytes> base64url_decode(std::string_view text) {
  while (!text.empty() && text.back() == '=') text.remove_suffix(1);
  return decode_symbols(text, kUrl);
}

}  // namespace pp::sasl
