// Every described (message, version), request and response: encode a fully
// populated value, decode it whole, byte by byte (every truncation must fail
// cleanly), and with trailing garbage (the decoder must stop at the end).
#include <gtest/gtest.h>

#include "proxy/protocol/messages/all.h"
#include "tests/support/schema_values.h"

namespace pp {
namespace {

template <Message M>
void check_round_trip(std::int16_t version, std::uint32_t seed) {
  SCOPED_TRACE(std::string(api_name(M::kApiKey)) + " v" + std::to_string(version) + " seed " + std::to_string(seed));
  M value{};
  testing::ValueFiller(seed).fill(value, false);
  const Bytes encoded = encode_body(value, version);

  M expected = value;
  testing::normalize(expected, false, context_for<M>(version));

  WireReader whole(encoded);
  auto decoded = decode_body<M>(whole, version);
  ASSERT_TRUE(decoded.has_value()) << decoded.error().describe();
  EXPECT_TRUE(whole.empty());
  EXPECT_TRUE(*decoded == expected);
  EXPECT_EQ(encode_body(*decoded, version), encoded) << "re-encoding is not byte-identical";

  for (std::size_t cut = 0; cut < encoded.size(); ++cut) {
    WireReader prefix(ByteView(encoded).first(cut));
    auto partial = decode_body<M>(prefix, version);
    ASSERT_FALSE(partial.has_value()) << "a " << cut << "-byte prefix decoded";
    EXPECT_LE(partial.error().offset, cut);
  }

  Bytes garbage = encoded;
  for (int i = 0; i < 13; ++i) garbage.push_back(static_cast<std::uint8_t>(0xA5 ^ i));
  WireReader longer(garbage);
  auto with_tail = decode_body<M>(longer, version);
  ASSERT_TRUE(with_tail.has_value()) << with_tail.error().describe();
  EXPECT_EQ(longer.position(), encoded.size());
}

template <class Request, class Response>
void check_api(ApiPair<Request, Response>) {
  for (std::int16_t v = Request::kVersions.min; v <= Request::kVersions.max; ++v) {
    for (std::uint32_t seed = 1; seed <= 4; ++seed) {
      check_round_trip<Request>(v, seed);
      check_round_trip<Response>(v, seed);
    }
  }
}

template <class... Pairs>
void check_all(ApiList<Pairs...>) {
  (check_api(Pairs{}), ...);
}

TEST(SchemaRoundTrip, EveryDescribedMessageAndVersion) {
  check_all(AllApis{});
}

TEST(SchemaRoundTrip, UnsupportedVersionIsAnError) {
  Bytes empty;
  WireReader r(empty);
  auto res = decode_body<ProduceRequest>(r, 15);
  ASSERT_FALSE(res.has_value());
  EXPECT_EQ(res.error().kind, DecodeErrorKind::kUnsupported);
}

}  // namespace
}  // namespace pp
