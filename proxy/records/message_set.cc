// Reading legacy MessageSets (magic 0/1). Rules follow LegacyRecord
// .ensureValid, ByteBufferLogInputStream.nextBatch and
// AbstractLegacyRecordBatch.DeepRecordsIterator.
#include "proxy/records/message_set.h"

#include <algorithm>
#include <string>

#include "proxy/records/crc32.h"

namespace pp {
namespace {

namespace layout = legacy_layout;

struct Message {
  std::size_t at = 0;  // start of the log entry, in reported offsets
  std::int64_t offset = 0;
  std::int8_t magic = 0;
  std::int8_t attributes = 0;
  std::optional<std::int64_t> timestamp;
  std::optional<ByteView> key;
  std::optional<ByteView> value;
  std::size_t value_at = 0;
};

std::unexpected<DecodeError> fail_at(DecodeErrorKind kind, std::size_t offset, std::string field) {
  return std::unexpected(DecodeError{kind, offset, std::move(field)});
}

std::uint32_t be32(const std::uint8_t* p) {
  return static_cast<std::uint32_t>(p[0]) << 24 | static_cast<std::uint32_t>(p[1]) << 16 |
         static_cast<std::uint32_t>(p[2]) << 8 | static_cast<std::uint32_t>(p[3]);
}

// int32-length nullable bytes (Kafka BYTES): -1 is null.
Decoded<std::optional<ByteView>> read_bytes(WireReader& r, const char* field) {
  const std::size_t at = r.offset();
  auto length = r.read_length(/*compact=*/false, /*wide=*/true);
  if (!length) {
    DecodeError e = std::move(length).error();
    e.offset = at;
    e.within(field);
    return std::unexpected(std::move(e));
  }
  if (!*length) return std::optional<ByteView>{};
  return std::optional<ByteView>{*r.read_span(**length)};
}

// One message (after offset and size): `message` holds exactly MessageSize
// bytes; `base` is the reported offset of its first byte.
Decoded<Message> parse_message(std::int64_t offset, ByteView message, std::size_t base) {
  Message m;
  m.offset = offset;
  m.magic = static_cast<std::int8_t>(message[4]);
  if (m.magic != 0 && m.magic != 1) return fail_at(DecodeErrorKind::kUnsupported, base + 4, "magic");
  if (m.magic == 1 && message.size() < layout::kMessageOverheadV1) {
    return fail_at(DecodeErrorKind::kInvalidValue, base - 4, "message_size");
  }
  if (crc32_ieee(message.subspan(4)) != be32(message.data())) {
    return fail_at(DecodeErrorKind::kBadChecksum, base, "crc");
  }
  WireReader r(message.subspan(5), base + 5);
  m.attributes = *r.read_int8();
  if (m.magic == 1) m.timestamp = *r.read_int64();
  auto key = read_bytes(r, "key");
  if (!key) return std::unexpected(std::move(key).error());
  m.key = *key;
  m.value_at = r.offset();
  auto value = read_bytes(r, "value");
  if (!value) return std::unexpected(std::move(value).error());
  m.value = *value;
  if (!r.empty()) return fail_at(DecodeErrorKind::kTrailingBytes, r.offset(), "value");
  return m;
}

// What one message costs in memory while decoding: its Message here and the
// LegacyRecordView it becomes (a wrapper's inner messages are charged again).
constexpr std::size_t kMessageMemory = sizeof(Message) + sizeof(LegacyRecordView);

// How many entries `data` holds if they are all the size of the first: a
// client's set is usually uniform, so `messages` is sized once instead of
// grown by doubling. Counting them exactly hopped from size field to size
// field, one dependent cache miss per message before any was read (a visible
// cost on the legacy path; docs/BENCHMARKS.md); this reads one field.
std::size_t estimate_entries(ByteView data) {
  if (data.size() < layout::kLogOverhead) return 0;
  const std::size_t first = be32(data.data() + layout::kMessageSize);
  return data.size() / (layout::kLogOverhead + std::max(first, layout::kMessageOverheadV0));
}

// Splits `data` into messages. Returns the offset of a trailing partial entry
// in `partial_at` instead of failing when `allow_partial`.
Decoded<void> parse_entries(ByteView data, std::size_t base, bool allow_partial, std::vector<Message>& out,
                            std::optional<std::size_t>& partial_at, DecodeBudget* budget) {
  // Never more than the budget would let through (they are charged below).
  std::size_t expected = estimate_entries(data);
  if (budget) expected = std::min(expected, budget->left() / kMessageMemory);
  out.reserve(out.size() + expected);
  WireReader r(data, base);
  while (!r.empty()) {
    const std::size_t at = r.offset();
    // Field names are built only on the error path.
    const auto index = [&out] { return "[" + std::to_string(out.size()) + "]"; };
    bool partial = r.remaining() < layout::kLogOverhead;
    std::int32_t size = 0;
    std::int64_t offset = 0;
    if (!partial) {
      offset = *r.read_int64();
      size = *r.read_int32();
      if (size < 0)
        return fail_at(DecodeErrorKind::kNegativeLength, at + layout::kMessageSize, index() + ".message_size");
      // "Record size is less than the minimum record overhead (14)".
      if (static_cast<std::size_t>(size) < layout::kMessageOverheadV0) {
        return fail_at(DecodeErrorKind::kInvalidValue, at + layout::kMessageSize, index() + ".message_size");
      }
      partial = static_cast<std::size_t>(size) > r.remaining();
    }
    if (partial) {
      if (!allow_partial) return fail_at(DecodeErrorKind::kTruncated, at, index());
      partial_at = at;
      return {};
    }
    const ByteView message = *r.read_span(static_cast<std::size_t>(size));
    auto parsed = parse_message(offset, message, at + layout::kLogOverhead);
    if (!parsed) {
      DecodeError e = std::move(parsed).error();
      e.within(index());
      return std::unexpected(std::move(e));
    }
    parsed->at = at;
    if (budget && !budget->take(kMessageMemory)) return fail_at(DecodeErrorKind::kOverBudget, at, index());
    out.push_back(*parsed);
  }
  return {};
}

}  // namespace

// Friend of MessageSetView: fills it while unwrapping.
class MessageSetDecoder {
 public:
  explicit MessageSetDecoder(const MessageSetReadOptions& options)
      : budget_(options.max_decompressed_bytes), options_(options) {}

