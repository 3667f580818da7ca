// The front end's facts as metrics: pp::FrontendObserver forwarded to the
// plain methods of Metrics. Loop thread, per request or per event.
#pragma once

#include <cstdint>

#include "proxy/frontend/frontend_observer.h"

namespace pp {

class Metrics;

class FrontendMetrics final : public FrontendObserver {
 public:
  explicit FrontendMetrics(Metrics& metrics) : metrics_(metrics) {}

  void on_client_connections(std::int64_t open) override;
  void on_request(ApiKey api, std::int16_t version) override;
  void on_records_received(std::int64_t records, std::int64_t bytes) override;
  void on_backpressure(bool active) override;
  void on_authentication(std::string_view mechanism, std::string_view result) override;
  void on_client_tls_failure(std::string_view reason) override;
  void on_share_pause() override;
  void on_request_parked() override;
  void on_request_refused_for_memory() override;
  void on_produce_done(std::int16_t acks, std::int64_t duration_ms) override;
  void on_client_duplicate(std::string_view outcome) override;
  void on_deadline_answer(DeadlineOutcome outcome, std::int64_t records) override;
  void on_client_produce(std::string_view software, std::string_view software_version, std::int16_t version,
                         std::int8_t magic) override;
  void on_principal_request(std::string_view principal) override;
  void on_principal_produce(std::string_view principal, std::int64_t bytes, std::int64_t throttle_ms) override;
  void on_authorization_denied(std::string_view principal, std::string_view operation) override;

 private:
  Metrics& metrics_;
};

}  // namespace pp
