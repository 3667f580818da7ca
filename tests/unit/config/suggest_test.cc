// Edit distance, "did you mean", and host:port syntax.
#include "config/suggest.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "config/address.h"

namespace pp::config::test {
namespace {

TEST(EditDistance, CountsEditsAndSwaps) {
  EXPECT_EQ(edit_distance("", ""), 0u);
  EXPECT_EQ(edit_distance("abc", ""), 3u);
  EXPECT_EQ(edit_distance("linger_ms", "linger_ms"), 0u);
  EXPECT_EQ(edit_distance("lingr_ms", "linger_ms"), 1u);
  EXPECT_EQ(edit_distance("ligner_ms", "linger_ms"), 1u);  // one swap
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
}

TEST(Suggest, TyposAndMisplacedKeys) {
  EXPECT_EQ(suggest_key("producer", "batch_size"), "producer.batch_bytes");
  EXPECT_EQ(suggest_key("producer", "request_timeout_ms"), "upstream.request_timeout_ms");
  EXPECT_EQ(suggest_key("upstrem", "client_id"), "upstream.client_id");
  EXPECT_EQ(suggest_key("", "drain_timeout_ms"), "shutdown.drain_timeout_ms");
  EXPECT_EQ(suggest_key("producer", "acks"), std::nullopt);
  EXPECT_EQ(suggest_section("metric"), "metrics");
  EXPECT_EQ(suggest_section("kafka"), std::nullopt);
}

TEST(HostPort, Syntax) {
  EXPECT_EQ(host_port_problem("127.0.0.1:9092", false), std::nullopt);
  EXPECT_EQ(host_port_problem("kafka-1.example.com:9092", false), std::nullopt);
  EXPECT_EQ(host_port_problem("[::1]:9092", false), std::nullopt);
  EXPECT_EQ(host_port_problem("0.0.0.0:0", true), std::nullopt);
  EXPECT_EQ(host_port_problem("0.0.0.0:0", false), "port 0 is not a port a broker listens on");
  EXPECT_EQ(host_port_problem("kafka", false), "expected host:port");
  EXPECT_EQ(host_port_problem(":9092", false), "the host is empty");
  EXPECT_EQ(host_port_problem("k:", false), "the port is empty");
  EXPECT_EQ(host_port_problem("k:90a", false), "the port is not a number in 0-65535");
  EXPECT_EQ(host_port_problem("k:65536", false), "the port is not a number in 0-65535");
  EXPECT_EQ(host_port_problem("[::1:9092", false), "an IPv6 literal needs a closing ']'");
  EXPECT_EQ(host_port_problem("[::1]9092", false), "expected ':port' after ']'");
  EXPECT_EQ(host_port_problem("::1:9092", false), "write an IPv6 address as [addr]:port");
  EXPECT_EQ(host_port_problem("a b:1", false), "the host has a bad character");
}

}  // namespace
}  // namespace pp::config::test
