#include "proxy/frontend/unserved_api_answer.h"

#include <type_traits>

#include "proxy/protocol/codec.h"
#include "proxy/protocol/messages/all.h"

namespace pp {
namespace {

// Sets the top-level, untagged `error_code` of `response` if it exists at
// `version`; returns whether it did.
template <class Response>
bool set_top_level_error(Response& response, std::int16_t version, ErrorCode error) {
  bool set = false;
  std::apply(
      [&](const auto&... f) {
        (([&] {
           using Member = std::remove_cvref_t<decltype(response.*(f.member))>;
           if constexpr (std::is_same_v<Member, ErrorCode>) {
             if (!set && f.name == "error_code" && f.versions.contains(version) && !f.is_tagged_in(version)) {
               response.*(f.member) = error;
               set = true;
             }
           }
         }()),
         ...);
      },
      Response::fields());
  return set;
}

template <class... Pairs>
std::optional<Bytes> answer_in(ApiList<Pairs...>, ApiKey key, std::int16_t version, std::int32_t correlation_id) {
  std::optional<Bytes> out;
  (([&] {
     using Response = typename Pairs::ResponseType;
     if (out || Response::kApiKey != key || !Response::kVersions.contains(version)) return;
     Response response{};
     if constexpr (std::is_same_v<Response, InitProducerIdResponse>) {
       // What a broker sends with an InitProducerId error: no id, no epoch.
       response.producer_id = kNoProducerId;
       response.producer_epoch = kNoProducerEpoch;
     }
     if (!set_top_level_error(response, version, ErrorCode::kUnsupportedVersion)) return;
     out = encode_response_frame(correlation_id, version, response);
   }()),
   ...);
  return out;
}

}  // namespace

std::optional<Bytes> answer_unserved_api(ApiKey key, std::int16_t version, std::int32_t correlation_id) {
  return answer_in(AllApis{}, key, version, correlation_id);
}

}  // namespace pp
