// The users file: what `users add` writes reads back the same, verifiers
// only; every malformed entry refuses the whole file, naming the place.
#include "proxy/sasl/users_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "proxy/sasl/plain_server.h"

namespace pp::sasl {
namespace {

UserStore sample() {
  UserStore users;
  set_credential(users["alice"], kPlain, "pw-a");
  set_credential(users["alice"], kScramSha256, "pw-a");
  set_credential(users["we\"ird\\name"], kScramSha512, "pw-w");
  return users;
}

TEST(UsersFile, RoundTripsAndHoldsNoPassword) {
  const UserStore users = sample();
  const std::string text = format_users_file(users);
  EXPECT_EQ(text.find("pw-a"), std::string::npos);
  auto parsed = parse_users_file(text, "users.toml");
  ASSERT_TRUE(parsed) << parsed.error();
  EXPECT_EQ(*parsed, users);
  EXPECT_TRUE(verify_plain_password(*parsed->at("alice").plain, "pw-a"));
  EXPECT_FALSE(verify_plain_password(*parsed->at("alice").plain, "pw-b"));
}

TEST(UsersFile, EmptyFileHasNoUsers) {
  auto parsed = parse_users_file("", "users.toml");
  ASSERT_TRUE(parsed);
  EXPECT_TRUE(parsed->empty());
}

TEST(UsersFile, RefusesMalformedEntries) {
  const std::string good_salt = "c2FsdHNhbHRzYWx0";
  const std::string key32 = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=";
  const std::string plain = "salt = \"" + good_salt + "\", iterations = 4096, hash = \"" + key32 + "\"";
  ASSERT_TRUE(parse_users_file("[users.a]\nPLAIN = { " + plain + " }\n", "f"));
  for (const std::string& bad : {
           std::string("users = 1\n"),
           std::string("other = 1\n"),
           "[users.a]\nPLAIN = { " + plain + ", extra = 1 }\n",
           "[users.a]\nGSSAPI = { " + plain + " }\n",
           "[users.a]\nPLAIN = { salt = \"" + good_salt + "\", iterations = 100, hash = \"" + key32 + "\" }\n",
           "[users.a]\nPLAIN = { salt = \"" + good_salt + "\", iterations = 4096, hash = \"AAAA\" }\n",
           "[users.a]\nPLAIN = { salt = \"!!\", iterations = 4096, hash = \"" + key32 + "\" }\n",
           "[users.a]\nSCRAM-SHA-512 = { salt = \"" + good_salt + "\", iterations = 4096, stored_key = \"" + key32 +
               "\", server_key = \"" + key32 + "\" }\n",
           std::string("[users.\"a b\"]\n"),
           std::string("[users.a\n"),
       }) {
    auto parsed = parse_users_file(bad, "f");
    EXPECT_FALSE(parsed) << bad;
    if (!parsed) {
      EXPECT_TRUE(parsed.error().starts_with("f")) << parsed.error();
    }
  }
}

TEST(UsersFile, WritesAtomicallyWithMode0600) {
  const auto dir = std::filesystem::temp_directory_path() / ("pp_users_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "users.toml").string();
  ASSERT_TRUE(write_users_file(path, sample()));
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto loaded = load_users_file(path);
  ASSERT_TRUE(loaded) << loaded.error();
  EXPECT_EQ(loaded->size(), 2u);
  EXPECT_TRUE(loaded->at("alice").plain && loaded->at("alice").scram_sha256);
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir), std::filesystem::directory_iterator()), 1);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace pp::sasl
