// The validated configuration of produce-proxy (docs/design/INTERFACES.md, "Configuration"):
// one struct per TOML section, one member per key, named exactly as the key and
// initialised to its documented default. Plain data on purpose: no libuv, no
// sockets, no spdlog, so every layer and every test can hold one, and the
// daemon maps it onto FrontendConfig / UpstreamConfig / PipelineConfig itself.
//
// Integers are all std::int64_t: the schema (config/schema.h) checks each
// against its range before a Settings is ever handed out, so narrowing to the
// consumer's type (int32 windows, size_t byte counts) is safe there.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace pp::config {

// [listener.sasl]: client authentication by SASL on the client listener.
// Enabled when `mechanisms` is non-empty; the users file holds salted
// verifiers only (proxy/sasl/users_file.h), never a password.
struct ListenerSaslSettings {
  std::vector<std::string> mechanisms;  // PLAIN, SCRAM-SHA-256, SCRAM-SHA-512
  std::string users_file;
  // PLAIN sends the password in the clear: refused without listener TLS
  // unless this is true (as upstream.sasl.allow_plain_without_tls).
  bool allow_plain_without_tls = false;
  // KIP-368: an authenticated session this old is closed on its next
  // request unless re-authenticated; 0 = no limit.
  std::int64_t session_lifetime_ms = 0;
  bool enabled() const { return !mechanisms.empty(); }
  bool operator==(const ListenerSaslSettings&) const = default;
};

// The producer's compression.type names (Kafka's CompressionType).
enum class Compression : std::uint8_t { kNone, kGzip, kSnappy, kLz4, kZstd };
// spdlog's levels that an operator may pick (no "critical"/"off": a sidecar
// that hides its errors is not a state we want to be reachable from config).
enum class LogLevel : std::uint8_t { kTrace, kDebug, kInfo, kWarn, kError };
// text: spdlog's human pattern; json: one JSON object per line for collectors.
enum class LogFormat : std::uint8_t { kText, kJson };

// [listener.tls] client_auth: whether clients must present a certificate
// that chains to listener.tls.ca_file. kRequested verifies one that is sent
// and accepts a client without one (it stays anonymous).
enum class ClientAuth : std::uint8_t { kNone, kRequested, kRequired };

// The spelling of each enumerator in the TOML file, indexed by its value.
template <class E>
constexpr auto enum_names();
template <>
constexpr auto enum_names<Compression>() {
  return std::array<std::string_view, 5>{"none", "gzip", "snappy", "lz4", "zstd"};
}
template <>
constexpr auto enum_names<LogLevel>() {
  return std::array<std::string_view, 5>{"trace", "debug", "info", "warn", "error"};
}
template <>
constexpr auto enum_names<ClientAuth>() {
  return std::array<std::string_view, 3>{"none", "requested", "required"};
}
template <>
constexpr auto enum_names<LogFormat>() {
  return std::array<std::string_view, 2>{"text", "json"};
}

template <class E>
  requires std::is_enum_v<E>
constexpr std::string_view to_string(E value) {
  return enum_names<E>()[static_cast<std::size_t>(value)];
}

template <class E>
  requires std::is_enum_v<E>
constexpr std::optional<E> parse_enum(std::string_view name) {
  const auto names = enum_names<E>();
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i] == name) return static_cast<E>(i);
  }
  return std::nullopt;
}

// The bootstrap list that means "start librdkafka's mock cluster in-process".
inline constexpr std::string_view kEmbeddedBootstrap = "embedded";
inline constexpr std::string_view kDefaultConfigPath = "/etc/produce-proxy/produce-proxy.toml";
inline constexpr std::string_view kConfigPathEnv = "PRODUCE_PROXY_CONFIG";

// [listener.tls]: TLS for client connections. PEM files; the principal of a
// client certificate is its subject CN (frontend/principal.h).
struct ListenerTlsSettings {
  bool enabled = false;
  std::string cert_file;  // the listener's certificate chain
  std::string key_file;   // its private key
  std::string ca_file;    // what client certificates must chain to (client_auth)
  ClientAuth client_auth = ClientAuth::kNone;
  // A connection whose handshake is not done this soon is closed.
  std::int64_t handshake_timeout_ms = 10000;
  bool operator==(const ListenerTlsSettings&) const = default;
};

// [listener]: where legacy clients connect.
struct ListenerSettings {
  std::string address = "127.0.0.1:9092";
  // An address beyond loopback whose clients are not authenticated is
  // refused unless this is true (config/client_access.h, no open relay).
  bool allow_unauthenticated = false;
  // host:port put in Metadata; empty means the same as address.
  std::string advertised_address;
  std::int64_t max_connections = 1024;
  std::int64_t max_connections_per_peer = 0;  // 0: no limit
  std::int64_t max_request_bytes = 16777216;
  // [[listener.principals]]: what each client principal may do
  // (frontend/access_rules.h). None: every client may do everything.
  struct PrincipalRule {
    std::string name;                           // a certificate CN, a SASL user, or ANONYMOUS
    std::vector<std::string> topics;            // literal names, or prefixes ending in '*'
    bool idempotent_write = true;               // InitProducerId, when topics is not empty
    std::int64_t produce_bytes_per_second = 0;  // 0: no quota
    bool operator==(const PrincipalRule&) const = default;
  };
  std::vector<PrincipalRule> principals;
  std::int64_t idle_timeout_ms = 600000;
  std::int64_t frame_timeout_ms = 30000;
  // The longest a Produce request is held unanswered, whatever its own
  // timeout_ms says (frontend/produce_deadlines.h).
  std::int64_t max_request_hold_ms = 30000;
  // Idempotent clients: their producer ids' dedup state (CLIENT_DEDUP.md).
  std::int64_t max_client_producers = 10000;
  std::int64_t client_producer_idle_ms = 86400000;
  std::int64_t client_batches_to_retain = 5;
  ListenerSaslSettings sasl;

