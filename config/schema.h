// The configuration schema: every key of docs/design/INTERFACES.md, its range, its extra
// check and whether a SIGHUP can apply it live, written once in visit_keys().
// Loading, validation, the SIGHUP diff, the example-config test and the
// docs/design/INTERFACES.md test all walk this one list, so a key added to Settings but
// not here fails those tests instead of silently being unloadable.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "config/settings.h"

namespace pp::config {

// What a changed key needs on SIGHUP.
enum class Apply : std::uint8_t { kLive, kRestart };

// Checks beyond type and integer range.
enum class Check : std::uint8_t {
  kNone,
  kListenAddress,      // host:port, port 0 allowed (bind any free port; tests use it)
  kAdvertisedAddress,  // empty, or host:port (port 0: the port actually bound)
  kBootstrapList,      // non-empty list of host:port with port 1-65535, or ["embedded"]
  kClientId,           // a Kafka STRING: at most 32767 bytes
  kSaslMechanism,      // "", PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER
  kReadableFile,       // empty, or a file this process can read (secrets: checked, never shown)
  kEnvironmentName,    // empty, or an environment variable's name
  kCommand,            // an argv: empty, or a non-empty program name first
  kSaslMechanisms,     // a list of distinct PLAIN, SCRAM-SHA-256, SCRAM-SHA-512
  kSpoolDir,           // empty, or a directory this process can create or write (spool_checks.h)
  kTopicAck,           // a list of "NAME=MODE" / "PREFIX*=MODE" (spool_checks.h)
};

inline constexpr std::int64_t kInt32Max = std::numeric_limits<std::int32_t>::max();

struct KeySpec {
  std::string_view section;
  std::string_view name;
  std::int64_t min = 0;  // integers only
  std::int64_t max = 0;
  Apply apply = Apply::kRestart;
  Check check = Check::kNone;

