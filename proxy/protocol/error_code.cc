#include "proxy/protocol/error_code.h"

namespace pp {

namespace {

struct ErrorInfo {
  ErrorCode code;
  std::string_view name;
  bool retriable;
  std::string_view meaning;
};

constexpr ErrorInfo kErrors[] = {
#define PP_ERROR_INFO(e, code, name, retriable, meaning) {ErrorCode::e, name, retriable, meaning},
    PP_KAFKA_ERROR_CODES(PP_ERROR_INFO)
#undef PP_ERROR_INFO
};

const ErrorInfo* find(ErrorCode code) {
  for (const auto& info : kErrors) {
    if (info.code == code) return &info;
  }
  return nullptr;
}

}  // namespace

std::string_view error_name(ErrorCode code) {
  const ErrorInfo* info = find(code);
  return info ? info->name : std::string_view("UNKNOWN_ERROR_CODE");
}

bool is_retriable(ErrorCode code) {
  const ErrorInfo* info = find(code);
  return info && info->retriable;
}

std::string_view error_meaning(ErrorCode code) {
  const ErrorInfo* info = find(code);
  return info ? info->meaning : std::string_view();
}

std::optional<ErrorCode> error_from_name(std::string_view name) {
  for (const auto& info : kErrors) {
    if (info.name == name) return info.code;
  }
  return std::nullopt;
}

}  // namespace pp