  Decoded<MessageSetView> run(ByteView set) {
    std::vector<Message> messages;
    const bool allow_partial = options_.trailing_partial == TrailingPartial::kIgnore;
    if (auto ok = parse_entries(set, 0, allow_partial, messages, view_.partial_offset_, options_.budget); !ok) {
      DecodeError e = ok.error();
      e.within("messages");
      return std::unexpected(std::move(e));
    }
    view_.records_.reserve(messages.size());
    for (std::size_t i = 0; i < messages.size(); ++i) {
      if (auto ok = add(messages[i]); !ok) {
        DecodeError e = ok.error();
        e.within("[" + std::to_string(i) + "]").within("messages");
        return std::unexpected(std::move(e));
      }
    }
    return std::move(view_);
  }

 private:
  static LegacyRecordView plain(const Message& m) {
    LegacyRecordView r;
    r.offset = m.offset;
    r.magic = m.magic;
    r.attributes = m.attributes;
    r.key = m.key;
    r.value = m.value;
    if (m.magic == 1) {
      r.timestamp = m.timestamp;
      r.timestamp_type = (m.attributes & legacy_attributes::kTimestampType) ? TimestampType::kLogAppendTime
                                                                            : TimestampType::kCreateTime;
    }
    return r;
  }

  Decoded<void> add(const Message& m) {
    const int codec_id = m.attributes & legacy_attributes::kCodecMask;
    // zstd (4) exists only from magic 2 (KIP-110); 5-7 are unassigned.
    if (codec_id > 3)
      return fail_at(DecodeErrorKind::kUnsupported, m.at + layout::kAttributes, "attributes.compression");
    if (codec_id == 0) {
      view_.records_.push_back(plain(m));
      return {};
    }
    return unwrap(m, static_cast<CompressionCodec>(codec_id));
  }