  std::string full_name() const { return std::string(section) + "." + std::string(name); }
};

// [listener.tls], right after [listener]'s own keys. The files are re-read
// on every SIGHUP (changed or not) for new connections; connections up keep
// their session. Readability and the key pairs are checked in combinations.cc.
template <class F, class... S>
void visit_listener_tls_keys(F&& f, S&... s) {
  constexpr auto kLive = Apply::kLive;
  constexpr auto kRestart = Apply::kRestart;
  f(KeySpec{"listener.tls", "enabled", 0, 0, kRestart}, s.listener.tls.enabled...);
  f(KeySpec{"listener.tls", "cert_file", 0, 0, kLive}, s.listener.tls.cert_file...);
  f(KeySpec{"listener.tls", "key_file", 0, 0, kLive}, s.listener.tls.key_file...);
  f(KeySpec{"listener.tls", "ca_file", 0, 0, kLive}, s.listener.tls.ca_file...);
  // Restart-only: it decides whether the listener meets the open-relay rule.
  f(KeySpec{"listener.tls", "client_auth", 0, 0, kRestart}, s.listener.tls.client_auth...);
  f(KeySpec{"listener.tls", "handshake_timeout_ms", 100, 600000, kRestart}, s.listener.tls.handshake_timeout_ms...);
}

// [listener], first in INTERFACES.md's order; visit_keys calls it.
template <class F, class... S>
void visit_listener_keys(F&& f, S&... s) {
  constexpr auto kLive = Apply::kLive;
  constexpr auto kRestart = Apply::kRestart;
  f(KeySpec{"listener", "address", 0, 0, kRestart, Check::kListenAddress}, s.listener.address...);
  // Checked with listener.address in combinations.cc: no open relay.
  f(KeySpec{"listener", "allow_unauthenticated", 0, 0, kRestart}, s.listener.allow_unauthenticated...);
  f(KeySpec{"listener", "advertised_address", 0, 0, kRestart, Check::kAdvertisedAddress},
    s.listener.advertised_address...);
  f(KeySpec{"listener", "max_connections", 1, 1000000, kRestart}, s.listener.max_connections...);
  f(KeySpec{"listener", "max_connections_per_peer", 0, 1000000, kRestart}, s.listener.max_connections_per_peer...);
  // Kafka frames carry an int32 size; below 1 KiB not even Metadata fits.
  f(KeySpec{"listener", "max_request_bytes", 1024, kInt32Max, kRestart}, s.listener.max_request_bytes...);
  f(KeySpec{"listener", "idle_timeout_ms", 1000, kInt32Max, kLive}, s.listener.idle_timeout_ms...);
  // 0: no deadline (the sweep checks about once a second).
  f(KeySpec{"listener", "frame_timeout_ms", 0, kInt32Max, kRestart}, s.listener.frame_timeout_ms...);
  f(KeySpec{"listener", "max_request_hold_ms", 100, kInt32Max, kRestart}, s.listener.max_request_hold_ms...);
  f(KeySpec{"listener", "max_client_producers", 1, 10000000, kRestart}, s.listener.max_client_producers...);
  f(KeySpec{"listener", "client_producer_idle_ms", 1000, std::int64_t{1} << 40, kRestart},
    s.listener.client_producer_idle_ms...);
  // min 5: what every idempotent client assumes a broker retains.
  f(KeySpec{"listener", "client_batches_to_retain", 5, 1000, kRestart}, s.listener.client_batches_to_retain...);
  // -1: no limit. 2^50 ms is 35,000 years: past any clock, far from overflow.
  f(KeySpec{"listener", "message_timestamp_after_max_ms", -1, std::int64_t{1} << 50, kRestart},
    s.listener.message_timestamp_after_max_ms...);
  f(KeySpec{"listener", "message_timestamp_before_max_ms", -1, std::int64_t{1} << 50, kRestart},
    s.listener.message_timestamp_before_max_ms...);
  visit_listener_tls_keys(f, s...);
}

// [listener.sasl], after [listener.tls] in INTERFACES.md's order; visit_keys
// calls it. The users file is re-read on every SIGHUP (a file that fails
// keeps the users loaded before); the rest needs a restart.
template <class F, class... S>
void visit_listener_sasl_keys(F&& f, S&... s) {
  constexpr auto kRestart = Apply::kRestart;
  f(KeySpec{"listener.sasl", "mechanisms", 0, 0, kRestart, Check::kSaslMechanisms}, s.listener.sasl.mechanisms...);
  f(KeySpec{"listener.sasl", "users_file", 0, 0, kRestart, Check::kReadableFile}, s.listener.sasl.users_file...);
  f(KeySpec{"listener.sasl", "allow_plain_without_tls", 0, 0, kRestart}, s.listener.sasl.allow_plain_without_tls...);
  f(KeySpec{"listener.sasl", "session_lifetime_ms", 0, kInt32Max, kRestart}, s.listener.sasl.session_lifetime_ms...);
}

// [upstream.tls] and [upstream.sasl], in INTERFACES.md's order
// after [upstream]; visit_keys calls it.
template <class F, class... S>
void visit_upstream_security_keys(F&& f, S&... s) {
  constexpr auto kLive = Apply::kLive;
  constexpr auto kRestart = Apply::kRestart;
  // Files are re-read on every SIGHUP (changed or not) for new connections;
  // the sessions up keep theirs. Readability is checked in combinations.cc.
  f(KeySpec{"upstream.tls", "enabled", 0, 0, kRestart}, s.upstream.tls.enabled...);
  f(KeySpec{"upstream.tls", "ca_file", 0, 0, kLive}, s.upstream.tls.ca_file...);
  f(KeySpec{"upstream.tls", "cert_file", 0, 0, kLive}, s.upstream.tls.cert_file...);
  f(KeySpec{"upstream.tls", "key_file", 0, 0, kLive}, s.upstream.tls.key_file...);
  f(KeySpec{"upstream.tls", "server_name", 0, 0, kLive}, s.upstream.tls.server_name...);
  f(KeySpec{"upstream.tls", "verify_hostname", 0, 0, kLive}, s.upstream.tls.verify_hostname...);
  // Restart-only: SIGHUP re-reads the password and token files these name
  // (for new authentications), not the choice of mechanism or files.
  f(KeySpec{"upstream.sasl", "mechanism", 0, 0, kRestart, Check::kSaslMechanism}, s.upstream.sasl.mechanism...);
  f(KeySpec{"upstream.sasl", "username", 0, 0, kRestart}, s.upstream.sasl.username...);
  f(KeySpec{"upstream.sasl", "password_file", 0, 0, kRestart, Check::kReadableFile}, s.upstream.sasl.password_file...);
  f(KeySpec{"upstream.sasl", "password_env", 0, 0, kRestart, Check::kEnvironmentName}, s.upstream.sasl.password_env...);
  f(KeySpec{"upstream.sasl", "token_file", 0, 0, kRestart, Check::kReadableFile}, s.upstream.sasl.token_file...);
  f(KeySpec{"upstream.sasl", "token_command", 0, 0, kRestart, Check::kCommand}, s.upstream.sasl.token_command...);
  f(KeySpec{"upstream.sasl", "token_lifetime_ms", 1000, kInt32Max, kRestart}, s.upstream.sasl.token_lifetime_ms...);
  f(KeySpec{"upstream.sasl", "allow_plain_without_tls", 0, 0, kRestart}, s.upstream.sasl.allow_plain_without_tls...);
}

// [spool], last in INTERFACES.md's order; visit_keys calls it. All
// restart-only: the spool is opened and recovered once, at start.
template <class F, class... S>
void visit_spool_keys(F&& f, S&... s) {
  constexpr auto kRestart = Apply::kRestart;
  f(KeySpec{"spool", "dir", 0, 0, kRestart, Check::kSpoolDir}, s.spool.dir...);
  // At least a few segments; at most 2^50 bytes (a petabyte) to catch unit typos.
  f(KeySpec{"spool", "max_bytes", std::int64_t{1} << 20, std::int64_t{1} << 50, kRestart}, s.spool.max_bytes...);
  // A segment holds at least one entry of the largest request (64 MiB is
  // accepted too: an entry larger than a segment gets one of its own).
  f(KeySpec{"spool", "segment_bytes", std::int64_t{64} << 10, std::int64_t{1} << 32, kRestart},
    s.spool.segment_bytes...);
  f(KeySpec{"spool", "ack", 0, 0, kRestart}, s.spool.ack...);
  f(KeySpec{"spool", "topic_ack", 0, 0, kRestart, Check::kTopicAck}, s.spool.topic_ack...);
  f(KeySpec{"spool", "fsync", 0, 0, kRestart}, s.spool.fsync...);
  // 0: commit as soon as the previous commit is done. A second is far past
  // any useful wait for an acknowledgement.
  f(KeySpec{"spool", "fsync_interval_ms", 0, 1000, kRestart}, s.spool.fsync_interval_ms...);
}

// Calls f(spec, field...) for every key, in docs/design/INTERFACES.md's order, where each
// field is a (const, if that Settings is) reference to the member the key
// fills in the corresponding Settings: one Settings to read or fill it, two
// to compare or copy key by key. The single place that ties a TOML key to a
// Settings member.
template <class F, class... S>
  requires(sizeof...(S) > 0 && (std::is_same_v<std::remove_const_t<S>, Settings> && ...))
void visit_keys(F&& f, S&... s) {
  constexpr auto kLive = Apply::kLive;
  constexpr auto kRestart = Apply::kRestart;
  visit_listener_keys(f, s...);
  visit_listener_sasl_keys(f, s...);

  f(KeySpec{"upstream", "bootstrap_servers", 0, 0, kRestart, Check::kBootstrapList}, s.upstream.bootstrap_servers...);
  f(KeySpec{"upstream", "client_id", 0, 0, kRestart, Check::kClientId}, s.upstream.client_id...);
  // Produce's timeout_ms is an int32 on the wire.
  f(KeySpec{"upstream", "request_timeout_ms", 1, kInt32Max, kLive}, s.upstream.request_timeout_ms...);
  f(KeySpec{"upstream", "metadata_max_age_ms", 100, kInt32Max, kRestart}, s.upstream.metadata_max_age_ms...);
  // At least 5 s: a topic must outlive the Metadata round trip that asked for it.
  f(KeySpec{"upstream", "metadata_max_idle_ms", 5000, kInt32Max, kRestart}, s.upstream.metadata_max_idle_ms...);
  f(KeySpec{"upstream", "max_topics", 1, 1000000, kRestart}, s.upstream.max_topics...);

  visit_upstream_security_keys(f, s...);

  // An upper bound on the wait behind a batch in flight (PIPELINE.md,
  // adaptive batching). Ten minutes is far past any useful linger; the bound catches unit typos.
  f(KeySpec{"producer", "linger_ms", 0, 600000, kLive}, s.producer.linger_ms...);
  // The pipeline sends at most 16 MiB per request, one larger batch alone.
  f(KeySpec{"producer", "batch_bytes", 1, 16777216, kLive}, s.producer.batch_bytes...);
  f(KeySpec{"producer", "compression", 0, 0, kLive}, s.producer.compression...);
  f(KeySpec{"producer", "max_in_flight_per_connection", 1, 1024, kRestart}, s.producer.max_in_flight_per_connection...);
  // min 5: the initial window (kInitialWindow); a lower cap is reported with
  // its own message, not as a plain range error.
  f(KeySpec{"producer", "max_partition_window", 5, 10000, kRestart}, s.producer.max_partition_window...);
  f(KeySpec{"producer", "delivery_timeout_ms", 1, kInt32Max, kLive}, s.producer.delivery_timeout_ms...);
  // The pipeline shifts these left by up to 10 retries: an hour keeps that in int64.
  f(KeySpec{"producer", "retry_backoff_ms", 0, 3600000, kRestart}, s.producer.retry_backoff_ms...);
  f(KeySpec{"producer", "retry_backoff_max_ms", 0, 3600000, kRestart}, s.producer.retry_backoff_max_ms...);
  f(KeySpec{"producer", "buffer_memory_bytes", 1024, std::int64_t{1} << 40, kRestart},
    s.producer.buffer_memory_bytes...);

  f(KeySpec{"metrics", "address", 0, 0, kRestart, Check::kListenAddress}, s.metrics.address...);
  f(KeySpec{"metrics", "partition_labels", 0, 0, kRestart}, s.metrics.partition_labels...);

  f(KeySpec{"log", "level", 0, 0, kLive}, s.log.level...);
  f(KeySpec{"log", "format", 0, 0, kRestart}, s.log.format...);

  f(KeySpec{"shutdown", "drain_timeout_ms", 0, 3600000, kLive}, s.shutdown.drain_timeout_ms...);

  visit_spool_keys(f, s...);
}

// Every key, in schema order.
std::vector<KeySpec> all_keys();
// The section names, in schema order.
std::vector<std::string_view> all_sections();
// The spec of "section.key", or nullptr.
const KeySpec* find_key(std::string_view section, std::string_view name);

// A field's value as TOML would spell it: 5, true, "text", ["a:1", "b:2"].
std::string format_value(const std::string& v);
std::string format_value(const std::vector<std::string>& v);
std::string format_value(std::int64_t v);
std::string format_value(bool v);
template <class E>
  requires std::is_enum_v<E>
std::string format_value(E v) {
  return format_value(std::string(to_string(v)));
}

}  // namespace pp::config
