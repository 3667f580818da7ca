// Writes to one connection, in order, through one core: tried at once when
// nothing is queued (most fit the socket buffer, and then no write request
// is allocated), only the rest queued, with whatever owns its bytes
// kept until libuv's callback. A WireFrame's pieces go in one writev, a
// Produce request's batches written where the pipeline built them instead of
// being copied into one request buffer first.
#include <memory>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include "proxy/net/tcp.h"

namespace pp::net {

namespace {

struct QueuedWrite {
  uv_write_t req{};
  QueuedWrite() = default;
  QueuedWrite(const QueuedWrite&) = delete;
  QueuedWrite& operator=(const QueuedWrite&) = delete;
  virtual ~QueuedWrite() = default;
};

template <class Payload>
struct QueuedPayload final : QueuedWrite {
  explicit QueuedPayload(Payload p) : payload(std::move(p)) {}
  Payload payload;
};

struct KeptBytes {
  Bytes bytes;
  std::shared_ptr<void> keep;
};

// What is left of `bufs` once the first `n` bytes are written.
std::span<uv_buf_t> advance(std::span<uv_buf_t> bufs, std::size_t n) {
  while (!bufs.empty() && n >= bufs.front().len) {
    n -= bufs.front().len;
    bufs = bufs.subspan(1);
  }
  if (n > 0 && !bufs.empty()) {
    bufs.front().base += n;
    bufs.front().len -= n;
  }
  return bufs;
}

void on_written(uv_write_t* req, int status) {
  const std::unique_ptr<QueuedWrite> done(static_cast<QueuedWrite*>(req->data));
  auto* state = static_cast<TcpConnection::State*>(req->handle->data);
  if (status != 0 && status != UV_ECANCELED) state->fail(status);
}

// `payload` owns what `bufs` point into, and moving it must leave them where
// they are (a vector's heap buffer, shared owners). Never jumps writes
// already queued.
template <class Payload>
void write_in_order(TcpConnection::State& state, std::span<uv_buf_t> bufs, std::size_t total, Payload&& payload) {
  auto* stream = reinterpret_cast<uv_stream_t*>(&state.handle);
  if (uv_stream_get_write_queue_size(stream) == 0) {
    const int written = uv_try_write(stream, bufs.data(), static_cast<unsigned>(bufs.size()));
    if (written > 0 && static_cast<std::size_t>(written) == total) return;
    if (written > 0) bufs = advance(bufs, static_cast<std::size_t>(written));
  }
  auto w = std::make_unique<QueuedPayload<std::decay_t<Payload>>>(std::forward<Payload>(payload));
  w->req.data = static_cast<QueuedWrite*>(w.get());
  // libuv copies the buffer list; the bytes stay with the payload.
  const int rc = uv_write(&w->req, stream, bufs.data(), static_cast<unsigned>(bufs.size()), on_written);
  if (rc != 0) {
    state.fail(rc);
    return;
  }
  static_cast<void>(w.release());  // on_written owns it now
}

}  // namespace

void TcpConnection::write(Bytes data, std::shared_ptr<void> keep) {
  State* s = state_.get();
  if (!s || !s->open || data.empty()) return;
  uv_buf_t whole = uv_buf_init(reinterpret_cast<char*>(data.data()), static_cast<unsigned>(data.size()));
  const std::size_t total = data.size();
  write_in_order(*s, std::span(&whole, 1), total, KeptBytes{std::move(data), std::move(keep)});
}

void TcpConnection::write(WireFrame frame) {
  if (frame.borrowed.empty()) {
    write(std::move(frame.own));
    return;
  }
  State* s = state_.get();
  if (!s || !s->open || frame.empty()) return;
  std::vector<uv_buf_t> bufs;
  bufs.reserve(2 * frame.borrowed.size() + 1);
  frame.for_each_piece([&](ByteView piece) {
    // libuv only reads from a write's buffers.
    bufs.push_back(uv_buf_init(const_cast<char*>(reinterpret_cast<const char*>(piece.data())),
                               static_cast<unsigned>(piece.size())));
  });
  const std::size_t total = frame.size();
  write_in_order(*s, bufs, total, std::move(frame));
}

}  // namespace pp::net
