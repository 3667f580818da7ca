#include "proxy/frontend/init_producer_id_handler.h"

#include "proxy/frontend/client_session.h"
#include "proxy/frontend/log.h"
#include "proxy/protocol/codec.h"
#include "proxy/protocol/messages/init_producer_id.h"

namespace pp {
namespace {

InitProducerIdResponse refused(ErrorCode error) {
  InitProducerIdResponse response;
  response.error_code = error;
  response.producer_id = kNoProducerId;
  response.producer_epoch = kNoProducerEpoch;
  return response;
}

InitProducerIdResponse answer(ClientSession& session, const InitProducerIdRequest& request) {
  if (request.transactional_id && request.transactional_id->empty()) {
    // What Kafka's coordinator answers an empty id (handleInitProducerId).
    frontend::log().warn("{} sent InitProducerId with an empty transactional_id: answered INVALID_REQUEST",
                         session.describe());
    return refused(ErrorCode::kInvalidRequest);
  }
  if (request.transactional_id) {
    frontend::log().warn(
        "{} asked for transactional_id '{}': produce-proxy runs no transactions, answered "
        "TRANSACTIONAL_ID_AUTHORIZATION_FAILED (use enable.idempotence without transactional.id)",
        session.describe(), *request.transactional_id);
    return refused(ErrorCode::kTransactionalIdAuthorizationFailed);
  }
  FrontendContext& ctx = session.context();
  if (!session.access().may_idempotent_write()) {
    // Kafka's answer without IDEMPOTENT_WRITE on the cluster (KIP-679: WRITE
    // on any topic grants it; AccessRules).
    ctx.observer.on_authorization_denied(session.principal().name(), "idempotent_write");
    frontend::log().warn("{}: {} may not use InitProducerId: answered CLUSTER_AUTHORIZATION_FAILED", session.describe(),
                         session.principal().describe());
    return refused(ErrorCode::kClusterAuthorizationFailed);
  }
  const InitProducerIdAnswer a =
      ctx.client_producers.init_producer_id(request.producer_id.value, request.producer_epoch.value, uv_now(ctx.loop));
  ctx.charge_client_producers();
  if (a.error != ErrorCode::kNone) {
    frontend::log().warn("{}: InitProducerId answered {} ({} client producers, all busy)", session.describe(),
                         error_name(a.error), ctx.client_producers.producers());
    return refused(a.error);
  }
  frontend::log().info("{}: {} producer id {} epoch {}", session.describe(),
                       a.bumped ? "bumped the epoch of" : "handed out", a.producer_id, a.epoch);
  InitProducerIdResponse response;
  response.producer_id = ProducerId{a.producer_id};
  response.producer_epoch = ProducerEpoch{a.epoch};
  return response;
}

}  // namespace

void handle_init_producer_id(ClientSession& session, const RequestHeader& header, WireReader& body) {
  auto request = decode_body<InitProducerIdRequest>(body, header.api_version);
  if (!request) {
    session.close_after_pending("malformed InitProducerId v" + std::to_string(header.api_version) +
                                " request: " + request.error().describe());
    return;
  }
  const InitProducerIdResponse response = answer(session, *request);
  session.reserve_response().send(encode_response_frame(header.correlation_id, header.api_version, response));
}

}  // namespace pp
