#include "proxy/frontend/client_session.h"

#include "proxy/frontend/log.h"
#include "proxy/frontend/request_dispatch.h"

namespace pp {

void ResponseSlot::send(Bytes frame) const {
  if (auto s = session_.lock()) s->fill(seq_, std::move(frame));
}

std::shared_ptr<ClientSession> ResponseSlot::session() const {
  auto s = session_.lock();
  return (s && !s->closed()) ? s : nullptr;
}

ClientSession::ClientSession(std::shared_ptr<FrontendContext> context, net::TcpConnection connection, std::uint64_t id)
    : context_(std::move(context)),
      connection_(std::move(connection)),
      id_(id),
      peer_(connection_.peer_name()),
      reader_(context_->config.max_request_bytes) {}

void ClientSession::start() {
  // The callbacks hold the session: a callback that closes it (and so makes
  // the front end drop it) still runs to its end on a live object. close()
  // detaches them, which breaks the cycle.
  auto self = shared_from_this();
  connection_.set_callbacks([self](ByteView data) { self->on_data(data); },
                            [self](int status) { self->on_peer_closed(status); });
  last_activity_ms_ = uv_now(context_->loop);
  update_reading();
}

std::string ClientSession::describe() const {
  if (client_id_.empty()) return "client " + peer_;
  return "client " + peer_ + " (client_id '" + client_id_ + "')";
}

void ClientSession::set_client_software(const std::string& name, const std::string& version) {
  // Bounded like client_id: a label, not a payload.
  software_name_ = name.substr(0, 64);
  software_version_ = version.substr(0, 64);
}

std::pair<std::string, std::string> ClientSession::client_software() const {
  if (!software_name_.empty()) return {software_name_, software_version_};
  return {client_id_.empty() ? std::string("unknown") : client_id_, std::string()};
}

void ClientSession::set_client_id(const std::optional<std::string>& client_id) {
  // Bounded: a peer's client_id is up to 32767 bytes; logs get the first 64.
  if (client_id && client_id_.empty()) client_id_ = client_id->substr(0, 64);
}

bool ClientSession::can_process() const {
  return !closed_ && !closing_ && !context_->paused && !context_->stopped &&
         pending_.size() < context_->config.max_pending_requests_per_connection;
}

void ClientSession::update_reading() {
  if (closed_) return;
  // Frames read before a pause (or before a failure in the same read) are
  // answered first. Never from here directly: this runs inside sink and
  // directory callbacks, and a request handled there would re-enter the sink.
  if (!processing_ && can_process() && (reader_.ready_frames() > 0 || stream_failure_)) schedule_processing();
  apply_read_state();
}

void ClientSession::apply_read_state() {
  if (closed_ || closing_) return;
  const bool want =
      can_process() && !stream_failure_ && connection_.write_queue_bytes() <= context_->config.max_write_queue_bytes;
  if (want && !connection_.reading()) {
    connection_.start_reading();
  } else if (!want && connection_.reading()) {
    connection_.stop_reading();
  }
}

void ClientSession::schedule_processing() {
  if (processing_scheduled_ || !context_->defer) return;
  processing_scheduled_ = true;
  context_->defer([weak = weak_from_this()] {
    if (auto self = weak.lock()) {
      self->processing_scheduled_ = false;
      self->process_frames();
    }
  });
}

void ClientSession::on_data(ByteView data) {
  if (closed_ || closing_ || stream_failure_) return;
  last_activity_ms_ = uv_now(context_->loop);
  auto appended = reader_.append(data);
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

void ClientSession::process_frames() {
  // Re-entered from a response that completes inside dispatch (ApiVersions,
  // a Produce whose every entry failed): the outer loop carries on.
  if (processing_) return;
  processing_ = true;
  while (can_process()) {
    auto frame = reader_.pop();
    if (!frame) break;
    dispatch_request(*this, std::make_shared<const Bytes>(std::move(*frame)));
  }
  processing_ = false;
  if (stream_failure_ && reader_.ready_frames() == 0 && !closing_ && !closed_) {
    close_after_pending(*stream_failure_);
  }
  apply_read_state();  // e.g. the pending-response cap was reached
}

ResponseSlot ClientSession::reserve_response() {
  if (pending_.empty()) first_pending_seq_ = next_seq_;
  pending_.emplace_back();
  return ResponseSlot(weak_from_this(), next_seq_++);
}

void ClientSession::fill(std::uint64_t seq, Bytes frame) {
  if (closed_ || seq < first_pending_seq_ || seq - first_pending_seq_ >= pending_.size()) return;
  pending_[seq - first_pending_seq_].frame = std::move(frame);
  flush();
}

void ClientSession::flush() {
  bool wrote = false;
  while (!pending_.empty() && pending_.front().frame) {
    connection_.write(std::move(*pending_.front().frame));
    pending_.pop_front();
    ++first_pending_seq_;
    wrote = true;
  }
  if (wrote) last_activity_ms_ = uv_now(context_->loop);
  if (closing_ && pending_.empty()) {
    finish_close();
    return;
  }
  update_reading();
}

void ClientSession::close_after_pending(const std::string& reason) {
  if (closing_ || closed_) return;
  closing_ = true;
  ++context_->counters.connections_closed_for_errors_total;
  frontend::log().warn("closing {}: {}", describe(), reason);
  connection_.stop_reading();
  if (pending_.empty()) finish_close();
}

void ClientSession::finish_then_close() {
  if (closing_ || closed_) return;
  closing_ = true;
  connection_.stop_reading();
  if (pending_.empty()) finish_close();
}

void ClientSession::close_now() {
  if (closed_) return;
  finish_close();
}

void ClientSession::on_peer_closed(int status) {
  if (closed_) return;
  // Records of pending requests stay with the sink and are still delivered;
  // their answers are dropped (the slots find the session closed).
  frontend::log().debug("{} disconnected ({}) with {} responses pending", describe(),
                        status == 0 ? "end of stream" : uv_strerror(status), pending_.size());
  finish_close();
}

void ClientSession::finish_close() {
  closed_ = true;
  pending_.clear();
  connection_.close();  // detaches our callbacks
  if (context_->session_closed) context_->session_closed(id_);
}

bool ClientSession::idle(std::uint64_t now_ms) const {
  return !closed_ && !closing_ && !context_->paused && pending_.empty() && reader_.ready_frames() == 0 &&
         now_ms - last_activity_ms_ >= static_cast<std::uint64_t>(context_->config.idle_timeout_ms);
}

}  // namespace pp
