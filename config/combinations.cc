#include "config/combinations.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <initializer_list>
#include <string_view>

#include "config/client_access.h"
#include "config/schema.h"

namespace pp::config {
namespace {

// upstream.tls.enabled when the schema has it, and false for a settings type
// without TLS keys, so the cross-key checks compile against either.
template <class Upstream>
bool upstream_tls_enabled(const Upstream& u) {
  if constexpr (requires { u.tls.enabled; }) {
    return u.tls.enabled;
  } else {
    return false;
  }
}

class Rules {
 public:
  Rules(const KeyFacts& facts, std::vector<ConfigError>& errors) : facts_(facts), errors_(errors) {}

  // True when none of `keys` failed its own check.
  bool all_valid(std::initializer_list<std::string_view> keys) const {
    for (const auto k : keys) {
      if (facts_.bad.contains(k)) return false;
    }
    return true;
  }

  // Reported at the first of `keys` the user actually set: that is the line
  // to edit. Defaults alone never break a rule, so one is always found in
  // practice; the file's start is the fallback.
  void error(std::initializer_list<std::string_view> keys, std::string message) {
    for (const auto k : keys) {
      if (const auto it = facts_.present.find(k); it != facts_.present.end()) {
        errors_.push_back(ConfigError{it->second, std::move(message)});
        return;
      }
    }
    errors_.push_back(ConfigError{Location{facts_.file_name, 1, 1}, std::move(message)});
  }

  void require_bootstrap() {
    if (facts_.present.contains("upstream.bootstrap_servers")) return;
    std::string message =
        "upstream.bootstrap_servers is required: the Kafka cluster's [\"host:port\", ...], or "
        "[\"embedded\"] for the in-process demo cluster";
    if (facts_.file_missing) {
      message += " (there is no config file at " + facts_.file_name +
                 "; name one with --config or PRODUCE_PROXY_CONFIG, or use --set)";
    }
    errors_.push_back(
        ConfigError{facts_.upstream_table.value_or(Location{facts_.file_name, 1, 1}), std::move(message)});
  }