  // Kafka 4.x's topic defaults message.timestamp.after.max.ms (1 h) and
  // before.max.ms (unlimited; -1 here): CreateTime records outside them are
  // refused before batching, so one client's bad timestamp fails no other's.
  std::int64_t message_timestamp_after_max_ms = 3600000;
  std::int64_t message_timestamp_before_max_ms = -1;
  ListenerTlsSettings tls;
  bool operator==(const ListenerSettings&) const = default;
};

// [upstream.tls]: TLS to the brokers. Files are PEM; "" = not used (the CA:
// the system bundle; the certificate and key: no client certificate).
struct UpstreamTlsSettings {
  bool enabled = false;
  std::string ca_file;
  std::string cert_file;
  std::string key_file;
  std::string server_name;  // "" = each broker's host
  bool verify_hostname = true;
  bool operator==(const UpstreamTlsSettings&) const = default;
};

// [upstream.sasl]: authentication to the brokers. Secrets are
// never values here: only the files or environment variable that hold them.
struct UpstreamSaslSettings {
  std::string mechanism;  // "" (off) | PLAIN | SCRAM-SHA-256 | SCRAM-SHA-512 | OAUTHBEARER
  std::string username;
  std::string password_file;
  std::string password_env;  // the name of an environment variable
  std::string token_file;
  std::vector<std::string> token_command;    // argv, run without a shell
  std::int64_t token_lifetime_ms = 3600000;  // a token that is not a JWT with "exp"
  bool allow_plain_without_tls = false;
  bool operator==(const UpstreamSaslSettings&) const = default;
};

// [upstream]: the real Kafka cluster.
struct UpstreamSettings {
  // Required: validation fails while this is empty.
  std::vector<std::string> bootstrap_servers;
  std::string client_id = "produce-proxy";
  std::int64_t request_timeout_ms = 30000;
  std::int64_t metadata_max_age_ms = 300000;
  // A topic neither produced to nor asked about this long is forgotten.
  std::int64_t metadata_max_idle_ms = 300000;
  std::int64_t max_topics = 10000;
  UpstreamTlsSettings tls;
  UpstreamSaslSettings sasl;

  bool embedded() const { return bootstrap_servers.size() == 1 && bootstrap_servers.front() == kEmbeddedBootstrap; }
  bool operator==(const UpstreamSettings&) const = default;
};

// [producer]: the idempotent pipeline.
struct ProducerSettings {
  std::int64_t linger_ms = 5;
  std::int64_t batch_bytes = 1048576;
  Compression compression = Compression::kNone;
  std::int64_t max_in_flight_per_connection = 32;
  // Cap on a learned KIP-1269 window. Never below 5, the initial window.
  std::int64_t max_partition_window = 200;
  std::int64_t delivery_timeout_ms = 120000;
  std::int64_t retry_backoff_ms = 100;
  std::int64_t retry_backoff_max_ms = 1000;
  std::int64_t buffer_memory_bytes = 67108864;
  bool operator==(const ProducerSettings&) const = default;
};

// [metrics]: /metrics, /healthz, /readyz.
struct MetricsSettings {
  std::string address = "127.0.0.1:9464";
  bool partition_labels = true;
  bool operator==(const MetricsSettings&) const = default;
};

// [log]
struct LogSettings {
  LogLevel level = LogLevel::kInfo;
  LogFormat format = LogFormat::kText;
  bool operator==(const LogSettings&) const = default;
};

// [shutdown]
struct ShutdownSettings {
  std::int64_t drain_timeout_ms = 30000;
  bool operator==(const ShutdownSettings&) const = default;
};

// [spool] ack: when a client's Produce is answered. upstream: once the
// upstream acknowledged it; spool: once it is durable in the spool
// (docs/design/SPOOL.md).
enum class SpoolAck : std::uint8_t { kUpstream, kSpool };
// [spool] fsync: group commits every fsync_interval_ms, or one sync per append.
enum class SpoolFsync : std::uint8_t { kGroup, kAlways };
template <>
constexpr auto enum_names<SpoolAck>() {
  return std::array<std::string_view, 2>{"upstream", "spool"};
}
template <>
constexpr auto enum_names<SpoolFsync>() {
  return std::array<std::string_view, 2>{"group", "always"};
}

// [spool]: the durable local spool, off while `dir` is empty.
struct SpoolSettings {
  std::string dir;
  std::int64_t max_bytes = std::int64_t{1} << 30;
  std::int64_t segment_bytes = std::int64_t{64} << 20;
  SpoolAck ack = SpoolAck::kUpstream;
  // "NAME=MODE" or "PREFIX*=MODE", first match wins (config/spool_checks.h).
  std::vector<std::string> topic_ack;
  SpoolFsync fsync = SpoolFsync::kGroup;
  std::int64_t fsync_interval_ms = 2;
  bool enabled() const { return !dir.empty(); }
  bool operator==(const SpoolSettings&) const = default;
};

struct Settings {
  ListenerSettings listener;
  UpstreamSettings upstream;
  ProducerSettings producer;
  MetricsSettings metrics;
  LogSettings log;
  ShutdownSettings shutdown;
  SpoolSettings spool;
  bool operator==(const Settings&) const = default;
};

}  // namespace pp::config
