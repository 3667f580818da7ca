#include "proxy/frontend/request_dispatch.h"

#include "proxy/frontend/api_versions_answer.h"
#include "proxy/frontend/client_session.h"
#include "proxy/frontend/init_producer_id_handler.h"
#include "proxy/frontend/log.h"
#include "proxy/frontend/metadata_handler.h"
#include "proxy/frontend/produce_handler.h"
#include "proxy/frontend/sasl_handler.h"
#include "proxy/frontend/unserved_api_answer.h"
#include "proxy/protocol/api_registry.h"
#include "proxy/protocol/codec.h"
#include "proxy/protocol/header.h"
#include "proxy/protocol/messages/api_versions.h"

namespace pp {
namespace {

void count_request(FrontendContext& ctx, const RequestHeader& h) {
  const ApiSpec* spec = find_api(h.api_key);
  const bool described = spec && spec->versions.contains(h.api_version);
  // Only described pairs get their own counter, so a peer can't grow the map.
  const auto key = described ? std::pair{static_cast<std::int16_t>(h.api_key), h.api_version}
                             : std::pair<std::int16_t, std::int16_t>{-1, -1};
  ++ctx.counters.requests_total[key];
  ctx.observer.on_request(h.api_key, h.api_version);
}

std::string api_label(const RequestHeader& h) {
  const std::string_view name = api_name(h.api_key);
  if (name == "Unknown")
    return "API key " + std::to_string(static_cast<int>(h.api_key)) + " v" + std::to_string(h.api_version);
  return std::string(name) + " v" + std::to_string(h.api_version);
}

void answer_unserved(ClientSession& session, const RequestHeader& h) {
  if (auto answer = answer_unserved_api(h.api_key, h.api_version, h.correlation_id)) {
    frontend::log().warn("{} sent {}, which produce-proxy does not serve: answered UNSUPPORTED_VERSION",
                         session.describe(), api_label(h));
    session.reserve_response().send(std::move(*answer));
    return;
  }
  const bool known = find_api(h.api_key) != nullptr;
  session.close_after_pending(known ? api_label(h) + " is not served and has no error answer we can encode"
                                    : "unknown " + api_label(h));
}

}  // namespace

void RequestDispatch::route(ClientSession& session, std::shared_ptr<const FrameBuffer> frame) {
  // After SaslHandshake v0 the next frames are the client's SASL tokens,
  // with no Kafka header (KIP-43).
  if (session.auth().expects_raw_token()) {
    handle_raw_sasl_token(session, *frame);
    return;
  }
  WireReader r(*frame);
  auto decoded = decode_request_header(r);
  if (!decoded) {
    session.close_after_pending("malformed request header: " + decoded.error().describe());
    return;
  }
  const RequestHeader& h = decoded->header;
  session.set_client_id(h.client_id);
  count_request(session.context(), h);
  if (!admit_request(session, h)) return;
  session.context().observer.on_principal_request(session.principal().name());

  const auto served = served_versions(h.api_key);
  if (h.api_key == ApiKey::kApiVersions) {
    // Every version gets an answer: out of range is UNSUPPORTED_VERSION in the
    // v0 layout (KIP-511). The v3+ body names the client software, for the
    // client_produce_requests_total metric; a body that does not decode is
    // ignored, as the answer does not depend on it.
    if (h.api_version >= 3 && served && served->contains(h.api_version)) {
      if (auto body = decode_body<ApiVersionsRequest>(r, h.api_version)) {
        session.set_client_software(body->client_software_name, body->client_software_version);
      }
    }
    session.reserve_response().send(
        answer_api_versions(h.correlation_id, h.api_version, session.context().topics.offers_topic_ids()));
    return;
  }
  if (!served || !served->contains(h.api_version)) {
    answer_unserved(session, h);
    return;
  }
  switch (h.api_key) {
    case ApiKey::kMetadata:
      handle_metadata(session, h, r);
      return;
    case ApiKey::kProduce:
      handle_produce(session, h, std::move(frame), r);
      return;
    case ApiKey::kInitProducerId:
      handle_init_producer_id(session, h, r);
      return;
    case ApiKey::kSaslHandshake:
      handle_sasl_handshake(session, h, r);
      return;
    case ApiKey::kSaslAuthenticate:
      handle_sasl_authenticate(session, h, r);
      return;
    default:
      answer_unserved(session, h);
      return;
  }
}

}  // namespace pp
