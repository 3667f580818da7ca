// APIs the codec describes but the front end does not serve (Fetch,
// ListOffsets, SASL): the protocol's own error answer where the
// response has a top-level error code at that version, so the client gets a
// clear "not supported here" instead of a silent close.
#pragma once

#include <cstdint>
#include <optional>

#include "proxy/base/bytes.h"
#include "proxy/protocol/api_key.h"

namespace pp {

// UNSUPPORTED_VERSION in the response's top-level error_code, as a whole
// frame; nullopt when (key, version) is not described or its response has no
// top-level error code (Fetch v4-v6, ListOffsets): then the only honest
// answer is to close.
std::optional<Bytes> answer_unserved_api(ApiKey key, std::int16_t version, std::int32_t correlation_id);

}  // namespace pp
