// configure_logging's two formats, JSON escaping, and the log limiter.
#include "daemon/logging.h"

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <sstream>

#include "proxy/base/log_limiter.h"

namespace pp {
namespace {

TEST(JsonEscape, QuotesBackslashesAndControlCharacters) {
  EXPECT_EQ(json_escape("plain"), "plain");
  EXPECT_EQ(json_escape("say \"hi\"\\"), "say \\\"hi\\\"\\\\");
  EXPECT_EQ(json_escape("a\nb\tc\rd"), "a\\nb\\tc\\rd");
  EXPECT_EQ(json_escape(std::string_view("\x00\x01\x1f\x7f", 4)), "\\u0000\\u0001\\u001f\\u007f");
}

TEST(JsonEscape, KeepsUtf8AndReplacesWhatIsNotUtf8) {
  EXPECT_EQ(json_escape("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"), "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
  EXPECT_EQ(json_escape("\xff"), "\\ufffd");
  EXPECT_EQ(json_escape("\xc3"), "\\ufffd");                                   // truncated
  EXPECT_EQ(json_escape("\xc0\xaf"), "\\ufffd\\ufffd");                        // overlong '/'
  EXPECT_EQ(json_escape("\xed\xa0\x80"), "\\ufffd\\ufffd\\ufffd");             // a surrogate
  EXPECT_EQ(json_escape("\xf4\x90\x80\x80"), "\\ufffd\\ufffd\\ufffd\\ufffd");  // past U+10FFFF
  EXPECT_EQ(json_escape("a\xe2\x82z"), "a\\ufffd\\ufffdz");
}

class LoggingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    logger_ = std::make_shared<spdlog::logger>("upstream", std::make_shared<spdlog::sinks::ostream_sink_mt>(out_));
    spdlog::register_logger(logger_);
  }
  void TearDown() override {
    spdlog::drop("upstream");
    ASSERT_TRUE(configure_logging("info", "text"));
  }
  std::ostringstream out_;
  std::shared_ptr<spdlog::logger> logger_;
};

TEST_F(LoggingTest, JsonIsOneObjectPerLine) {
  ASSERT_TRUE(configure_logging("info", "json"));
  logger_->info("broker {} said \"{}\"\nand left", 3, "bye");
  const std::string line = out_.str();
  ASSERT_FALSE(line.empty());
  EXPECT_EQ(line.back(), '\n');
  EXPECT_EQ(line.find('\n'), line.size() - 1) << line;
  EXPECT_EQ(line.rfind("{\"time\":\"", 0), 0u) << line;
  EXPECT_NE(line.find("Z\",\"level\":\"info\",\"logger\":\"upstream\","
                      "\"message\":\"broker 3 said \\\"bye\\\"\\nand left\"}\n"),
            std::string::npos)
      << line;
}

TEST_F(LoggingTest, JsonIsValidForAJsonParser) {
  ASSERT_TRUE(configure_logging("debug", "json"));
  logger_->debug("tab\there, quote \" backslash \\ bell \x07 bad \xff end");
  const std::string line = out_.str();
  const std::string cmd =
      "python3 -c 'import json,sys; d=json.loads(sys.stdin.read()); "
      "sys.exit(0 if d[\"logger\"]==\"upstream\" and d[\"level\"]==\"debug\" else 1)'";
  FILE* p = popen(cmd.c_str(), "w");
  ASSERT_NE(p, nullptr);
  std::fwrite(line.data(), 1, line.size(), p);
  const int status = pclose(p);
  EXPECT_EQ(WEXITSTATUS(status), 0) << line;
}

TEST_F(LoggingTest, TextAndLevels) {
  ASSERT_TRUE(configure_logging("warn", "text"));
  logger_->info("hidden");
  logger_->warn("shown {}", 1);
  const std::string text = out_.str();
  EXPECT_EQ(text.find("hidden"), std::string::npos);
  EXPECT_NE(text.find("warning [upstream] shown 1\n"), std::string::npos) << text;
}

TEST_F(LoggingTest, RejectsUnknownSpellings) {
  EXPECT_FALSE(configure_logging("verbose", "text"));
  EXPECT_FALSE(configure_logging("info", "xml"));
  EXPECT_EQ(configure_logging("info", "xml").error(), "log.format \"xml\": expected text or json");
}

TEST(LogLimiter, OneLinePerIntervalWithACountOfTheRest) {
  LogLimiter limiter(std::chrono::seconds(10));
  EXPECT_EQ(limiter.admit(1000), 0u);
  for (std::uint64_t t = 1001; t < 11000; t += 100) EXPECT_EQ(limiter.admit(t), std::nullopt);
  EXPECT_EQ(limiter.admit(11000), 100u);
  EXPECT_EQ(limiter.admit(11001), std::nullopt);
  EXPECT_EQ(limiter.reset(), 1u);
  EXPECT_EQ(limiter.admit(11002), 0u);
}

}  // namespace
}  // namespace pp
