// The spool's on-disk format, version 1 (docs/design/SPOOL.md, "On-disk
// format"): the segment file header and the framing and bodies of its
// entries. Pure functions over bytes, no files: the writer encodes with them,
// the segment reader decodes with them, the fuzz target drives the decoder.
// Integers are big-endian, as on Kafka's wire.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "proxy/base/bytes.h"
#include "proxy/protocol/wire_reader.h"
#include "proxy/spool/spool_entry.h"

namespace pp::spool {

// The version this build writes and the newest it reads. A segment with a
// higher version is refused whole: its layout is unknown.
inline constexpr std::uint32_t kFormatVersion = 1;

// "ppspool\n": the first 8 bytes of every segment file.
inline constexpr std::string_view kSegmentMagic{"ppspool\n", 8};

// Segment header: magic @0, version @8 (u32), header size @12 (u32, 36),
// segment id @16 (u64), created ms @24 (i64), CRC-32C of bytes 0..31 @32.
// The magic, version and header size never move, and every version's header
// ends with a CRC-32C of the bytes before it, so any later version is
// recognised as one and told apart from a damaged version field.
inline constexpr std::size_t kSegmentHeaderBytes = 36;

// Entry framing: size @0 (u32, bytes from @8 to the end), CRC-32C of those
// bytes @4, kind @8 (u8), entry id @9 (u64), time ms @17 (i64), body @25.
inline constexpr std::size_t kEntryFrameBytes = 8;
inline constexpr std::size_t kEntryHeaderBytes = 25;
// The largest entry a reader accepts: a record batch of up to 64 MiB (the
// proxy's own cap on one decoded request) plus its framing.
inline constexpr std::size_t kMaxEntryBytes = (64U << 20) + 4096;

enum class EntryKind : std::uint8_t {
  kRecords = 1,
  kIdentity = 2,
  kSequenced = 3,
  kResolved = 4,
  kClusterView = 5,
  kClientProducers = 6,
};
inline constexpr std::uint8_t kLastEntryKind = 6;

struct SegmentHeader {
  std::uint32_t version = kFormatVersion;
  std::uint64_t segment_id = 0;
  std::int64_t created_ms = 0;
};

// Appends the 36-byte header to `out`.
void encode_segment_header(const SegmentHeader& header, Bytes& out);

enum class HeaderProblem : std::uint8_t {
  kTruncated,     // fewer than 36 bytes
  kBadMagic,      // not a spool segment
  kNewerVersion,  // written by a newer format (its header verifies): refused, never guessed at
  kBadVersion,    // version 0
  kBadChecksum,   // the header's CRC does not match
};
std::string_view to_string(HeaderProblem problem);

struct HeaderResult {
  SegmentHeader header;
  std::optional<HeaderProblem> problem;
};
HeaderResult decode_segment_header(ByteView bytes);

// Appends one framed entry (size, CRC, kind, id, time, body) to `out`;
// returns its encoded size. Records entries copy their batch.
std::size_t encode_entry(const Entry& entry, Bytes& out);
// The same without its CRC (left 0): for a writer that patches the id at
// commit and checksums the entry once, with seal_entry, off the loop.
std::size_t encode_entry_unsealed(const Entry& entry, Bytes& out);
// Writes the CRC-32C of the framed entry at `entry` (`size` bytes, as
// encode_entry_unsealed returned) into its frame.
void seal_entry(std::uint8_t* entry, std::size_t size);
// The encoded size encode_entry would append, without encoding.
std::size_t encoded_size(const EntryBody& body);

// Decodes one entry's kind, id, time and body from `payload` (the bytes the
// frame's size covers, CRC already checked). Every length is checked against
// the bytes left; a body must be consumed exactly; references must point to
// earlier entries. RecordsEntry::batch borrows from `payload`.
Decoded<Entry> decode_entry_payload(ByteView payload);

std::string_view to_string(EntryKind kind);

}  // namespace pp::spool
