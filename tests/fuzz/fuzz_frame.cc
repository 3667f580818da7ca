// The stream a client sends, cut into arbitrary reads: the frame reader must
// reassemble, bound and reject without crashing, whatever the chunking.
#include "proxy/protocol/frame.h"
#include "proxy/protocol/header.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  pp::FrameReader reader(64 * 1024);
  const std::size_t chunk = 1 + data[0] % 17;
  pp::ByteView rest(data + 1, size - 1);
  std::size_t total_frame_bytes = 0;
  while (!rest.empty()) {
    const auto piece = rest.first(std::min(chunk, rest.size()));
    rest = rest.subspan(piece.size());
    if (!reader.append(piece)) return 0;
    while (auto frame = reader.pop()) {
      if (frame->size() > 64 * 1024) __builtin_trap();
      total_frame_bytes += frame->size() + 4;
      pp::WireReader r(*frame);
      auto header = pp::decode_request_header(r);
      if (header && header->flexible_known) {
        pp::fuzz::decode_any<true>(pp::AllApis{}, header->header.api_key, header->header.api_version, r);
      }
    }
  }
  if (total_frame_bytes + reader.buffered_bytes() > size) __builtin_trap();
  return 0;
}
