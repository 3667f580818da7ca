// How one outstanding request ends, kept generic so BrokerConnection knows
// nothing of message types: a sink decodes the body at the version the request
// was sent with, then either hands the result to its caller or fails with an
// error code. Exactly one of deliver() / fail() is called per sink.
//
// Decoding is a separate step from delivery so the connection can check the
// bytes (and apply a KIP-219 throttle) before any caller code runs, and can
// still fail the request with NETWORK_EXCEPTION when they are bad.
#pragma once

#include <cstdint>
#include <expected>
#include <functional>
#include <memory>
#include <optional>

#include "proxy/protocol/error_code.h"
#include "proxy/protocol/schema.h"
#include "proxy/protocol/wire_reader.h"

namespace pp::upstream {

class ResponseSink {
 public:
  virtual ~ResponseSink() = default;
  // Returns the response's throttle_time_ms (0 when the message has none).
  virtual Decoded<std::int32_t> decode(ByteView body, std::int16_t version) = 0;
  virtual void deliver() = 0;
  virtual void fail(ErrorCode error) = 0;
};

// A whole response body: bytes left over mean we and the broker disagree on
// the layout, which would silently misread every later field.
template <Message Response>
Decoded<Response> decode_response_body(ByteView body, std::int16_t version) {
  WireReader r(body);
  auto resp = decode_body<Response>(r, version);
  if (!resp) return resp;
  if (!r.empty()) return r.fail(DecodeErrorKind::kTrailingBytes);
  return resp;
}

template <Message Response>
class TypedResponseSink final : public ResponseSink {
 public:
  using Result = std::expected<Response, ErrorCode>;
  using Done = std::function<void(Result)>;

  explicit TypedResponseSink(Done done) : done_(std::move(done)) {}

  Decoded<std::int32_t> decode(ByteView body, std::int16_t version) override {
    auto resp = decode_response_body<Response>(body, version);
    if (!resp) return std::unexpected(resp.error());
    decoded_ = std::move(*resp);
    if constexpr (requires { decoded_->throttle_time_ms; }) {
      return decoded_->throttle_time_ms;
    } else {
      return 0;
    }
  }
  void deliver() override { finish(Result(std::move(*decoded_))); }
  void fail(ErrorCode error) override { finish(std::unexpected(error)); }

 private:
  void finish(Result result) {
    // Moved out first: the callback may destroy the sink's owner.
    Done done = std::move(done_);
    if (done) done(std::move(result));
  }

  Done done_;
  std::optional<Response> decoded_;
};

template <Message Response>
std::unique_ptr<ResponseSink> make_sink(std::function<void(std::expected<Response, ErrorCode>)> done) {
  return std::make_unique<TypedResponseSink<Response>>(std::move(done));
}

}  // namespace pp::upstream
