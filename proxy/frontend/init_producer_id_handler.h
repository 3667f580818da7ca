// InitProducerId from clients: the front end hands out its own
// client producer ids (ClientProducers); nothing goes upstream. Idempotent
// only: a transactional_id is refused with TRANSACTIONAL_ID_AUTHORIZATION_FAILED
// (docs/design/CLIENT_DEDUP.md says why that code).
#pragma once

#include "proxy/protocol/header.h"
#include "proxy/protocol/wire_reader.h"

namespace pp {

class ClientSession;

void handle_init_producer_id(ClientSession& session, const RequestHeader& header, WireReader& body);

}  // namespace pp
