// What the listener, the client sessions and the request handlers share. Owned
// by Frontend; sessions keep it alive with a shared_ptr so a session still
// finishing a callback after the front end stopped never sees it freed.
// Loop thread only (rule of the house 1).
// Rules of the house: docs/design/ARCHITECTURE.md.
#pragma once

#include <uv.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>

#include "proxy/frontend/client_producers.h"
#include "proxy/frontend/deadline_answer_log.h"
#include "proxy/frontend/frontend_config.h"
#include "proxy/frontend/frontend_observer.h"
#include "proxy/frontend/metadata_answer.h"
#include "proxy/frontend/produce_deadlines.h"
#include "proxy/frontend/topic_directory.h"
#include "proxy/pipeline/record_sink.h"

namespace pp {

struct FrontendContext {
  FrontendContext(uv_loop_t* l, FrontendConfig c, RecordSink& s, TopicDirectory& t, FrontendObserver* o)
      : loop(l),
        config(std::move(c)),
        sink(s),
        topics(t),
        observer(o ? *o : fallback_observer),
        client_producers(with_start_id(config.client_producers)),
        client_producers_charge(s.memory_budget().charge(MemoryUse::kClientProducers, 0)) {}

  FrontendObserver fallback_observer;  // first: `observer` may refer to it
  uv_loop_t* loop;
  FrontendConfig config;
  RecordSink& sink;
  TopicDirectory& topics;
  FrontendObserver& observer;
  FrontendCounters counters;
  // Producer ids of idempotent clients and their batches' dedup state, shared
  // by every session: a client retries on a new connection.
  ClientProducers client_producers;
  MemoryCharge client_producers_charge;
  void charge_client_producers() { client_producers_charge.set(client_producers.memory_bytes()); }
  // The Produce deadlines and their log, owned by Frontend: null once it is
  // gone (a request completing later has no deadline left to cancel).
  ProduceDeadlines* deadlines = nullptr;
  DeadlineAnswerLog deadline_log;
  AdvertisedBroker advertised;  // resolved once the listener is bound
  bool stopped = false;         // the front end is gone: handlers answer nothing more

  // Back-pressure state, driven by Frontend.
  bool paused = false;
  std::uint64_t paused_since_ms = 0;

  // Milliseconds of back-pressure so far, the running pause included. A
  // request's throttle_time_ms is how much of this accrued while it was held.
  std::uint64_t backpressure_ms() const {
    return counters.backpressure_ms_total + (paused ? uv_now(loop) - paused_since_ms : 0);
  }

  // Fair share of the budget (docs/design/ARCHITECTURE.md rule 5, "Fair share"), kept by
  // the sessions: connections holding bytes or waiting to start a frame.
  std::size_t active_connections = 0;
  // The budget over the active connections, counting one more if the asking
  // connection is not active yet (it would be, holding what it asks for).
  std::size_t fair_share(bool asker_counted) const {
    return sink.memory_budget().limit() / std::max<std::size_t>(active_with(asker_counted), 1);
  }
  std::size_t active_with(bool asker_counted) const { return active_connections + (asker_counted ? 0 : 1); }
  // Over the budget, connections under their share may together hold this
  // much more: a stalled client holding the whole budget does not starve them.
  std::size_t share_headroom() const { return sink.memory_budget().limit() / 8; }

  // Hooks into Frontend.
  std::function<void()> after_submit;  // may pause all clients
  // Bytes held by the connections holding less than `share` (cached a loop
  // millisecond; `headroom_taken` adds an admission to it meanwhile).
  std::function<std::size_t(std::size_t share)> under_share_held;
  std::function<void(std::size_t)> headroom_taken;
  // An active connection became inactive: the others' shares grew.
  std::function<void()> share_grew;
  std::function<void(std::uint64_t)> session_closed;  // forget the session
  // Runs `fn` on a later loop turn, outside whatever callback we are in (the
  // sink's completions must not see a submit() re-entering them).
  std::function<void(std::function<void()>)> defer;

 private:
  static ClientProducersConfig with_start_id(ClientProducersConfig c);
};

}  // namespace pp