  // Decompresses a wrapper's value into a buffer the view keeps. The smaller
  // cap bounds the inflation; hitting the memory budget's is kOverBudget.
  Decoded<ByteView> inflate(const Message& wrapper, CompressionCodec codec) {
    const Lz4Framing framing = wrapper.magic == 0 ? Lz4Framing::kKafkaLegacy : Lz4Framing::kStandard;
    const bool budget_limits = options_.budget && options_.budget->left() < budget_;
    auto plain_bytes = decompress(codec, *wrapper.value, budget_limits ? options_.budget->left() : budget_, framing);
    if (!plain_bytes) {
      DecodeError e = std::move(plain_bytes).error();
      if (budget_limits && e.kind == DecodeErrorKind::kTooLarge) e.kind = DecodeErrorKind::kOverBudget;
      e.offset += wrapper.value_at + 4;
      e.within("value");
      return std::unexpected(std::move(e));
    }
    budget_ -= plain_bytes->size();
    if (options_.budget) (void)options_.budget->take(plain_bytes->size());  // fits: it was the cap
    view_.decompressed_.push_back(std::move(*plain_bytes));
    return ByteView(view_.decompressed_.back());
  }

  Decoded<void> unwrap(const Message& wrapper, CompressionCodec codec) {
    if (!wrapper.value) return fail_at(DecodeErrorKind::kInvalidValue, wrapper.value_at, "value");
    auto inflated = inflate(wrapper, codec);
    if (!inflated) return std::unexpected(std::move(inflated).error());
    const ByteView inner_bytes = *inflated;

    std::vector<Message> inner;
    std::optional<std::size_t> unused;
    if (auto ok = parse_entries(inner_bytes, 0, /*allow_partial=*/false, inner, unused, options_.budget); !ok) {
      DecodeError e = ok.error();
      e.within("decompressed");
      return std::unexpected(std::move(e));
    }
    if (inner.empty()) return fail_at(DecodeErrorKind::kInvalidValue, wrapper.value_at, "value");

    // Magic-1 wrappers carry relative inner offsets (KIP-31); the wrapper's own
    // offset is the last inner one's absolute offset, or 0 from some
    // librdkafka versions (then the relative offsets are used as they are).
    std::int64_t base = 0;
    const bool relative = wrapper.magic == 1;
    if (relative && wrapper.offset != 0) {
      if (wrapper.offset < inner.back().offset || __builtin_sub_overflow(wrapper.offset, inner.back().offset, &base)) {
        return fail_at(DecodeErrorKind::kInvalidValue, wrapper.at + layout::kOffset, "offset");
      }
    }
    for (std::size_t j = 0; j < inner.size(); ++j) {
      const Message& m = inner[j];
      const auto where = [j] { return "decompressed[" + std::to_string(j) + "]"; };
      // One level only: "Inner messages must not be compressed".
      if ((m.attributes & legacy_attributes::kCodecMask) != 0) {
        return fail_at(DecodeErrorKind::kInvalidValue, m.at + layout::kAttributes, where() + ".attributes.compression");
      }
      LegacyRecordView r = plain(m);
      r.wrapper_codec = codec;
      if (relative && __builtin_add_overflow(base, m.offset, &r.offset)) {
        return fail_at(DecodeErrorKind::kInvalidValue, m.at + layout::kOffset, where() + ".offset");
      }
      // Inner magic-1 messages take the wrapper's timestamp type, and its
      // timestamp under LogAppendTime (LegacyRecord's wrapper timestamp).
      if (m.magic == 1 && wrapper.magic == 1) {
        const LegacyRecordView outer = plain(wrapper);
        r.timestamp_type = outer.timestamp_type;
        if (outer.timestamp_type == TimestampType::kLogAppendTime) r.timestamp = outer.timestamp;
      }
      view_.records_.push_back(r);
    }
    return {};
  }

  MessageSetView view_;
  std::size_t budget_;
  MessageSetReadOptions options_;
};

Decoded<MessageSetView> decode_message_set(ByteView set, const MessageSetReadOptions& options) {
  return MessageSetDecoder(options).run(set);
}

}  // namespace pp
