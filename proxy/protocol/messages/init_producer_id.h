// InitProducerId (API key 22), v0-v5. Field facts from Kafka's
// InitProducerIdRequest.json and InitProducerIdResponse.json.
//
// v0 (KIP-98), v2 flexible (KIP-482), v3 the request carries the current
// producer id and epoch so a producer can resume after an epoch error
// (KIP-360), v4 may answer PRODUCER_FENCED (KIP-588), v5 TRANSACTION_ABORTABLE
// (KIP-890). Not described: v6 enable_2pc / keep_prepared_txn (KIP-939).
//
// For an idempotent-only producer (null transactional_id) the broker ignores
// the v3 fields and always hands out a fresh producer id at epoch 0; epoch
// bumps are the client's business (docs/design/PIPELINE.md section A).
#pragma once

#include <optional>
#include <string>

#include "proxy/protocol/api_key.h"
#include "proxy/protocol/error_code.h"
#include "proxy/protocol/schema.h"

namespace pp {

struct InitProducerIdRequest {
  static constexpr ApiKey kApiKey = ApiKey::kInitProducerId;
  static constexpr Versions kVersions{0, 5};
  static constexpr std::int16_t kFlexibleSince = 2;

  // Kafka's JSON gives no default, so the generated one, "", is kept. An
  // idempotent producer must set nullopt itself: the coordinator answers an
  // empty id with INVALID_REQUEST (TransactionCoordinator.handleInitProducerId).
  std::optional<std::string> transactional_id = std::string();
  std::int32_t transaction_timeout_ms = 0;
  ProducerId producer_id = kNoProducerId;           // v3+ (KIP-360)
  ProducerEpoch producer_epoch = kNoProducerEpoch;  // v3+ (KIP-360)
  RawTaggedFields unknown_tags;

  bool operator==(const InitProducerIdRequest&) const = default;
  static constexpr auto fields() {
    using S = InitProducerIdRequest;
    return std::tuple{
        field("transactional_id", &S::transactional_id, kAll).nullable_in(kAll),
        field("transaction_timeout_ms", &S::transaction_timeout_ms, kAll),
        field("producer_id", &S::producer_id, since(3)),
        field("producer_epoch", &S::producer_epoch, since(3)),
    };
  }
};

struct InitProducerIdResponse {
  static constexpr ApiKey kApiKey = ApiKey::kInitProducerId;
  static constexpr Versions kVersions{0, 5};
  static constexpr std::int16_t kFlexibleSince = 2;

  std::int32_t throttle_time_ms = 0;
  ErrorCode error_code = ErrorCode::kNone;
  ProducerId producer_id = kNoProducerId;
  ProducerEpoch producer_epoch{0};  // no JSON default: Kafka's generated 0
  RawTaggedFields unknown_tags;

  bool operator==(const InitProducerIdResponse&) const = default;
  static constexpr auto fields() {
    using S = InitProducerIdResponse;
    return std::tuple{
        field("throttle_time_ms", &S::throttle_time_ms, kAll),
        field("error_code", &S::error_code, kAll),
        field("producer_id", &S::producer_id, kAll),
        field("producer_epoch", &S::producer_epoch, kAll),
    };
  }
};

}  // namespace pp
