#include "proxy/frontend/frontend_context.h"

#include <random>

namespace pp {

ClientProducersConfig FrontendContext::with_start_id(ClientProducersConfig c) {
  if (c.first_producer_id < 0) {
    // Random, below 2^62: ids handed out before a restart are unlikely to be
    // handed out again after it (their owners may still be retrying).
    std::random_device device;
    std::mt19937_64 gen((static_cast<std::uint64_t>(device()) << 32) ^ device());
    c.first_producer_id = static_cast<std::int64_t>(gen() >> 2);
  }
  return c;
}

std::unordered_map<std::string, ProduceQuota> FrontendContext::quotas_for(const std::vector<PrincipalGrant>& grants) {
  std::unordered_map<std::string, ProduceQuota> quotas;
  for (const PrincipalGrant& g : grants) {
    if (g.produce_bytes_per_second > 0) quotas.emplace(g.name, ProduceQuota(g.produce_bytes_per_second));
  }
  return quotas;
}

}  // namespace pp
