// A response frame body from a broker. The request's (api, version) is not on
// the wire, so the first three input bytes choose them.
#include "proxy/protocol/header.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 3) return 0;
  const auto key = static_cast<pp::ApiKey>(static_cast<std::int16_t>(data[0]));
  const auto version = static_cast<std::int16_t>((data[1] << 8) | data[2]);
  pp::WireReader r(pp::ByteView(data + 3, size - 3));
  auto correlation = pp::decode_response_header(r, key, version);
  if (!correlation) return 0;
  pp::fuzz::decode_any<false>(pp::AllApis{}, key, version, r);
  return 0;
}
