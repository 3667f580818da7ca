// One client connection: framing (max_request_bytes from the size prefix),
// requests dispatched in arrival order, and responses written strictly in
// request order whatever order their answers complete in (the protocol
// guide's promise, which clients rely on to match correlation ids).
//
// Each request that will be answered reserves a slot in a queue; a response
// is written when its slot and every earlier one are filled. A failed stream
// (oversize or malformed frame, unknown API) stops reading at once and closes
// once the earlier requests' responses are written, so a client pipelining
// requests does not lose answers to requests that were fine (and then retry
// records that were in fact delivered).
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "proxy/frontend/client_auth.h"
#include "proxy/frontend/flow_control.h"
#include "proxy/frontend/frontend_context.h"
#include "proxy/frontend/principal.h"
#include "proxy/net/accepted_connection.h"
#include "proxy/net/tcp.h"
#include "proxy/net/timer.h"
#include "proxy/protocol/frame.h"

namespace pp {

class ClientSession;

// Where a session hands each complete request frame, in arrival order
// (RequestDispatch, request_dispatch.h). Called from the session's own frame
// loop; the handler may answer, park or close within the call.
class RequestRouter {
 public:
  virtual void route(ClientSession& session, std::shared_ptr<const FrameBuffer> frame) = 0;

 protected:
  ~RequestRouter() = default;
};

// Whoever keeps the open sessions (Frontend): told once, from inside the
// session's close (on any of its callbacks), that session `id` closed. It
// may drop its reference; the session has finished with it by then.
class SessionRegistry {
 public:
  virtual void session_closed(std::uint64_t id) = 0;

 protected:
  ~SessionRegistry() = default;
};

// A reserved place in a session's response order. Filling it after the
// session closed (the client left, the front end stopped) does nothing: the
// records a request submitted are the sink's and are delivered anyway.
class ResponseSlot {
 public:
  ResponseSlot() = default;
  ResponseSlot(std::weak_ptr<ClientSession> session, std::uint64_t seq) : session_(std::move(session)), seq_(seq) {}

  void send(Bytes frame) const;
  // The session, while it is open.
  std::shared_ptr<ClientSession> session() const;

 private:
  std::weak_ptr<ClientSession> session_;
  std::uint64_t seq_ = 0;
};

// Flow control (FlowControl, reached through context().flow) decides when
// it may read; the session asks it at each frame boundary and joins its
// roster to be woken. Loop thread only; all of it runs on the session's own
// callbacks or the front end's passes.
class ClientSession final : public std::enable_shared_from_this<ClientSession>, public FlowConnection {
 public:
  // `registry` (Frontend) and `router` must outlive the session's open life:
  // the front end closes every session before it goes.
  ClientSession(std::shared_ptr<FrontendContext> context, net::AcceptedConnection connection, std::uint64_t id,
                SessionRegistry& registry, RequestRouter& router);
  ClientSession(const ClientSession&) = delete;
  ClientSession& operator=(const ClientSession&) = delete;

  // Joins flow control and starts reading if admission allows.
  void start();
  // Back-pressure, shares or room changed: start or stop reading.
  void update_reading() override;
  // Stop reading now; close once every earlier response is written.
  void close_after_pending(const std::string& reason);
  // Shutdown: read no more requests, answer the ones read, then close.
  void finish_then_close();
  // Close at once, dropping unwritten responses (front end stopping).
  void close_now();

  // "Bounded everything" (docs/design/ARCHITECTURE.md): a request whose
  // decoding did not fit in the budget's room waits, ahead of every later
  // frame, until `room_wanted` is free (or nothing in the pipeline will free
  // more), and is then handled again by `retry`. Meanwhile that room is
  // reserved: new frames of every connection are admitted only beside it.
  void park_request(std::size_t room_wanted, std::function<void(ClientSession&)> retry);
  // What a request of this connection may decode into now.
  std::size_t decode_room() const;

  ResponseSlot reserve_response();
  void fill(std::uint64_t seq, Bytes frame);

  // No bytes either way for idle_timeout_ms and nothing owed to the client.
  bool idle(std::uint64_t now_ms) const;
  // A request frame begun and not finished within listener.frame_timeout_ms
  // of reading it (a peer trickling bytes to hold memory and a slot).
  bool frame_overdue(std::uint64_t now_ms) const;
  std::size_t partial_frame_bytes() const { return reader_.buffered_bytes(); }

  std::uint64_t id() const { return id_; }
  // When the request now being handled reached the proxy, as far as its
  // client's clock is concerned (loop ms): when its last bytes were read or,
  // for a request the client sent while reads were stopped and that waited
  // in the kernel, when reads stopped. A request's deadline counts from here
  // (produce_deadlines.h), never from the later moment it is handled.
  std::uint64_t request_receipt_ms() const { return request_receipt_ms_; }
  const std::string& peer() const { return peer_; }
  // "peer 127.0.0.1:5555 (client_id kcat)" once a header named it.
  std::string describe() const;
  void set_client_id(const std::optional<std::string>& client_id);
  // From ApiVersions v3+ (KIP-511): what the client says it is.
  void set_client_software(const std::string& name, const std::string& version);
  // For the client_produce_requests_total metric: the software name and
  // version when the client sent them, else its client_id and "".
  std::pair<std::string, std::string> client_software() const;
  // Who the client is: ANONYMOUS until its authentication (client TLS or
  // SASL) completes and calls set_principal. Authorization, quotas and the
  // per-principal metrics of every later request use it; a request already
  // handled keeps the principal it was handled under.
  const Principal& principal() const { return principal_; }
  void set_principal(Principal principal);
  // What the principal may do (AccessRules), resolved when it is set.
  const Access& access() const { return access_; }
  // KIP-219: mute the connection for `ms` after a request over its
  // principal's quota: no request is read or handled until then (responses
  // still go out). A later throttle extends, never shortens, the mute.
  void throttle(std::uint64_t ms);
  bool throttled() const;
  // SASL on this connection (client_auth.h): its stage, the exchange in
  // progress, whether and until when it is authenticated.
  ClientAuth& auth() { return auth_; }
  // Once a client authenticated: frames up to listener.max_request_bytes,
  // no longer kUnauthenticatedMaxFrameBytes.
  void lift_unauthenticated_frame_limit();
  bool closed() const { return closed_; }
  std::size_t pending_responses() const { return pending_.size(); }
  // What is charged on this connection's behalf (frames, its runs' decoded
  // records, responses): its part of the fair share.
  const std::shared_ptr<MemoryAccount>& memory_account() const { return account_; }
  std::size_t held_bytes() const override { return account_->held(); }
  bool reading() const override { return connection_.reading(); }
  FrontendContext& context() { return *context_; }
  std::shared_ptr<FrontendContext> shared_context() const { return context_; }

