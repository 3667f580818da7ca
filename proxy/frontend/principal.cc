#include "proxy/frontend/principal.h"

#include <utility>

namespace pp {

Principal Principal::tls_certificate(std::string name) {
  return Principal(AuthMethod::kTlsCertificate, std::string(), std::move(name));
}

Principal Principal::sasl(std::string mechanism, std::string name) {
  return Principal(AuthMethod::kSasl, std::move(mechanism), std::move(name));
}

std::string Principal::describe() const {
  std::string out = "User:" + name_;
  switch (method_) {
    case AuthMethod::kAnonymous:
      break;
    case AuthMethod::kTlsCertificate:
      out += " (TLS certificate)";
      break;
    case AuthMethod::kSasl:
      out += " (SASL " + mechanism_ + ")";
      break;
  }
  return out;
}

std::string_view auth_method_name(AuthMethod method) {
  switch (method) {
    case AuthMethod::kAnonymous:
      return "anonymous";
    case AuthMethod::kTlsCertificate:
      return "tls";
    case AuthMethod::kSasl:
      return "sasl";
  }
  return "anonymous";
}

}  // namespace pp
