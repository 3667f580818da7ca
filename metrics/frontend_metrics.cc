#include "metrics/frontend_metrics.h"

#include <chrono>

#include "metrics/metrics.h"

namespace pp {

void FrontendMetrics::on_client_connections(std::int64_t open) {
  metrics_.set_client_connections(open);
}

void FrontendMetrics::on_request(ApiKey api, std::int16_t version) {
  metrics_.on_client_request(api, version);
}

void FrontendMetrics::on_records_received(std::int64_t records, std::int64_t bytes) {
  metrics_.on_records_received(records, bytes);
}

void FrontendMetrics::on_backpressure(bool active) {
  metrics_.set_backpressure(active);
}

void FrontendMetrics::on_client_tls_failure(std::string_view reason) {
  metrics_.on_client_tls_failure(reason);
}

void FrontendMetrics::on_authentication(std::string_view mechanism, std::string_view result) {
  metrics_.on_client_authentication(mechanism, result);
}

void FrontendMetrics::on_share_pause() {
  metrics_.on_client_share_pause();
}

void FrontendMetrics::on_request_parked() {
  metrics_.on_request_parked();
}

void FrontendMetrics::on_request_refused_for_memory() {
  metrics_.on_request_refused_for_memory();
}

void FrontendMetrics::on_produce_done(std::int16_t acks, std::int64_t duration_ms) {
  metrics_.on_client_request_done(acks, std::chrono::milliseconds(duration_ms));
}

void FrontendMetrics::on_deadline_answer(DeadlineOutcome outcome, std::int64_t records) {
  metrics_.on_deadline_answer(outcome == DeadlineOutcome::kWithdrawn, records);
}

void FrontendMetrics::on_client_duplicate(std::string_view outcome) {
  metrics_.on_client_duplicate(outcome);
}

void FrontendMetrics::on_client_produce(std::string_view software, std::string_view software_version,
                                        std::int16_t version, std::int8_t magic) {
  metrics_.on_client_produce(software, software_version, version, magic);
}

void FrontendMetrics::on_principal_request(std::string_view principal) {
  metrics_.principals().on_request(principal);
}

void FrontendMetrics::on_principal_produce(std::string_view principal, std::int64_t bytes, std::int64_t throttle_ms) {
  metrics_.principals().on_produce(principal, bytes, throttle_ms);
}

void FrontendMetrics::on_authorization_denied(std::string_view principal, std::string_view operation) {
  metrics_.principals().on_denied(principal, operation);
}

}  // namespace pp
