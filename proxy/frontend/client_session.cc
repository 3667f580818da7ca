#include "proxy/frontend/client_session.h"

#include <algorithm>
#include <cassert>
#include <string>
#include <utility>

#include "proxy/frontend/log.h"
#include "proxy/frontend/sasl_handler.h"

namespace pp {

void ResponseSlot::send(Bytes frame) const {
  if (auto s = session_.lock()) s->fill(seq_, std::move(frame));
}

std::shared_ptr<ClientSession> ResponseSlot::session() const {
  auto s = session_.lock();
  return (s && !s->closed()) ? s : nullptr;
}

ClientSession::ClientSession(std::shared_ptr<FrontendContext> context, net::AcceptedConnection connection,
                             std::uint64_t id, SessionRegistry& registry, RequestRouter& router)
    : context_(std::move(context)),
      connection_(std::move(connection)),
      id_(id),
      registry_(registry),
      router_(router),
      peer_(connection_.peer_name()),
      loopback_peer_(peer_is_loopback(peer_)),
      access_(context_->access_rules.resolve(principal_, loopback_peer_)),
      auth_(!context_->config.sasl_mechanisms.empty()),
      reader_(auth_.required() ? std::min(context_->config.max_request_bytes, kUnauthenticatedMaxFrameBytes)
                               : context_->config.max_request_bytes),
      frames_charge_(context_->sink.memory_budget().charge(MemoryUse::kRequestFrames, 0, account_)) {}

void ClientSession::start() {
  // The callbacks hold the session: a callback that closes it (and so makes
  // the front end drop it) still runs to its end on a live object. close()
  // detaches them, which breaks the cycle.
  auto self = shared_from_this();
  connection_.set_callbacks([self](ByteView data) { self->on_data(data); },
                            [self](int status) { self->on_peer_closed(status); });
  connection_.set_read_target([self] { return self->read_target(); }, [self](std::size_t n) { self->on_read_into(n); });
  last_activity_ms_ = uv_now(context_->loop);
  flow().join(id_, self);
  watch_account();
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

void ClientSession::set_principal(Principal principal) {
  frontend::log().debug("{}: authenticated as {}", describe(), principal.describe());
  // Its share of the budget moves to the new principal's (FlowControl).
  if (counted_active_ && principal.name() != principal_.name()) {
    flow().set_active(false, principal_.name());
    flow().set_active(true, principal.name());
  }
  principal_ = std::move(principal);
  access_ = context_->access_rules.resolve(principal_, loopback_peer_);
}

void ClientSession::throttle(std::uint64_t ms) {
  if (ms == 0 || closed_) return;
  const std::uint64_t until = uv_now(context_->loop) + ms;
  if (until <= throttled_until_ms_) return;
  throttled_until_ms_ = until;
  if (!throttle_timer_) throttle_timer_ = net::Timer(context_->loop);
  std::weak_ptr<ClientSession> weak = weak_from_this();
  throttle_timer_.start(ms, 0, [weak] {
    if (auto self = weak.lock()) self->update_reading();
  });
  apply_read_state();
}

bool ClientSession::throttled() const {
  return throttled_until_ms_ > uv_now(context_->loop);
}

void ClientSession::lift_unauthenticated_frame_limit() {
  reader_.set_max_frame_bytes(context_->config.max_request_bytes);
}

bool ClientSession::can_take_request() const {
  return !closed_ && !closing_ && !context_->stopped && !throttled() && !auth_.checking() &&
         pending_.size() < context_->config.max_pending_requests_per_connection;
}

// Frames admitted before a pause are handled through it: their memory was
// reserved at their size prefix, and only they can make progress when the
// budget is full of frames (Kafka's request memory pool works the same way).
bool ClientSession::can_process() const {
  if (parked_request_) return !closed_ && parked_request_fits();
  return can_take_request() && (admitted_ready_ > 0 || may_start_frame(unadmitted_ready_bytes()));
}

// A request parked for room to decode in goes on once that room is there, or
// once nothing in the pipeline will free more (it then decodes into the room
// plus the overdraft, or is refused for a retry: decode_room.h).
bool ClientSession::parked_request_fits() const {
  return decode_room() >= parked_reservation_.bytes() || context_->sink.memory_budget().draining() == 0;
}

// The budget's room; for a connection under its share while another holds
// more, at least what is left of the fair-share headroom, so a request it
// was admitted with in the headroom is also decoded in it, not parked until
// the other's records time out.
std::size_t ClientSession::decode_room() const {
  const std::size_t room = context_->sink.memory_budget().room();
  FlowControl& flow = this->flow();
  const std::size_t headroom = flow.share_headroom();
  // What is left of the headroom is at most all of it: with that much room
  // the answer is the room, without going round every session to count what
  // the others hold (a round per request costs in proportion to the number
  // of clients).
  if (room >= headroom || over_share() || flow.active_with(counted_active_) < 2) return room;
  const std::size_t held = flow.under_share_held(flow.fair_share(counted_active_));
  return held < headroom ? std::max(room, headroom - held) : room;
}

void ClientSession::park_request(std::size_t room_wanted, std::function<void(ClientSession&)> retry) {
  parked_request_ = std::move(retry);
  parked_reservation_ = context_->sink.memory_budget().reserve_room(room_wanted);
}

// Not reading for want of room (not a pause: the budget's own listener ends
// that): the release that makes the room wakes this connection.
void ClientSession::wait_for_room() {
  if (flow().paused()) return;
  MemoryBudget& budget = context_->sink.memory_budget();
  if (parked_request_) {
    if (!parked_request_fits()) budget.want_room(parked_reservation_.bytes());
    return;
  }
  const std::size_t waiting = waiting_frame_bytes() + unadmitted_ready_bytes();
  if (waiting > 0 && !budget.admits(waiting)) budget.want_room(waiting);
}

void ClientSession::update_reading() {
  if (closed_) return;
  const std::size_t admitted_before = admitted_ready_;
  admit_ready_frames();  // read during a pause: theirs now
  if (admitted_ready_ != admitted_before) charge_frames();
  // Frames read before a pause (or before a failure in the same read) are
  // answered first. Never from here directly: this runs inside sink and
  // directory callbacks, and a request handled there would re-enter the sink.
  if (!processing_ && can_process() && (reader_.ready_frames() > 0 || stream_failure_ || parked_request_)) {
    schedule_processing();
  }
  apply_read_state();
  refresh_active();
}

bool ClientSession::finishing_admitted_frame() const {
  return reader_.in_partial_frame() && partial_admitted_ && !context_->stopped;
}

void ClientSession::apply_read_state() {
  if (closed_ || closing_) return;
  const bool want = can_take_request() &&
                    (finishing_admitted_frame() || may_start_frame(waiting_frame_bytes() + unadmitted_ready_bytes())) &&
                    !stream_failure_ && connection_.write_queue_bytes() <= context_->config.max_write_queue_bytes;
  if (!want) wait_for_room();
  if (want && !connection_.reading()) {
    if (!admit_waiting_frame()) return;
    connection_.start_reading();
    if (reads_stopped_ms_ != 0 && backlog_since_ms_ == 0) backlog_since_ms_ = reads_stopped_ms_;
    reads_stopped_ms_ = 0;
    // The frame deadline counts only time we were willing to read.
    if (reader_.in_partial_frame()) partial_reading_since_ms_ = uv_now(context_->loop);
  } else if (!want && connection_.reading()) {
    connection_.stop_reading();
    reads_stopped_ms_ = uv_now(context_->loop);
    partial_reading_since_ms_ = 0;
    if (over_share()) flow().count_share_pause();
  }
}

bool ClientSession::frame_overdue(std::uint64_t now_ms) const {
  const std::int64_t limit = context_->config.frame_timeout_ms;
  return !closed_ && !closing_ && limit > 0 && partial_reading_since_ms_ != 0 && connection_.reading() &&
         now_ms - partial_reading_since_ms_ >= static_cast<std::uint64_t>(limit);
}

void ClientSession::schedule_processing() {
  if (processing_scheduled_) return;
  processing_scheduled_ = true;
  context_->defer([weak = weak_from_this()] {
    if (auto self = weak.lock()) {
      self->processing_scheduled_ = false;
      self->process_frames();
    }
  });
}

// The frame, charged to the budget for as long as anything holds it: the
// runs decoded from a Produce point into it until they complete.
std::shared_ptr<const FrameBuffer> ClientSession::charged(FrameBuffer frame) {
  struct ChargedFrame {
    FrameBuffer bytes;
    MemoryCharge charge;
  };
  auto holder = std::make_shared<ChargedFrame>();
  holder->charge = context_->sink.memory_budget().charge(MemoryUse::kRequestFrames, frame.capacity(), account_);
  holder->bytes = std::move(frame);
  charge_frames();  // after the frame's own charge, so the total never dips
  return {holder, &holder->bytes};
}

void ClientSession::process_frames() {
  // Re-entered from a response that completes inside dispatch (ApiVersions,
  // a Produce whose every entry failed): the outer loop carries on.
  if (processing_) return;
  processing_ = true;
  while (can_process()) {
    if (parked_request_) {
      // It may park again, for more room than there is now: the loop stops.
      parked_reservation_.reset();
      std::exchange(parked_request_, nullptr)(*this);
      continue;
    }
    auto frame = reader_.pop();
    if (!frame) break;
    request_receipt_ms_ = uv_now(context_->loop);
    if (!ready_receipts_.empty()) {
      request_receipt_ms_ = ready_receipts_.front();
      ready_receipts_.pop_front();
    }
    if (admitted_ready_ > 0) {  // admitted frames are the oldest ones
      --admitted_ready_;
      admitted_ready_bytes_ -= std::min(admitted_ready_bytes_, frame->size());
    }
    router_.route(*this, charged(std::move(*frame)));
  }
  processing_ = false;
  if (stream_failure_ && reader_.ready_frames() == 0 && !parked_request_ && !closing_ && !closed_) {
    close_after_pending(*stream_failure_);
  }
  apply_read_state();  // e.g. the pending-response cap was reached
  refresh_active();
}

ResponseSlot ClientSession::reserve_response() {
  if (pending_.empty()) first_pending_seq_ = next_seq_;
  pending_.emplace_back();
  return ResponseSlot(weak_from_this(), next_seq_++);
}

void ClientSession::fill(std::uint64_t seq, Bytes frame) {
  if (closed_ || seq < first_pending_seq_ || seq - first_pending_seq_ >= pending_.size()) return;
  Pending& slot = pending_[seq - first_pending_seq_];
  slot.charge = context_->sink.memory_budget().charge(MemoryUse::kResponses, frame.size(), account_);
  slot.frame = std::move(frame);
  flush();
}

void ClientSession::flush() {
  bool wrote = false;
  while (!pending_.empty() && pending_.front().frame) {
    Pending& front = pending_.front();
    connection_.write(std::move(*front.frame), std::make_shared<MemoryCharge>(std::move(front.charge)));
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
  note_abandoned_login(*this);  // before closed_: a login still under way is counted as a failure
  closed_ = true;
  pending_.clear();
  parked_reservation_.reset();
  parked_request_ = nullptr;  // not taken yet: the client hears nothing of it, as of a frame never read
  reader_ = FrameReader(context_->config.max_request_bytes);
  ready_receipts_.clear();
  admitted_ready_ = 0;
  admitted_ready_bytes_ = 0;
  charge_frames();
  // Charges of its runs outlive it; they count into an account nobody asks.
  account_->set_release_listener(nullptr);
  account_->set_holding_listener(nullptr);
  refresh_active();
  connection_.close();  // detaches our callbacks
  throttle_timer_.stop();
  flow().leave(id_);
  registry_.session_closed(id_);
}

bool ClientSession::idle(std::uint64_t now_ms) const {
  return !closed_ && !closing_ && !flow().paused() && pending_.empty() && reader_.ready_frames() == 0 &&
         !parked_request_ && now_ms - last_activity_ms_ >= static_cast<std::uint64_t>(context_->config.idle_timeout_ms);
}

// "Fair share" ("Bounded everything", docs/design/ARCHITECTURE.md): a new
// frame needs room in the budget and this connection under its share of it.
// `announced`: the frame's size when its prefix is known, 0 when deciding
// whether to read one.
bool ClientSession::may_start_frame(std::size_t announced) const {
  if (context_->stopped || over_share()) return false;
  if (budget_admits(announced)) return true;
  // Over the budget (or the frame does not fit in it) and under its share:
  // another connection holds more than its own (a client of a stalled
  // partition, say). The connections under their share may hold a headroom
  // on top, together, so they are not starved until the other's records time
  // out; never for a lone client.
  // The share as the asker sees it: counting itself, as it would hold what it asks for.
  return flow().headroom_admits(counted_active_, announced);
}

bool ClientSession::take_frame(std::size_t announced) {
  if (!may_start_frame(announced)) return false;
  if (!budget_admits(announced)) flow().headroom_taken(announced);
  return true;
}

// "Admission fits whole" ("Bounded everything", docs/design/ARCHITECTURE.md):
// a frame is admitted only if it fits whole, so the budget is never crossed
// by the last frame let in under it.
bool ClientSession::budget_admits(std::size_t announced) const {
  return flow().budget_admits(announced);
}

// Holding nothing, a connection is never over its share: one frame is always
// admissible when the budget has room.
bool ClientSession::over_share() const {
  const std::size_t held = account_->held();
  return held > 0 && held >= flow().fair_share(counted_active_, principal_.name());
}

std::size_t ClientSession::waiting_frame_bytes() const {
  if (!reader_.in_partial_frame() || partial_admitted_) return 0;
  return reader_.partial_bytes() + reader_.partial_remaining();
}

// Complete frames read while new frames could not start (one read's worth).
std::size_t ClientSession::unadmitted_ready_bytes() const {
  const std::size_t ready_bytes = reader_.buffered_bytes() - reader_.partial_bytes();
  // The admitted counts never exceed what the reader holds: a count past it
  // would wrap and stop the connection for good.
  assert(admitted_ready_bytes_ <= ready_bytes && admitted_ready_ <= reader_.ready_frames());
  return ready_bytes - admitted_ready_bytes_;
}

bool ClientSession::waiting_to_start() const {
  return (reader_.in_partial_frame() && !partial_admitted_) || reader_.ready_frames() > admitted_ready_;
}

// Active: holding bytes or waiting to start a frame; the share divides the
// budget among these only, so a lone client gets all of it.
void ClientSession::refresh_active() {
  const bool active = !closed_ && (account_->held() > 0 || waiting_to_start());
  if (active == counted_active_) return;
  counted_active_ = active;
  flow().set_active(active, principal_.name());
}

// Releases run inside whoever freed the bytes (a sink completion, a write):
// only bookkeeping here, the re-check of reads on a later loop turn.
void ClientSession::watch_account() {
  std::weak_ptr<ClientSession> weak = weak_from_this();
  account_->set_holding_listener([weak] {
    if (auto self = weak.lock()) self->refresh_active();
  });
  account_->set_release_listener([weak] {
    auto self = weak.lock();
    if (!self || self->closed_ || self->closing_ || self->connection_.reading() || self->wake_scheduled_) return;
    self->wake_scheduled_ = true;
    self->context_->defer([weak] {
      if (auto s = weak.lock()) {
        s->wake_scheduled_ = false;
        s->update_reading();
      }
    });
  });
}

// A client's bytes into request frames, and the frames into the memory
// budget: which are admitted, what they are charged, from the size prefix on.

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
  // Each frame this read completed, with when its client's clock started.
  const std::uint64_t receipt = backlog_since_ms_ != 0 ? backlog_since_ms_ : last_activity_ms_;
  for (std::size_t f = start.ready_frames; f < reader_.ready_frames(); ++f) ready_receipts_.push_back(receipt);
  if (backlog_since_ms_ != 0 && connection_.unread_bytes() == 0) backlog_since_ms_ = 0;
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
  flow().after_charge();
  if (!appended) {
    const DecodeError& e = appended.error();
    if (e.kind == DecodeErrorKind::kTooLarge && auth_.required() && !auth_.authenticated()) {
      stream_failure_ = "frame size prefix over " + std::to_string(kUnauthenticatedMaxFrameBytes) +
                        " bytes before SASL authentication (a SASL token is refused unread)";
    } else if (e.kind == DecodeErrorKind::kTooLarge) {
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
