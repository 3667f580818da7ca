#include "proxy/spool/segment_reader.h"

#include "proxy/protocol/wire_reader.h"
#include "proxy/records/crc32c.h"

namespace pp::spool {

SegmentScan SegmentReader::scan(ByteView bytes, const OnEntry& on_entry) const {
  SegmentScan scan;
  scan.header = decode_segment_header(bytes);
  if (scan.header.problem) {
    scan.invalid_bytes = bytes.size();
    scan.damage = std::string(to_string(*scan.header.problem));
    return scan;
  }
  std::size_t at = kSegmentHeaderBytes;
  EntryId last = min_id_;
  while (at < bytes.size()) {
    const ByteView rest = bytes.subspan(at);
    if (rest.size() < kEntryHeaderBytes) {
      scan.damage = "a partial entry header at offset " + std::to_string(at);
      break;
    }
    WireReader r(rest);
    const std::uint32_t size = *r.read_uint32();
    const std::uint32_t crc = *r.read_uint32();
    if (size < kEntryHeaderBytes - kEntryFrameBytes || size > kMaxEntryBytes) {
      scan.damage = "an impossible entry size " + std::to_string(size) + " at offset " + std::to_string(at);
      break;
    }
    if (size > r.remaining()) {
      scan.damage = "an entry cut short at offset " + std::to_string(at);
      break;
    }
    const ByteView payload = rest.subspan(kEntryFrameBytes, size);
    if (crc32c(payload) != crc) {
      scan.damage = "a checksum mismatch at offset " + std::to_string(at);
      break;
    }
    auto entry = decode_entry_payload(payload);
    if (!entry) {
      scan.damage = "an undecodable entry at offset " + std::to_string(at) + ": " + entry.error().describe();
      break;
    }
    if (entry->id <= last) {
      scan.damage = "entry id " + std::to_string(entry->id) + " not above " + std::to_string(last) + " at offset " +
                    std::to_string(at);
      break;
    }
    last = entry->id;
    const std::size_t whole = kEntryFrameBytes + size;
    if (on_entry) on_entry(*entry, at, whole);
    ++scan.entries;
    at += whole;
  }
  scan.valid_bytes = at;
  scan.invalid_bytes = bytes.size() - at;
  scan.last_id = last;
  return scan;
}

}  // namespace pp::spool
