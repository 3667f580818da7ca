// A client's bytes into request frames, and the frames into the memory
// budget: which are admitted, what they are charged, from the size prefix on.
#include <string>

#include "proxy/frontend/client_session.h"

namespace pp {

// Of the frames one read completed, the first may finish the partial frame
// carried over (admitted or not when it began); the others began in this read.
// Admitted frames are always the oldest ready ones (process_frames counts
// them off the front): the finished one stays admitted only if every older
// frame is, and the rest are admitted together with any older ones waiting.
void ClientSession::count_admitted(std::size_t ready_before, bool was_partial) {
  const std::size_t completed = reader_.ready_frames() - ready_before;
  if (completed == 0) return;
  if (was_partial && partial_admitted_ && admitted_ready_ == ready_before) {
    const std::size_t fresh = completed - 1;  // begun in this read
    ++admitted_ready_;
    admitted_ready_bytes_ += reader_.newest_ready_bytes(completed) - reader_.newest_ready_bytes(fresh);
  }
  admit_ready_frames();
}

// Every complete frame not admitted yet, at once, or none of them.
void ClientSession::admit_ready_frames() {
  if (admitted_ready_ == reader_.ready_frames() || !take_frame(unadmitted_ready_bytes())) return;
  admitted_ready_ = reader_.ready_frames();
  admitted_ready_bytes_ = reader_.buffered_bytes() - reader_.partial_bytes();
}

// Admitted frames are charged, a partial one at its announced size. Bytes
// read during a pause are not (at most one read's worth per connection):
// charged, they could keep the budget over with nothing able to free it.
void ClientSession::charge_frames() {
  std::size_t bytes = admitted_ready_bytes_;
  if (partial_admitted_) bytes += reader_.partial_bytes() + reader_.partial_remaining();
  frames_charge_.set(bytes);
}

// A partial frame that began during a pause is admitted when reads resume,
// if the budget has room: one at a time, as each admission is charged.
bool ClientSession::admit_waiting_frame() {
  if (!reader_.in_partial_frame() || partial_admitted_) return true;
  if (!take_frame(waiting_frame_bytes())) return false;
  partial_admitted_ = true;
  charge_frames();
  return true;
}

ClientSession::ReadStart ClientSession::read_start() const {
  return {reader_.frames_started(), reader_.ready_frames(), reader_.in_partial_frame()};
}

void ClientSession::on_data(ByteView data) {
  if (drops_reads()) return;
  const ReadStart start = read_start();
  after_read(start, reader_.append(data));
}

// The body of an admitted frame that still needs this much is read
// straight into its buffer. A smaller rest goes through the shared buffer,
// whose one read may also hold the frames after it: a copy that small costs
// less than the extra read a pipelining client would then need.
std::span<std::uint8_t> ClientSession::read_target() {
  constexpr std::size_t kDirectReadMinBytes = 16 * 1024;
  if (drops_reads() || !partial_admitted_ || reader_.partial_remaining() < kDirectReadMinBytes) return {};
  return reader_.writable_tail();
}

// Bytes read into the frame's tail are its own only once committed: dropped
// here as on_data drops a read, they are overwritten by the next ones.
void ClientSession::on_read_into(std::size_t n) {
  if (drops_reads()) return;
  const ReadStart start = read_start();
  reader_.commit(n);
  after_read(start, {});
}

// A read's frames are charged the same whichever way its bytes came.
void ClientSession::after_read(const ReadStart& start, const Decoded<void>& appended) {
  last_activity_ms_ = uv_now(context_->loop);
  count_admitted(start.ready_frames, start.was_partial);
  if (reader_.frames_started() != start.frames_started) {
    partial_admitted_ = false;  // the previous one is complete
    charge_frames();
    partial_admitted_ = reader_.in_partial_frame() && take_frame(waiting_frame_bytes());
    partial_reading_since_ms_ = reader_.in_partial_frame() ? last_activity_ms_ : 0;
  } else if (!reader_.in_partial_frame()) {
    partial_admitted_ = false;  // it is complete: counted in count_admitted
    partial_reading_since_ms_ = 0;
  }
  charge_frames();
  // The bytes just reserved may be what crosses the budget: pause everyone.
  if (context_->after_submit) context_->after_submit();
  if (!appended) {
    const DecodeError& e = appended.error();
    if (e.kind == DecodeErrorKind::kTooLarge) {
      stream_failure_ =
          "request size prefix over max_request_bytes (" + std::to_string(context_->config.max_request_bytes) + ")";
    } else {
      stream_failure_ = "malformed request frame: " + e.describe();
    }
    connection_.stop_reading();
  }
  process_frames();
}

}  // namespace pp
