#include "proxy/frontend/access.h"

#include <algorithm>

namespace pp {

bool topic_matches(std::string_view pattern, std::string_view topic) {
  if (!pattern.empty() && pattern.back() == '*') return topic.starts_with(pattern.substr(0, pattern.size() - 1));
  return pattern == topic;
}

bool Access::may_write(std::string_view topic) const {
  switch (kind_) {
    case Kind::kUnrestricted:
      return true;
    case Kind::kDenied:
      return false;
    case Kind::kGranted:
      return std::any_of(grant_->topics.begin(), grant_->topics.end(),
                         [topic](const std::string& pattern) { return topic_matches(pattern, topic); });
  }
  return false;
}

bool Access::may_idempotent_write() const {
  switch (kind_) {
    case Kind::kUnrestricted:
      return true;
    case Kind::kDenied:
      return false;
    case Kind::kGranted:
      return grant_->idempotent_write && !grant_->topics.empty();
  }
  return false;
}

}  // namespace pp