 private:
  const KeyFacts& facts_;
  std::vector<ConfigError>& errors_;
};

// [upstream.tls]: each file named is there and readable (only opened, never
// printed), and a client certificate comes with its key.
void check_tls_files(const UpstreamTlsSettings& tls, Rules& rules) {
  if (!tls.enabled) return;
  const std::pair<std::string_view, const std::string*> files[] = {{"upstream.tls.ca_file", &tls.ca_file},
                                                                   {"upstream.tls.cert_file", &tls.cert_file},
                                                                   {"upstream.tls.key_file", &tls.key_file}};
  for (const auto& [key, path] : files) {
    if (path->empty() || access(path->c_str(), R_OK) == 0) continue;
    rules.error({key}, std::string(key) + " = \"" + *path + "\" cannot be read: " + std::strerror(errno));
  }
  if (tls.cert_file.empty() != tls.key_file.empty()) {
    rules.error({"upstream.tls.cert_file", "upstream.tls.key_file"},
                "upstream.tls.cert_file and upstream.tls.key_file go together (a client certificate needs its "
                "key): set both or neither");
  }
}

// [listener.tls]: a listener certificate and key when enabled, each file
// readable, and a CA exactly when client certificates are asked for (one
// without the other is a half-configured mTLS an operator would not notice).
void check_listener_tls(const ListenerTlsSettings& tls, Rules& rules) {
  if (!rules.all_valid({"listener.tls.enabled", "listener.tls.client_auth"})) return;
  const bool client_certificates = tls.client_auth != ClientAuth::kNone;
  if (!tls.enabled) {
    if (client_certificates) {
      rules.error({"listener.tls.client_auth"},
                  "listener.tls.client_auth = " + format_value(tls.client_auth) + " needs listener.tls.enabled = true");
    }
    return;
  }
  const std::pair<std::string_view, const std::string*> files[] = {{"listener.tls.cert_file", &tls.cert_file},
                                                                   {"listener.tls.key_file", &tls.key_file},
                                                                   {"listener.tls.ca_file", &tls.ca_file}};
  for (const auto& [key, path] : files) {
    if (path->empty()) {
      if (key != "listener.tls.ca_file") {
        rules.error({key, "listener.tls.enabled"}, std::string(key) + " is required with listener.tls.enabled = true");
      }
      continue;
    }
    if (access(path->c_str(), R_OK) != 0) {
      rules.error({key}, std::string(key) + " = \"" + *path + "\" cannot be read: " + std::strerror(errno));
    }
  }
  if (client_certificates && tls.ca_file.empty()) {
    rules.error({"listener.tls.client_auth"}, "listener.tls.client_auth = " + format_value(tls.client_auth) +
                                                  " needs listener.tls.ca_file, the CA client certificates chain to");
  } else if (!client_certificates && !tls.ca_file.empty()) {
    rules.error({"listener.tls.ca_file"},
                "listener.tls.ca_file is set, but listener.tls.client_auth = \"none\" asks no client for a "
                "certificate: set client_auth = \"required\" (or \"requested\"), or remove ca_file");
  }
}

// Exactly the secrets the mechanism needs: a second source or a stray key
// is a mistake the operator should hear about before the broker says no.
void check_sasl(const Settings& settings, Rules& rules) {
  const UpstreamSaslSettings& s = settings.upstream.sasl;
  if (!rules.all_valid({"upstream.sasl.mechanism"})) return;
  const std::string m = s.mechanism;
  const bool password_mechanism = m == "PLAIN" || m.starts_with("SCRAM-");
  auto must_be_unset = [&](std::string_view key, bool is_set, const std::string& why) {
    if (is_set) rules.error({key}, std::string(key) + " is set, but " + why);
  };
  const std::string off = "upstream.sasl.mechanism is empty (SASL off)";
  const std::string not_password = "upstream.sasl.mechanism = \"" + m + "\" takes no password";
  const std::string not_token = "upstream.sasl.mechanism = \"" + m + "\" takes no token";
  must_be_unset("upstream.sasl.username", !s.username.empty() && !password_mechanism, m.empty() ? off : not_password);
  must_be_unset("upstream.sasl.password_file", !s.password_file.empty() && !password_mechanism,
                m.empty() ? off : not_password);
  must_be_unset("upstream.sasl.password_env", !s.password_env.empty() && !password_mechanism,
                m.empty() ? off : not_password);
  must_be_unset("upstream.sasl.token_file", !s.token_file.empty() && m != "OAUTHBEARER", m.empty() ? off : not_token);
  must_be_unset("upstream.sasl.token_command", !s.token_command.empty() && m != "OAUTHBEARER",
                m.empty() ? off : not_token);
  if (m.empty()) return;
  if (settings.upstream.embedded()) {
    rules.error({"upstream.sasl.mechanism"},
                "upstream.sasl.mechanism is set, but the embedded demo cluster has no SASL");
  }
  if (password_mechanism) {
    if (s.username.empty()) rules.error({"upstream.sasl.mechanism"}, m + " needs upstream.sasl.username");
    if (s.password_file.empty() == s.password_env.empty() &&
        rules.all_valid({"upstream.sasl.password_file", "upstream.sasl.password_env"})) {
      rules.error({"upstream.sasl.password_file", "upstream.sasl.password_env", "upstream.sasl.mechanism"},
                  m + " needs exactly one of upstream.sasl.password_file, upstream.sasl.password_env");
    }
  }
  if (m == "OAUTHBEARER" && s.token_file.empty() == s.token_command.empty() &&
      rules.all_valid({"upstream.sasl.token_file", "upstream.sasl.token_command"})) {
    rules.error({"upstream.sasl.token_file", "upstream.sasl.token_command", "upstream.sasl.mechanism"},
                "OAUTHBEARER needs exactly one of upstream.sasl.token_file, upstream.sasl.token_command");
  }
  // The password would cross the network in the clear (RFC 4616 section 4).
  if (m == "PLAIN" && !s.allow_plain_without_tls && !upstream_tls_enabled(settings.upstream)) {
    rules.error({"upstream.sasl.mechanism"},
                "upstream.sasl.mechanism = \"PLAIN\" sends the password in the clear without upstream TLS; "
                "enable TLS or set upstream.sasl.allow_plain_without_tls = true");
  }
}

// No open relay: a listener beyond loopback must authenticate its clients
// (clients_authenticated) or be explicitly allowed not to.
// Reported at listener.address (or the --set that gave it): the line whose
// value opened the listener up.
void check_no_open_relay(const ListenerSettings& listener, Rules& rules) {
  if (!rules.all_valid(
          {"listener.address", "listener.allow_unauthenticated", "listener.tls.enabled", "listener.tls.client_auth"})) {
    return;
  }
  if (listener.allow_unauthenticated || !serves_unauthenticated_beyond_loopback(listener)) return;
  rules.error({"listener.address", "listener.allow_unauthenticated"},
              "listener.address = " + format_value(listener.address) +
                  " is not loopback and the proxy does not authenticate its clients: an open relay, where anyone "
                  "who reaches the port produces to the upstream cluster under the proxy's identity (its "
                  "credentials and ACLs). Bind to loopback (127.0.0.1, [::1] or localhost), require client "
                  "certificates ([listener.tls] enabled = true, client_auth = \"required\") or SASL "
                  "([listener.sasl] mechanisms), or set "
                  "listener.allow_unauthenticated = true where a firewall or network policy restricts who "
                  "reaches the port");
}

// [listener.sasl]: mechanisms and a users file together, and PLAIN only
// inside listener TLS unless explicitly allowed (the password would cross
// the network in the clear, RFC 4616 section 4).
void check_listener_sasl(const ListenerSettings& listener, Rules& rules) {
  const ListenerSaslSettings& s = listener.sasl;
  if (!rules.all_valid({"listener.sasl.mechanisms", "listener.sasl.users_file"})) return;
  if (s.enabled() && s.users_file.empty()) {
    rules.error({"listener.sasl.mechanisms"},
                "listener.sasl.mechanisms is set, but listener.sasl.users_file is empty: the users file "
                "(written by `produce-proxy users add`) is required");
  }
  if (!s.enabled() && !s.users_file.empty()) {
    rules.error({"listener.sasl.users_file"},
                "listener.sasl.users_file is set, but listener.sasl.mechanisms is empty (SASL off)");
  }
  const bool plain = std::find(s.mechanisms.begin(), s.mechanisms.end(), "PLAIN") != s.mechanisms.end();
  if (plain && !s.allow_plain_without_tls && !listener.tls.enabled) {
    rules.error({"listener.sasl.mechanisms"},
                "listener.sasl.mechanisms has PLAIN, which receives passwords in the clear without listener "
                "TLS; enable [listener.tls] or set listener.sasl.allow_plain_without_tls = true");
  }
}

}  // namespace

void check_combinations(const Settings& s, const KeyFacts& facts, std::vector<ConfigError>& errors) {
  Rules rules(facts, errors);
  if (!facts.bad.contains("upstream.bootstrap_servers")) rules.require_bootstrap();
  check_no_open_relay(s.listener, rules);
  check_listener_tls(s.listener.tls, rules);
  check_tls_files(s.upstream.tls, rules);
  check_sasl(s, rules);
  check_listener_sasl(s.listener, rules);

  const auto& p = s.producer;
  // Kafka's ProducerConfig rule: a record must be allowed to wait out its
  // linger and one full request before it can time out.
  if (rules.all_valid({"producer.delivery_timeout_ms", "producer.linger_ms", "upstream.request_timeout_ms"}) &&
      p.delivery_timeout_ms < p.linger_ms + s.upstream.request_timeout_ms) {
    rules.error({"producer.delivery_timeout_ms", "upstream.request_timeout_ms", "producer.linger_ms"},
                "producer.delivery_timeout_ms (" + std::to_string(p.delivery_timeout_ms) +
                    ") must be at least producer.linger_ms + upstream.request_timeout_ms (" +
                    std::to_string(p.linger_ms) + " + " + std::to_string(s.upstream.request_timeout_ms) + ")");
  }
  // One full batch must fit in the buffer, or the accumulator could never
  // fill a batch before client reads pause.
  if (rules.all_valid({"producer.buffer_memory_bytes", "producer.batch_bytes"}) &&
      p.buffer_memory_bytes < p.batch_bytes) {
    rules.error({"producer.buffer_memory_bytes", "producer.batch_bytes"},
                "producer.buffer_memory_bytes (" + std::to_string(p.buffer_memory_bytes) +
                    ") must be at least producer.batch_bytes (" + std::to_string(p.batch_bytes) + ")");
  }
  // A request frame is charged to the budget from its size prefix on: one
  // larger than the whole budget would hold every other client up while it
  // arrives, and double what the proxy may hold.
  if (rules.all_valid({"producer.buffer_memory_bytes", "listener.max_request_bytes"}) &&
      p.buffer_memory_bytes < s.listener.max_request_bytes) {
    rules.error({"listener.max_request_bytes", "producer.buffer_memory_bytes"},
                "listener.max_request_bytes (" + std::to_string(s.listener.max_request_bytes) +
                    ") must be at most producer.buffer_memory_bytes (" + std::to_string(p.buffer_memory_bytes) + ")");
  }
  // Kafka clamps silently; we say so, since the backoff would never grow.
  if (rules.all_valid({"producer.retry_backoff_ms", "producer.retry_backoff_max_ms"}) &&
      p.retry_backoff_max_ms < p.retry_backoff_ms) {
    rules.error({"producer.retry_backoff_max_ms", "producer.retry_backoff_ms"},
                "producer.retry_backoff_max_ms (" + std::to_string(p.retry_backoff_max_ms) +
                    ") must be at least producer.retry_backoff_ms (" + std::to_string(p.retry_backoff_ms) + ")");
  }
  // Two listeners cannot bind one address (port 0 picks two different ports).
  if (rules.all_valid({"listener.address", "metrics.address"}) && s.listener.address == s.metrics.address &&
      !s.metrics.address.ends_with(":0")) {
    rules.error({"metrics.address", "listener.address"}, "metrics.address is the same as listener.address (" +
                                                             s.metrics.address +
                                                             "); they are two listeners and need two ports");
  }
}

}  // namespace pp::config
