// Metadata requests on a session: ask the TopicDirectory, answer in the
// session's response order (metadata_answer.h builds the body).
#pragma once

#include "proxy/protocol/header.h"
#include "proxy/protocol/wire_reader.h"

namespace pp {

class ClientSession;

void handle_metadata(ClientSession& session, const RequestHeader& header, WireReader& body);

}  // namespace pp
