#include "daemon/users_command.h"

#include <termios.h>
#include <unistd.h>

#include <filesystem>
#include <iostream>

#include "proxy/sasl/users_file.h"

namespace pp {
namespace {

// One line of `in`, without its line end. On a terminal the typed
// password is not echoed.
std::string read_password(std::istream& in, std::ostream& err) {
  const bool terminal = &in == &std::cin && ::isatty(STDIN_FILENO) == 1;
  termios saved{};
  if (terminal && ::tcgetattr(STDIN_FILENO, &saved) == 0) {
    termios quiet = saved;
    quiet.c_lflag &= ~static_cast<tcflag_t>(ECHO);
    ::tcsetattr(STDIN_FILENO, TCSANOW, &quiet);
    err << "password: " << std::flush;
  }
  std::string line;
  std::getline(in, line);
  if (terminal) {
    ::tcsetattr(STDIN_FILENO, TCSANOW, &saved);
    err << "\n";
  }
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return line;
}

}  // namespace

const CLI::App* add_users_command(CLI::App& app, UsersAddCommand& out) {
  CLI::App* users = app.add_subcommand("users", "Manage the users file of [listener.sasl]");
  users->require_subcommand(1);
  CLI::App* add = users->add_subcommand("add", "Write NAME's credentials; the password is read from standard input");
  add->add_option("NAME", out.name, "The user name (the principal)")->required();
  add->add_option("--mechanism", out.mechanisms, "PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512 (repeatable)")
      ->type_name("M")
      ->required()
      ->expected(1)
      ->take_all()
      ->allow_extra_args(false);
  add->add_option("--users-file", out.users_file, "The users file to create or update")->type_name("FILE")->required();
  add->add_option("--iterations", out.iterations, "PBKDF2 iterations [4096]")->type_name("N");
  return add;
}

int run_users_add(const UsersAddCommand& command, std::istream& in, std::ostream& out, std::ostream& err) {
  if (!sasl::valid_user_name(command.name)) {
    err << "users add: the name must be 1-255 bytes of printable ASCII without spaces\n";
    return 2;
  }
  for (const auto& m : command.mechanisms) {
    if (!sasl::known_mechanism(m)) {
      err << "users add: --mechanism " << m << " is not one of PLAIN, SCRAM-SHA-256, SCRAM-SHA-512\n";
      return 2;
    }
  }
  if (command.iterations < sasl::kScramMinIterations || command.iterations > sasl::kMaxStoredIterations) {
    err << "users add: --iterations must be in [" << sasl::kScramMinIterations << ", " << sasl::kMaxStoredIterations
        << "]\n";
    return 2;
  }
  sasl::UserStore users;
  std::error_code ec;
  if (std::filesystem::exists(command.users_file, ec)) {
    auto loaded = sasl::load_users_file(command.users_file);
    if (!loaded) {
      err << "users add: " << loaded.error() << " (file left as it is)\n";
      return 2;
    }
    users = std::move(*loaded);
  }
  const std::string password = read_password(in, err);
  if (password.empty()) {
    err << "users add: no password on standard input\n";
    return 2;
  }
  sasl::UserCredentials& user = users[command.name];
  for (const auto& m : command.mechanisms) {
    if (!sasl::set_credential(user, m, password, command.iterations)) {
      err << "users add: the random generator failed; nothing written\n";
      return 1;
    }
  }
  if (auto written = sasl::write_users_file(command.users_file, users); !written) {
    err << "users add: " << written.error() << "\n";
    return 1;
  }
  out << "users add: " << command.name << " written to " << command.users_file << " (";
  for (std::size_t i = 0; i < command.mechanisms.size(); ++i) out << (i ? ", " : "") << command.mechanisms[i];
  out << "); send the daemon SIGHUP to use it\n";
  return 0;
}

}  // namespace pp
