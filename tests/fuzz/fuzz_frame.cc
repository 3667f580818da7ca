// The stream a client sends, cut into arbitrary reads: the frame reader must
// reassemble, bound and reject without crashing, whatever the chunking. A
// second reader takes the same reads into its frames' tails where it can
// (writable_tail()/commit(), as the client session does) and must give back
// the very same frames.
#include "proxy/protocol/frame.h"
#include "proxy/protocol/header.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

// One read of `piece` into `reader`: into the partial frame's tail while
// there is one, after scribbling over all of it (a short read may leave
// garbage there), and the rest through append().
bool read_via_tail(pp::FrameReader& reader, pp::ByteView piece) {
  while (!piece.empty()) {
    const std::span<std::uint8_t> tail = reader.writable_tail();
    if (tail.empty()) return static_cast<bool>(reader.append(piece));
    const std::size_t n = std::min(tail.size(), piece.size());
    std::fill(tail.begin(), tail.end(), std::uint8_t{0xA5});
    std::copy_n(piece.begin(), n, tail.begin());
    reader.commit(n);
    piece = piece.subspan(n);
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  pp::FrameReader reader(64 * 1024);
  pp::FrameReader tail_reader(64 * 1024);
  const std::size_t chunk = 1 + data[0] % 17;
  pp::ByteView rest(data + 1, size - 1);
  std::size_t total_frame_bytes = 0;
  while (!rest.empty()) {
    const auto piece = rest.first(std::min(chunk, rest.size()));
    rest = rest.subspan(piece.size());
    const bool appended = static_cast<bool>(reader.append(piece));
    if (read_via_tail(tail_reader, piece) != appended) __builtin_trap();
    if (!appended) return 0;
    while (auto frame = reader.pop()) {
      auto same = tail_reader.pop();
      if (!same || !pp::bytes_equal(*frame, *same)) __builtin_trap();
      if (frame->size() > 64 * 1024) __builtin_trap();
      total_frame_bytes += frame->size() + 4;
      pp::WireReader r(*frame);
      auto header = pp::decode_request_header(r);
      if (header && header->flexible_known) {
        pp::fuzz::decode_any<true>(pp::AllApis{}, header->header.api_key, header->header.api_version, r);
      }
    }
    if (tail_reader.ready_frames() != 0 || tail_reader.buffered_bytes() != reader.buffered_bytes()) __builtin_trap();
  }
  if (total_frame_bytes + reader.buffered_bytes() > size) __builtin_trap();
  return 0;
}