 private:
  struct Pending {
    std::optional<Bytes> frame;  // filled: ready to write once it reaches the front
    MemoryCharge charge;         // the filled frame's bytes, until written
  };

  // What on_data and on_read_into compare after a read: the reader's
  // counts before it, from which the read's frames are told apart.
  struct ReadStart {
    std::uint64_t frames_started = 0;
    std::size_t ready_frames = 0;
    bool was_partial = false;
  };
  bool drops_reads() const { return closed_ || closing_ || stream_failure_.has_value(); }
  ReadStart read_start() const;
  void on_data(ByteView data);
  std::span<std::uint8_t> read_target();
  void on_read_into(std::size_t n);
  void after_read(const ReadStart& start, const Decoded<void>& appended);
  void on_peer_closed(int status);
  void process_frames();
  bool can_take_request() const;
  bool can_process() const;
  void count_admitted(std::size_t ready_before, bool was_partial);
  void admit_ready_frames();
  void apply_read_state();
  void schedule_processing();
  void flush();
  void finish_close();
  bool finishing_admitted_frame() const;
  std::shared_ptr<const FrameBuffer> charged(FrameBuffer frame);
  void charge_frames();
  bool admit_waiting_frame();
  bool may_start_frame(std::size_t announced) const;
  bool take_frame(std::size_t announced);
  bool budget_admits(std::size_t announced) const;
  bool parked_request_fits() const;
  void wait_for_room();
  bool over_share() const;
  std::size_t waiting_frame_bytes() const;
  std::size_t unadmitted_ready_bytes() const;
  bool waiting_to_start() const;
  void refresh_active();
  void watch_account();
  // Open sessions only (see FrontendContext::flow).
  FlowControl& flow() const { return *context_->flow; }

  std::shared_ptr<FrontendContext> context_;
  net::AcceptedConnection connection_;  // plaintext, or TLS with its handshake done
  std::uint64_t id_;
  SessionRegistry& registry_;
  RequestRouter& router_;
  std::string peer_;
  std::string client_id_;
  std::string software_name_;
  std::string software_version_;
  Principal principal_;
  bool loopback_peer_ = false;  // the peer's address is a loopback one
  Access access_ = Access::unrestricted();
  std::uint64_t throttled_until_ms_ = 0;  // loop ms; reads muted before it
  net::Timer throttle_timer_;             // wakes reading when the mute ends
  ClientAuth auth_;
  FrameReader reader_;
  // Shared with every charge made for this connection; some (its runs')
  // outlive the session, so the session only detaches its listeners.
  std::shared_ptr<MemoryAccount> account_ = std::make_shared<MemoryAccount>();
  bool counted_active_ = false;  // counted active by FlowControl
  bool wake_scheduled_ = false;  // a release will re-check whether to read
  // The frames reader_ holds, partial ones at their announced size.
  MemoryCharge frames_charge_;
  // The partial frame began while reads were allowed: it may be read to its
  // end through a pause (its bytes were reserved at its prefix), while one
  // begun during a pause waits for the pause to end.
  bool partial_admitted_ = false;
  std::size_t admitted_ready_ = 0;              // complete frames, oldest first, admitted so
  std::size_t admitted_ready_bytes_ = 0;        // their bytes, kept as frames come and go
  std::uint64_t partial_reading_since_ms_ = 0;  // 0: no partial frame being read
  std::deque<Pending> pending_;
  std::uint64_t first_pending_seq_ = 0;  // seq of pending_.front()
  std::uint64_t next_seq_ = 0;
  std::uint64_t last_activity_ms_ = 0;
  // Receipt times (request_receipt_ms) of the complete frames reader_ holds,
  // oldest first, one per frame.
  std::deque<std::uint64_t> ready_receipts_;
  std::uint64_t request_receipt_ms_ = 0;
  // Reads stopped at this time (0: reading); once they start again, what the
  // kernel held then is a backlog the client sent meanwhile, whose frames get
  // backlog_since_ms_ as their receipt until the kernel holds nothing unread.
  std::uint64_t reads_stopped_ms_ = 0;
  std::uint64_t backlog_since_ms_ = 0;
  std::function<void(ClientSession&)> parked_request_;  // see park_request
  MemoryBudget::RoomReservation parked_reservation_;    // held back from new frames meanwhile
  std::optional<std::string> stream_failure_;           // frames after this point are unusable
  bool processing_ = false;
  bool processing_scheduled_ = false;
  bool closing_ = false;
  bool closed_ = false;
};

}  // namespace pp
