#include "proxy/frontend/metadata_handler.h"

#include <string>
#include <vector>

#include "proxy/frontend/client_session.h"
#include "proxy/frontend/metadata_answer.h"
#include "proxy/protocol/codec.h"
#include "proxy/protocol/messages/metadata.h"

namespace pp {
namespace {

// DESCRIBE (AccessRules): as Kafka's broker answers Metadata, a listing of
// every topic leaves out those the principal may not describe, and a topic
// it names is answered TOPIC_AUTHORIZATION_FAILED, with no partitions and
// no id, whether it exists or not. Such names are never asked of the
// directory, so they are neither created nor followed.
void drop_undescribable(MetadataQuery& query, ClientSession& session) {
  const Access& access = session.access();
  if (access.is_unrestricted() || !query.topics) return;
  const bool named_some = !query.topics->empty();
  const auto dropped =
      std::erase_if(*query.topics, [&access](const std::string& t) { return !access.may_describe(t); });
  for (std::size_t i = 0; i < dropped; ++i) {
    session.context().observer.on_authorization_denied(session.principal().name(), "describe");
  }
  if (named_some && query.topics->empty()) query.ask_directory = false;
}

void answer_undescribable(MetadataResponse& response, const Access& access, bool asks_all) {
  if (access.is_unrestricted()) return;
  if (asks_all) {
    std::erase_if(response.topics,
                  [&access](const MetadataResponseTopic& t) { return !t.name || !access.may_describe(*t.name); });
    return;
  }
  for (MetadataResponseTopic& t : response.topics) {
    if (!t.name || access.may_describe(*t.name)) continue;
    std::string name = std::move(*t.name);
    t = MetadataResponseTopic{};
    t.name = std::move(name);
    t.error_code = ErrorCode::kTopicAuthorizationFailed;
  }
}

}  // namespace

void handle_metadata(ClientSession& session, const RequestHeader& header, WireReader& body) {
  auto request = decode_body<MetadataRequest>(body, header.api_version);
  if (!request) {
    session.close_after_pending("malformed Metadata v" + std::to_string(header.api_version) +
                                " request: " + request.error().describe());
    return;
  }
  // v12+ may name a topic by id alone (KIP-516): one the directory knows is
  // asked for, and answered, by its name.
  if (request->topics) {
    for (MetadataRequestTopic& t : *request->topics) {
      if (!t.name) t.name = session.context().topics.topic_name(t.topic_id);
    }
  }
  MetadataQuery query = metadata_query(*request, header.api_version);
  const bool asks_all = !query.topics;
  drop_undescribable(query, session);
  ResponseSlot slot = session.reserve_response();
  auto shared_request = std::make_shared<const MetadataRequest>(std::move(*request));
  // The access as the request was handled; it points into the context's
  // rules, alive while the session is (checked before use).
  auto answer = [slot, shared_request, version = header.api_version, correlation = header.correlation_id,
                 access = session.access(), asks_all](const std::vector<TopicDescription>& described) {
    auto s = slot.session();
    if (!s) return;  // the client left meanwhile
    MetadataResponse response = metadata_answer(*shared_request, version, s->context().advertised, described);
    answer_undescribable(response, access, asks_all);
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
