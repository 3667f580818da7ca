// Shared by the protocol fuzz targets: decode a body of any described API.
#pragma once

#include "proxy/protocol/messages/all.h"

namespace pp::fuzz {

template <bool kRequest, class... Pairs>
void decode_any(ApiList<Pairs...>, ApiKey key, std::int16_t version, WireReader& r) {
  (([&] {
     using M = std::conditional_t<kRequest, typename Pairs::RequestType, typename Pairs::ResponseType>;
     if (M::kApiKey != key) return;
     WireReader copy = r;
     auto decoded = decode_body<M>(copy, version);
     if (decoded) {
       // What decodes must re-encode and decode to the same value.
       const Bytes again = encode_body(*decoded, version);
       WireReader second(again);
       auto redecoded = decode_body<M>(second, version);
       if (!redecoded || !(*redecoded == *decoded) || !second.empty()) __builtin_trap();
     }
   }()),
   ...);
}

}  // namespace pp::fuzz
