// Issue 17: a Produce request's batches go to the socket from the buffers
// the pipeline built them in (one writev with the request's own bytes
// between them), instead of being copied into one request buffer first.
#include <memory>
#include <vector>

#include "proxy/net/tcp.h"

namespace pp::net {

namespace {

struct FrameWriteRequest {
  uv_write_t req{};
  WireFrame frame;  // owns the header bytes, keeps the borrowed ones alive
};

// Drops the first `n` bytes from `bufs`, from its front.
void advance(std::vector<uv_buf_t>& bufs, std::size_t n) {
  std::size_t done = 0;
  while (done < bufs.size() && n >= bufs[done].len) n -= bufs[done++].len;
  bufs.erase(bufs.begin(), bufs.begin() + static_cast<std::ptrdiff_t>(done));
  if (n > 0 && !bufs.empty()) {
    bufs.front().base += n;
    bufs.front().len -= n;
  }
}

}  // namespace

void TcpConnection::write(WireFrame frame) {
  if (frame.borrowed.empty()) {
    write(std::move(frame.own));
    return;
  }
  State* s = state_.get();
  if (!s || !s->open || frame.empty()) return;
  auto* stream = reinterpret_cast<uv_stream_t*>(&s->handle);
  std::vector<uv_buf_t> bufs;
  bufs.reserve(2 * frame.borrowed.size() + 1);
  frame.for_each_piece([&](ByteView piece) {
    // libuv only reads from a write's buffers.
    bufs.push_back(uv_buf_init(const_cast<char*>(reinterpret_cast<const char*>(piece.data())),
                               static_cast<unsigned>(piece.size())));
  });
  // As TcpConnection::write(Bytes): try first, queue only the rest, and
  // never jump writes already queued. Most requests go whole, and then no
  // write request is allocated.
  if (uv_stream_get_write_queue_size(stream) == 0) {
    const int written = uv_try_write(stream, bufs.data(), static_cast<unsigned>(bufs.size()));
    if (written > 0 && static_cast<std::size_t>(written) == frame.size()) return;
    if (written > 0) advance(bufs, static_cast<std::size_t>(written));
  }
  // Moving the frame keeps its buffers where they are, so `bufs` stays valid.
  auto w = std::make_unique<FrameWriteRequest>();
  w->frame = std::move(frame);
  w->req.data = w.get();
  const int rc =
      uv_write(&w->req, stream, bufs.data(), static_cast<unsigned>(bufs.size()), [](uv_write_t* req, int status) {
        std::unique_ptr<FrameWriteRequest> done(static_cast<FrameWriteRequest*>(req->data));
        auto* st = static_cast<State*>(req->handle->data);
        if (status != 0 && status != UV_ECANCELED) st->fail(status);
      });
  if (rc != 0) {
    s->fail(rc);
    return;
  }
  static_cast<void>(w.release());  // the write callback owns it now
}

}  // namespace pp::net
