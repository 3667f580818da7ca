// Compression codecs of Kafka record sets: the attribute bits 0-2 of a
// RecordBatch (magic 2) or of a legacy wrapper message (magic 0/1). Pure
// functions over byte spans. Decompression is always capped: a peer's
// "decompression bomb" stops at max_output_bytes with kTooLarge instead of
// growing memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "proxy/base/bytes.h"
#include "proxy/protocol/wire_reader.h"

namespace pp {

// Kafka's CompressionType ids. zstd exists from magic 2 / Produce v7 (KIP-110).
enum class CompressionCodec : std::uint8_t { kNone = 0, kGzip = 1, kSnappy = 2, kLz4 = 3, kZstd = 4 };

// "none", "gzip", "snappy", "lz4", "zstd" (the names of compression.type).
std::string_view to_string(CompressionCodec codec);
std::optional<CompressionCodec> parse_compression_codec(std::string_view name);
// From the attribute bits 0-2; nullopt for the unassigned ids 5-7.
std::optional<CompressionCodec> compression_codec_from_id(int id);

// LZ4 frame flavours. Kafka 0.8/0.9 (message magic 0) computed the frame
// descriptor's header checksum (HC) over the frame magic as well as the
// descriptor (KIP-57). kKafkaLegacy reproduces that when writing; when reading
// it ignores the HC byte, exactly as Kafka's broker does for magic 0
// (KafkaLZ4BlockInputStream with ignoreFlagDescriptorChecksum, chosen by
// CompressionType.wrapForInput when messageVersion == 0). We accept these frames
// rather than refuse them (Redpanda's choice) because up-converting the legacy
// clients that still send them is what this proxy is for.
enum class Lz4Framing : std::uint8_t { kStandard, kKafkaLegacy };

struct CompressOptions {
  std::optional<int> level;  // nullopt: the codec's Kafka default
  Lz4Framing lz4_framing = Lz4Framing::kStandard;
};

// Appends the compressed form of `input` to `out`. gzip writes a gzip member;
// snappy writes Kafka's xerial framing (SnappyOutputStream); lz4 writes one LZ4
// frame with 64 KiB independent blocks and no content checksum (Kafka's
// KafkaLZ4BlockOutputStream); zstd writes one frame. kNone copies.
void compress_append(CompressionCodec codec, ByteView input, Bytes& out, const CompressOptions& options = {});
Bytes compress(CompressionCodec codec, ByteView input, const CompressOptions& options = {});

// Decompresses `input`, never holding more than max_output_bytes + 1 bytes of
// output: anything larger is DecodeErrorKind::kTooLarge. Corrupt input is
// kInvalidValue, a stream that ends early kTruncated, bytes after the end of the
// stream kTrailingBytes. Error offsets are positions in `input` where known
// (0 otherwise); the field names the codec. gzip accepts one or more members;
// snappy accepts xerial framing or one raw block; lz4 one frame; zstd one or
// more frames.
Decoded<Bytes> decompress(CompressionCodec codec, ByteView input, std::size_t max_output_bytes,
                          Lz4Framing lz4_framing = Lz4Framing::kStandard);

}  // namespace pp
