#include "proxy/sasl/users_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <toml++/toml.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "proxy/sasl/base64.h"

namespace pp::sasl {
namespace {

constexpr std::size_t kMaxFileBytes = 64 * 1048576;

class EntryReader {
 public:
  EntryReader(const toml::table& table, std::string where) : table_(table), where_(std::move(where)) {}

  std::expected<Bytes, std::string> bytes(std::string_view key, std::size_t exact_size) const {
    const auto* node = table_.get(key);
    const auto* text = node ? node->as_string() : nullptr;
    if (text == nullptr) return std::unexpected(where_ + "." + std::string(key) + " must be a base64 string");
    auto decoded = base64_decode(text->get());
    if (!decoded || decoded->empty() || (exact_size != 0 && decoded->size() != exact_size)) {
      return std::unexpected(where_ + "." + std::string(key) + " is not valid base64 of the right length");
    }
    return std::move(*decoded);
  }

  std::expected<int, std::string> iterations() const {
    const auto* node = table_.get("iterations");
    const auto* value = node ? node->as_integer() : nullptr;
    if (value == nullptr || value->get() < kScramMinIterations || value->get() > kMaxStoredIterations) {
      return std::unexpected(where_ + ".iterations must be an integer in [" + std::to_string(kScramMinIterations) +
                             ", " + std::to_string(kMaxStoredIterations) + "]");
    }
    return static_cast<int>(value->get());
  }

  std::optional<std::string> unknown_key(std::initializer_list<std::string_view> known) const {
    for (const auto& [key, node] : table_) {
      if (std::find(known.begin(), known.end(), key.str()) == known.end()) {
        return where_ + ": unknown key \"" + std::string(key.str()) + "\"";
      }
    }
    return std::nullopt;
  }

