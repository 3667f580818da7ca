// What the listener, the client sessions and the request handlers share: the
// settings, the sink, the topic directory, the observer and counters, the
// idempotent clients' state and the Produce deadlines. Created by Frontend;
// sessions and pending requests keep it alive with a shared_ptr so a session
// still finishing a callback after the front end stopped never sees it freed.
// Loop thread only ("One loop thread owns all proxy state",
// docs/design/ARCHITECTURE.md).
#pragma once

#include <uv.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "proxy/base/log_limiter.h"
#include "proxy/frontend/access_rules.h"
#include "proxy/frontend/client_producers.h"
#include "proxy/frontend/deadline_answer_log.h"
#include "proxy/frontend/flow_control.h"
#include "proxy/frontend/frontend_config.h"
#include "proxy/frontend/frontend_observer.h"
#include "proxy/frontend/login_throttle.h"
#include "proxy/frontend/metadata_answer.h"
#include "proxy/frontend/password_checks.h"
#include "proxy/frontend/produce_deadlines.h"
#include "proxy/frontend/produce_quota.h"
#include "proxy/frontend/topic_directory.h"
#include "proxy/net/deferred.h"
#include "proxy/pipeline/record_sink.h"
#include "proxy/sasl/decoy_credentials.h"
#include "proxy/sasl/scram_crypto.h"
#include "proxy/sasl/user_credentials.h"

namespace pp {

struct FrontendContext {
  FrontendContext(uv_loop_t* l, FrontendConfig c, RecordSink& s, TopicDirectory& t, FrontendObserver* o)
      : loop(l),
        config(std::move(c)),
        access_rules(config.principals),
        produce_quotas(quotas_for(config.principals)),
        sink(s),
        topics(t),
        observer(o ? *o : fallback_observer),
        client_producers(with_start_id(config.client_producers)),
        client_producers_charge(s.memory_budget().charge(MemoryUse::kClientProducers, 0)) {}

  FrontendObserver fallback_observer;  // first: `observer` may refer to it
  uv_loop_t* loop;
  FrontendConfig config;
  // [[listener.principals]]: what each session's principal may do.
  AccessRules access_rules;
  // The produce quota of each principal that has one, shared by all its
  // connections (Kafka's per-user quota); keyed by principal name.
  std::unordered_map<std::string, ProduceQuota> produce_quotas;
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
  // [listener.sasl]: the users the mechanisms check, replaced whole on
  // SIGHUP (Frontend::set_users; an exchange in progress keeps the store it
  // began with), the failed-login delays per peer address, and the limiter
  // of the failure log line.
  std::shared_ptr<const sasl::UserStore> users = std::make_shared<const sasl::UserStore>();
  // Keys the stand-in credentials of unknown users (decoy_credentials.h):
  // drawn once per run, so an unknown name's decoy salt is stable while the
  // daemon runs and changes with a restart.
  Bytes sasl_decoy_secret = sasl::random_bytes(sasl::kDecoySecretBytes).value_or(Bytes{});
  // PLAIN's password hashes, run on libuv's pool (password_checks.h).
  PasswordChecks password_checks{loop};
  LoginThrottle login_throttle;
  LogLimiter auth_failure_log{std::chrono::seconds(1)};
  AdvertisedBroker advertised;  // resolved once the listener is bound
  bool stopped = false;         // the front end is gone: handlers answer nothing more

  // Flow control and the deferred queue, both Frontend's: null once it is
  // gone. Sessions reach them only while open (the front end closes every
  // session before it goes); what completes later asks the helpers below.
  FlowControl* flow = nullptr;
  net::Deferred* deferred = nullptr;

  // Runs `fn` on a later loop turn, outside whatever callback we are in (the
  // sink's completions must not see a submit() re-entering them); nothing
  // once the front end stopped.
  void defer(std::function<void()> fn) {
    if (!stopped && deferred) deferred->post(std::move(fn));
  }
  // Back-pressure (FlowControl) as a request completing after the front end
  // stopped sees it: no pause running, the pauses so far counted.
  bool paused() const { return flow && flow->paused(); }
  std::uint64_t backpressure_ms() const { return flow ? flow->backpressure_ms() : counters.backpressure_ms_total; }

 private:
  static ClientProducersConfig with_start_id(ClientProducersConfig c);
  static std::unordered_map<std::string, ProduceQuota> quotas_for(const std::vector<PrincipalGrant>& grants);
};

}  // namespace pp
