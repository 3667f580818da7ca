// Who a client connection is, as far as authorization, quotas and the
// per-principal metrics are concerned: a name and how it was established.
// A connection starts as ANONYMOUS and becomes a TLS or SASL principal when
// its authentication completes (ClientSession::set_principal). Kafka's
// principal type is always "User"; only the name is compared by rules.
// A value type: cheap to copy, no loop affinity.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

namespace pp {

// How a connection's principal was established.
enum class AuthMethod : std::uint8_t {
  kAnonymous,       // no authentication (plaintext, or TLS without a client certificate)
  kTlsCertificate,  // name from the client certificate (subject CN, see the TLS listener)
  kSasl,            // name from a SASL exchange; mechanism() says which
};

class Principal {
 public:
  // The name rules use for unauthenticated connections, as Kafka's
  // KafkaPrincipal.ANONYMOUS ("User:ANONYMOUS").
  static constexpr std::string_view kAnonymousName = "ANONYMOUS";

  // An unauthenticated connection.
  Principal() = default;
  static Principal anonymous() { return Principal{}; }
  // `name` is the certificate's subject CN (or the SAN the TLS rule picks).
  static Principal tls_certificate(std::string name);
  // `mechanism` as on the wire: "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512".
  static Principal sasl(std::string mechanism, std::string name);

  const std::string& name() const { return name_; }
  AuthMethod method() const { return method_; }
  // The SASL mechanism; empty for the other methods.
  const std::string& mechanism() const { return mechanism_; }
  bool is_anonymous() const { return method_ == AuthMethod::kAnonymous; }
  // For logs: "User:alice (SASL SCRAM-SHA-256)", "User:ANONYMOUS".
  std::string describe() const;

  friend bool operator==(const Principal&, const Principal&) = default;

 private:
  Principal(AuthMethod method, std::string mechanism, std::string name)
      : method_(method), mechanism_(std::move(mechanism)), name_(std::move(name)) {}

  AuthMethod method_ = AuthMethod::kAnonymous;
  std::string mechanism_;
  std::string name_{kAnonymousName};
};

// "anonymous", "tls", "sasl": the label form of a method.
std::string_view auth_method_name(AuthMethod method);

}  // namespace pp
