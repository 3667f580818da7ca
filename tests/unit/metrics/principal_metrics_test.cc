// The per-principal series: fed through the front end's observer, and
// capped at PrincipalMetrics::kMaxPrincipalSeries names, the rest as "other".
#include <gtest/gtest.h>

#include <string>

#include "metrics/metrics.h"
#include "tests/unit/metrics/collected.h"

namespace pp {
namespace {

using pp::testing::value_of;

TEST(PrincipalMetrics, RequestsBytesThrottleAndDenialsByPrincipal) {
  Metrics m(MetricsConfig{});
  FrontendObserver& front = m.frontend_observer();
  front.on_principal_request("alice");
  front.on_principal_request("alice");
  front.on_principal_produce("alice", 1000, 0);
  front.on_principal_produce("alice", 500, 250);
  front.on_authorization_denied("alice", "write");
  front.on_authorization_denied("alice", "describe");
  front.on_authorization_denied("alice", "write");
  const auto& r = *m.registry();
  EXPECT_EQ(value_of(r, "produce_proxy_principal_requests_total", {{"principal", "alice"}}), 2);
  EXPECT_EQ(value_of(r, "produce_proxy_principal_produce_bytes_total", {{"principal", "alice"}}), 1500);
  EXPECT_EQ(value_of(r, "produce_proxy_principal_throttle_seconds_total", {{"principal", "alice"}}), 0.25);
  EXPECT_EQ(value_of(r, "produce_proxy_principal_authorization_denied_total",
                     {{"principal", "alice"}, {"operation", "write"}}),
            2);
  EXPECT_EQ(value_of(r, "produce_proxy_principal_authorization_denied_total",
                     {{"principal", "alice"}, {"operation", "describe"}}),
            1);
}

TEST(PrincipalMetrics, NamesPastTheCapCountAsOther) {
  Metrics m(MetricsConfig{});
  FrontendObserver& front = m.frontend_observer();
  const std::size_t names = PrincipalMetrics::kMaxPrincipalSeries + 50;
  for (std::size_t i = 0; i < names; ++i) front.on_principal_request("user-" + std::to_string(i));
  // A name seen before the cap keeps its series; a late one's denial goes to other.
  front.on_principal_request("user-0");
  front.on_authorization_denied("user-" + std::to_string(names - 1), "write");
  const auto& r = *m.registry();
  EXPECT_EQ(value_of(r, "produce_proxy_principal_requests_total", {{"principal", "user-0"}}), 2);
  EXPECT_EQ(value_of(r, "produce_proxy_principal_requests_total",
                     {{"principal", "user-" + std::to_string(PrincipalMetrics::kMaxPrincipalSeries - 1)}}),
            1);
  EXPECT_FALSE(value_of(r, "produce_proxy_principal_requests_total",
                        {{"principal", "user-" + std::to_string(PrincipalMetrics::kMaxPrincipalSeries)}}));
  EXPECT_EQ(value_of(r, "produce_proxy_principal_requests_total", {{"principal", "other"}}), 50);
  EXPECT_EQ(value_of(r, "produce_proxy_principal_authorization_denied_total",
                     {{"principal", "other"}, {"operation", "write"}}),
            1);
}

}  // namespace
}  // namespace pp