 private:
  const toml::table& table_;
  std::string where_;
};

std::expected<PlainCredential, std::string> read_plain(const EntryReader& r) {
  if (auto bad = r.unknown_key({"salt", "iterations", "hash"})) return std::unexpected(*bad);
  PlainCredential out;
  auto salt = r.bytes("salt", 0);
  auto iterations = r.iterations();
  auto hash = r.bytes("hash", 32);
  if (!salt) return std::unexpected(salt.error());
  if (!iterations) return std::unexpected(iterations.error());
  if (!hash) return std::unexpected(hash.error());
  return PlainCredential{std::move(*salt), *iterations, std::move(*hash)};
}

std::expected<ScramCredential, std::string> read_scram(const EntryReader& r, ScramHash hash) {
  if (auto bad = r.unknown_key({"salt", "iterations", "stored_key", "server_key"})) return std::unexpected(*bad);
  const std::size_t size = hash == ScramHash::kSha256 ? 32 : 64;
  auto salt = r.bytes("salt", 0);
  auto iterations = r.iterations();
  auto stored = r.bytes("stored_key", size);
  auto server = r.bytes("server_key", size);
  if (!salt) return std::unexpected(salt.error());
  if (!iterations) return std::unexpected(iterations.error());
  if (!stored) return std::unexpected(stored.error());
  if (!server) return std::unexpected(server.error());
  return ScramCredential{std::move(*salt), *iterations, std::move(*stored), std::move(*server)};
}

std::expected<UserCredentials, std::string> read_user(const toml::table& table, const std::string& where) {
  UserCredentials out;
  for (const auto& [key, node] : table) {
    const std::string mechanism(key.str());
    std::string at = where;
    at.append(".").append(mechanism);
    const auto* entry = node.as_table();
    if (entry == nullptr) return std::unexpected(at + " must be a table");
    const EntryReader r(*entry, at);
    if (mechanism == kPlain) {
      auto plain = read_plain(r);
      if (!plain) return std::unexpected(plain.error());
      out.plain = std::move(*plain);
    } else if (mechanism == kScramSha256 || mechanism == kScramSha512) {
      const ScramHash hash = mechanism == kScramSha256 ? ScramHash::kSha256 : ScramHash::kSha512;
      auto scram = read_scram(r, hash);
      if (!scram) return std::unexpected(scram.error());
      (hash == ScramHash::kSha256 ? out.scram_sha256 : out.scram_sha512) = std::move(*scram);
    } else {
      return std::unexpected(at + ": unknown mechanism (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512)");
    }
  }
  return out;
}

std::expected<UserStore, std::string> read_users(const toml::table& root, std::string_view source) {
  const std::string file(source);
  for (const auto& [key, node] : root) {
    if (key.str() != "users") return std::unexpected(file + ": unknown key \"" + std::string(key.str()) + "\"");
  }
  UserStore users;
  const auto* table = root.get("users");
  if (table == nullptr) return users;
  if (!table->is_table()) return std::unexpected(file + ": users must be a table");
  for (const auto& [key, node] : *table->as_table()) {
    const std::string name(key.str());
    if (!valid_user_name(name)) {
      return std::unexpected(file + ": a user name is not 1-255 bytes of printable ASCII without spaces");
    }
    std::string where = file;
    where.append(": users.\"").append(name).append("\"");
    const auto* user = node.as_table();
    if (user == nullptr) return std::unexpected(where + " must be a table");
    auto credentials = read_user(*user, where);
    if (!credentials) return std::unexpected(credentials.error());
    users.emplace(name, std::move(*credentials));
  }
  return users;
}

// A user name is printable ASCII (valid_user_name): only '"' and '\' need escaping.
std::string quoted(std::string_view name) {
  std::string out = "\"";
  for (const char c : name) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

void write_scram(std::ostringstream& out, std::string_view mechanism, const ScramCredential& c) {
  out << mechanism << " = { salt = \"" << base64_encode(c.salt) << "\", iterations = " << c.iterations
      << ", stored_key = \"" << base64_encode(c.stored_key) << "\", server_key = \"" << base64_encode(c.server_key)
      << "\" }\n";
}

}  // namespace

std::expected<UserStore, std::string> parse_users_file(std::string_view text, std::string_view source) {
  try {
    const toml::table root = toml::parse(text, source);
    return read_users(root, source);
  } catch (const toml::parse_error& e) {
    return std::unexpected(std::string(source) + ":" + std::to_string(e.source().begin.line) + ":" +
                           std::to_string(e.source().begin.column) + ": " + std::string(e.description()));
  }
}

std::string format_users_file(const UserStore& users) {
  std::ostringstream out;
  out << "# produce-proxy users file: salted verifiers, no passwords (docs/design/INTERFACES.md).\n"
         "# Written by `produce-proxy users add`; keep it mode 0600.\n";
  for (const auto& [name, user] : users) {
    out << "\n[users." << quoted(name) << "]\n";
    if (user.plain) {
      out << "PLAIN = { salt = \"" << base64_encode(user.plain->salt) << "\", iterations = " << user.plain->iterations
          << ", hash = \"" << base64_encode(user.plain->hash) << "\" }\n";
    }
    if (user.scram_sha256) write_scram(out, kScramSha256, *user.scram_sha256);
    if (user.scram_sha512) write_scram(out, kScramSha512, *user.scram_sha512);
  }
  return out.str();
}

std::expected<UserStore, std::string> load_users_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::unexpected(path + ": cannot be read: " + std::strerror(errno));
  std::string text;
  char buffer[65536];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
    text.append(buffer, static_cast<std::size_t>(in.gcount()));
    if (text.size() > kMaxFileBytes) return std::unexpected(path + ": larger than 64 MiB");
  }
  return parse_users_file(text, path);
}

std::expected<void, std::string> write_users_file(const std::string& path, const UserStore& users) {
  const std::string text = format_users_file(users);
  std::string temporary = path + ".tmp.XXXXXX";
  const int fd = ::mkstemp(temporary.data());
  if (fd < 0) return std::unexpected("cannot create a file beside " + path + ": " + std::strerror(errno));
  bool ok = ::fchmod(fd, S_IRUSR | S_IWUSR) == 0;
  std::size_t written = 0;
  while (ok && written < text.size()) {
    const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    ok = n > 0;
    if (ok) written += static_cast<std::size_t>(n);
  }
  ok = ok && ::fsync(fd) == 0;
  const int saved = errno;
  ok = ::close(fd) == 0 && ok;
  if (!ok || ::rename(temporary.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(ok ? errno : saved);
    ::unlink(temporary.c_str());
    return std::unexpected("cannot write " + path + ": " + why);
  }
  return {};
}

}  // namespace pp::sasl
