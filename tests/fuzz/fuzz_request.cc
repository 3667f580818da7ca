// A whole request frame body from a client: header, then the described body.
#include "proxy/protocol/header.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  pp::WireReader r(pp::ByteView(data, size));
  auto header = pp::decode_request_header(r);
  if (!header || !header->flexible_known) return 0;
  pp::fuzz::decode_any<true>(pp::AllApis{}, header->header.api_key, header->header.api_version, r);
  return 0;
}
