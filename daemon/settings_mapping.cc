#include "daemon/settings_mapping.h"

#include <algorithm>
#include <array>

#include "config/spool_checks.h"

namespace pp {

upstream::UpstreamConfig to_upstream_config(const config::Settings& s) {
  upstream::UpstreamConfig u;
  u.bootstrap_servers = s.upstream.bootstrap_servers;
  u.client_id = s.upstream.client_id;
  u.request_timeout_ms = static_cast<int>(s.upstream.request_timeout_ms);
  u.metadata_max_age_ms = static_cast<int>(s.upstream.metadata_max_age_ms);
  u.max_in_flight_per_connection = static_cast<int>(s.producer.max_in_flight_per_connection);
  return u;
}

std::expected<upstream::TransportSecurity, std::string> to_transport_security(const config::Settings& s) {
  const auto& tls = s.upstream.tls;
  if (!tls.enabled) return upstream::TransportSecurity{};
  auto context = net::TlsContext::client(net::TlsFiles{tls.ca_file, tls.cert_file, tls.key_file});
  if (!context) return std::unexpected("upstream.tls: " + context.error());
  return upstream::TransportSecurity{std::move(*context), tls.server_name, tls.verify_hostname};
}

std::expected<std::shared_ptr<net::TlsContext>, std::string> to_listener_tls_context(const config::Settings& s) {
  const config::ListenerTlsSettings& tls = s.listener.tls;
  if (!tls.enabled) return nullptr;
  constexpr std::array<net::ClientCertificates, 3> kByClientAuth{
      net::ClientCertificates::kNone, net::ClientCertificates::kRequested, net::ClientCertificates::kRequired};
  auto context = net::TlsContext::server(net::TlsServerFiles{
      tls.cert_file, tls.key_file, tls.ca_file, kByClientAuth.at(static_cast<std::size_t>(tls.client_auth))});
  if (!context) return std::unexpected("listener.tls: " + context.error());
  return std::move(*context);
}

TopicLimits to_topic_limits(const config::Settings& s) {
  return TopicLimits{static_cast<std::size_t>(s.upstream.max_topics), s.upstream.metadata_max_idle_ms};
}

PipelineConfig to_pipeline_config(const config::Settings& s) {
  PipelineConfig p;
  p.linger_ms = s.producer.linger_ms;
  p.batch_bytes = static_cast<std::size_t>(s.producer.batch_bytes);
  // The config's names are Kafka's compression.type names, as the codec's are.
  p.compression = parse_compression_codec(config::to_string(s.producer.compression)).value_or(CompressionCodec::kNone);
  p.max_partition_window = static_cast<std::int32_t>(s.producer.max_partition_window);
  p.delivery_timeout_ms = s.producer.delivery_timeout_ms;
  p.retry_backoff_ms = s.producer.retry_backoff_ms;
  p.retry_backoff_max_ms = s.producer.retry_backoff_max_ms;
  p.buffer_memory_bytes = static_cast<std::size_t>(s.producer.buffer_memory_bytes);
  p.request_timeout_ms = static_cast<std::int32_t>(s.upstream.request_timeout_ms);
  return p;
}

std::expected<FrontendConfig, std::string> to_frontend_config(const config::Settings& s) {
  FrontendConfig f;
  auto listen = net::parse_host_port(s.listener.address);
  if (!listen) return std::unexpected("listener.address: " + listen.error());
  f.listen_address = *listen;
  if (!s.listener.advertised_address.empty()) {
    auto advertised = net::parse_host_port(s.listener.advertised_address);
    if (!advertised) return std::unexpected("listener.advertised_address: " + advertised.error());
    f.advertised_address = *advertised;
  }
  f.max_connections = static_cast<std::size_t>(s.listener.max_connections);
  f.max_connections_per_peer = static_cast<std::size_t>(s.listener.max_connections_per_peer);
  f.max_request_bytes = static_cast<std::size_t>(s.listener.max_request_bytes);
  f.idle_timeout_ms = s.listener.idle_timeout_ms;
  f.frame_timeout_ms = s.listener.frame_timeout_ms;
  f.sasl_mechanisms = s.listener.sasl.mechanisms;
  f.sasl_session_lifetime_ms = s.listener.sasl.session_lifetime_ms;
  f.tls_handshake_timeout_ms = s.listener.tls.handshake_timeout_ms;
  f.tls_client_certificates_required = s.listener.tls.client_auth == config::ClientAuth::kRequired;
  f.max_request_hold_ms = s.listener.max_request_hold_ms;
  f.max_decoded_bytes_per_request =
      std::max(static_cast<std::size_t>(s.producer.buffer_memory_bytes), kMinDecodedBytesPerRequest);
  f.max_pending_requests_per_connection =
      pending_requests_cap(static_cast<std::size_t>(s.producer.buffer_memory_bytes));
  f.client_producers.max_producers = static_cast<std::size_t>(s.listener.max_client_producers);
  f.client_producers.idle_timeout_ms = s.listener.client_producer_idle_ms;
  f.client_producers.batches_to_retain = static_cast<std::size_t>(s.listener.client_batches_to_retain);
  f.timestamp_after_max_ms = s.listener.message_timestamp_after_max_ms;
  f.timestamp_before_max_ms = s.listener.message_timestamp_before_max_ms;
  for (const auto& rule : s.listener.principals) {
    f.principals.push_back(PrincipalGrant{rule.name, rule.topics, rule.idempotent_write,
                                          static_cast<std::uint64_t>(rule.produce_bytes_per_second)});
  }
  f.max_upstream_batch_bytes = to_pipeline_config(s).max_request_bytes;
  f.upstream_compression = to_pipeline_config(s).compression;
  return f;
}

upstream::sasl::SaslConfig to_sasl_config(const config::Settings& s) {
  const config::UpstreamSaslSettings& c = s.upstream.sasl;
  return upstream::sasl::SaslConfig{c.mechanism,  c.username,      c.password_file,    c.password_env,
                                    c.token_file, c.token_command, c.token_lifetime_ms};
}

spool::SpoolWriterConfig to_spool_writer_config(const config::Settings& s) {
  spool::SpoolWriterConfig w;
  w.max_bytes = static_cast<std::size_t>(s.spool.max_bytes);
  w.segment_bytes = static_cast<std::size_t>(s.spool.segment_bytes);
  w.fsync = s.spool.fsync == config::SpoolFsync::kAlways ? spool::FsyncPolicy::kAlways : spool::FsyncPolicy::kGroup;
  w.fsync_interval_ms = static_cast<std::uint64_t>(s.spool.fsync_interval_ms);
  return w;
}

bool acknowledged_from_spool(const config::Settings& s, std::string_view topic) {
  return s.spool.enabled() && config::spool_ack_for(s.spool, topic) == config::SpoolAck::kSpool;
}

MetricsConfig to_metrics_config(const config::Settings& s) {
  return MetricsConfig{s.metrics.address, s.metrics.partition_labels};
}

}  // namespace pp
