#include "proxy/frontend/metadata_handler.h"

#include "proxy/frontend/client_session.h"
#include "proxy/frontend/metadata_answer.h"
#include "proxy/protocol/codec.h"
#include "proxy/protocol/messages/metadata.h"

namespace pp {

void handle_metadata(ClientSession& session, const RequestHeader& header, WireReader& body) {
  auto request = decode_body<MetadataRequest>(body, header.api_version);
  if (!request) {
    session.close_after_pending("malformed Metadata v" + std::to_string(header.api_version) +
                                " request: " + request.error().describe());
    return;
  }
  const MetadataQuery query = metadata_query(*request, header.api_version);
  ResponseSlot slot = session.reserve_response();
  auto shared_request = std::make_shared<const MetadataRequest>(std::move(*request));
  auto answer = [slot, shared_request, version = header.api_version,
                 correlation = header.correlation_id](const std::vector<TopicDescription>& described) {
    auto s = slot.session();
    if (!s) return;  // the client left meanwhile
    const MetadataResponse response = metadata_answer(*shared_request, version, s->context().advertised, described);
    slot.send(encode_response_frame(correlation, version, response));
  };
  if (!query.ask_directory) {
    answer({});
    return;
  }
  session.context().topics.describe(query.topics, query.allow_auto_topic_creation,
                                    [answer](const std::vector<TopicDescription>& described) { answer(described); });
}

}  // namespace pp
