// config::Settings (what operators write) onto each layer's own config struct
// (what the layers take), in one place.
#pragma once

#include <expected>
#include <string>

#include "config/settings.h"
#include "daemon/producer_driver.h"
#include "metrics/metrics_config.h"
#include "proxy/frontend/frontend_config.h"
#include "proxy/pipeline/pipeline_config.h"
#include "proxy/spool/spool_writer.h"
#include "proxy/upstream/upstream.h"

namespace pp {

upstream::UpstreamConfig to_upstream_config(const config::Settings& s);
PipelineConfig to_pipeline_config(const config::Settings& s);
TopicLimits to_topic_limits(const config::Settings& s);
// Addresses were validated by config/; the error is for a caller that skipped that.
std::expected<FrontendConfig, std::string> to_frontend_config(const config::Settings& s);
MetricsConfig to_metrics_config(const config::Settings& s);
// [upstream.tls]: plaintext when disabled; otherwise a TLS context built from
// the files, read now (start-up, SIGHUP). The error names the key and the
// file and OpenSSL's reason, never the file's contents.
std::expected<upstream::TransportSecurity, std::string> to_transport_security(const config::Settings& s);
// [listener.tls]: null when disabled; otherwise a server context built from
// the files, read now (start-up, SIGHUP). The error names the key, the file
// and OpenSSL's reason, never the file's contents.
std::expected<std::shared_ptr<net::TlsContext>, std::string> to_listener_tls_context(const config::Settings& s);
// [spool]: the writer's bounds and fsync policy.
spool::SpoolWriterConfig to_spool_writer_config(const config::Settings& s);
// Whether `topic`'s records are acknowledged from the spool: spool.topic_ack's
// first match, else spool.ack (config/spool_checks.h); never without spool.dir.
bool acknowledged_from_spool(const config::Settings& s, std::string_view topic);
// upstream.sasl; mechanism "" means off.
upstream::sasl::SaslConfig to_sasl_config(const config::Settings& s);

}  // namespace pp
