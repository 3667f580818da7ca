// A whole request frame body from a client: header, then the described body.
// A Produce v13+ request, which names topics by id (KIP-516), must also carry
// no names once decoded, whatever the bytes: the front end finds its topics
// by id alone.
#include "proxy/protocol/header.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  pp::WireReader r(pp::ByteView(data, size));
  auto header = pp::decode_request_header(r);
  if (!header || !header->flexible_known) return 0;
  const pp::RequestHeader& h = header->header;
  if (h.api_key == pp::ApiKey::kProduce && h.api_version >= pp::kProduceTopicIdVersion) {
    pp::WireReader copy = r;
    if (auto produce = pp::decode_body<pp::ProduceRequest>(copy, h.api_version)) {
      for (const pp::ProduceTopicData& t : produce->topic_data) {
        if (!t.name.empty()) __builtin_trap();
      }
    }
  }
  pp::fuzz::decode_any<true>(pp::AllApis{}, h.api_key, h.api_version, r);
  return 0;
}
