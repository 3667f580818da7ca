// `produce-proxy users add NAME --mechanism M [--mechanism M ...]
//  --users-file F [--iterations N]`: writes NAME's salted credentials for
// each mechanism into the users file of [listener.sasl] (proxy/sasl/
// users_file.h), keeping its other users and mechanisms. The password is
// read from standard input (one line; echo off on a terminal), never from
// the command line, and is not written anywhere. The file is replaced
// atomically, mode 0600. The daemon reads it at start and on SIGHUP.
#pragma once

#include <CLI/CLI.hpp>
#include <iosfwd>
#include <string>
#include <vector>

namespace pp {

struct UsersAddCommand {
  std::string name;
  std::vector<std::string> mechanisms;  // PLAIN, SCRAM-SHA-256, SCRAM-SHA-512
  std::string users_file;
  int iterations = 4096;
};

// Registers `users add` on `app`, filling `out` when parsed; returns the
// `add` subcommand (ask it parsed()).
const CLI::App* add_users_command(CLI::App& app, UsersAddCommand& out);

// 0: written; 1: the file could not be written; 2: a bad name, mechanism,
// password or an existing file that does not parse (left untouched).
int run_users_add(const UsersAddCommand& command, std::istream& in, std::ostream& out, std::ostream& err);

}  // namespace pp
