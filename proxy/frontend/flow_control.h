// Who may read, by the one memory budget ("Bounded everything" in
// docs/design/ARCHITECTURE.md, with its "Fair share" part). FlowControl owns:
//   - the budget-wide pause: at or over the budget no connection starts a new
//     frame until the budget's available listener says memory is back, and the
//     back-pressure time that throttle_time_ms is taken from;
//   - the fair share: the budget over the active principals (those with a
//     connection holding bytes or waiting to start a frame), each principal's
//     part over its active connections, and the headroom the connections
//     under their share may hold together on top while another holds more;
//   - pausing accepts while a newcomer could not start a frame anyway;
//   - waking the connections whose reads may go on (after a resume, a grown
//     share, freed room), in turn, on a later loop turn.
// Connections ask it (ClientSession, through FrontendContext::flow) and join
// its roster as a FlowConnection; it reaches them only through that
// interface. Owned by Frontend. Loop thread only ("One loop thread owns all
// proxy state").
#pragma once

#include <uv.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "proxy/frontend/frontend_observer.h"
#include "proxy/net/deferred.h"
#include "proxy/net/tcp.h"
#include "proxy/pipeline/memory_uses.h"

namespace pp {

// What FlowControl needs of a client connection (ClientSession). A
// connection joins once it reads and leaves when it closes.
class FlowConnection {
 public:
  virtual ~FlowConnection() = default;
  // Start or stop reading as admission now allows. Must not close the
  // connection: FlowControl calls it while going round its roster.
  virtual void update_reading() = 0;
  virtual bool reading() const = 0;
  // What is charged on the connection's behalf: its part of the fair share.
  virtual std::size_t held_bytes() const = 0;
};

class FlowControl {
 public:
  // Every reference must outlive the FlowControl: the budget is the sink's,
  // the listener and the deferred queue Frontend's, the counters and the
  // observer the FrontendContext's. `deferred` runs the wake-ups on a later
  // loop turn, outside the sink or budget callback that caused them.
  FlowControl(uv_loop_t* loop, MemoryBudget& budget, net::TcpListener& listener, net::Deferred& deferred,
              FrontendCounters& counters, FrontendObserver& observer);
  // Gives the budget's listeners back: a late release reaches nothing.
  ~FlowControl();
  FlowControl(const FlowControl&) = delete;
  FlowControl& operator=(const FlowControl&) = delete;

  // Takes the budget's available and room listeners (the front end listens).
  void start();
  // The front end stops: no more pauses, wake-ups or deferred work. Then
  // end_pause() once its connections are closed.
  void stop() { stopped_ = true; }
  // Ends a running pause, its time counted; idempotent.
  void end_pause();

  // The roster: the connections FlowControl wakes and whose held bytes it
  // sums. `id` is the session's; a connection joins once and leaves once.
  void join(std::uint64_t id, std::shared_ptr<FlowConnection> connection);
  void leave(std::uint64_t id) { roster_.erase(id); }
  // Where the next pass over the connections starts, shared by the front
  // end's own passes (sweep, drain, stop) and the wake-ups here, so no client
  // is always first to resume or last to be served. Counts one pass.
  std::size_t take_turn() { return next_turn_++; }

  // The budget-wide pause. After bytes were charged (frame bytes read, runs
  // submitted): at or over the budget, stop reading from every connection
  // until the budget says memory is back.
  bool paused() const { return paused_; }
  void after_charge() {
    if (!paused_ && !stopped_ && budget_.over()) pause();
  }
  // Milliseconds of back-pressure so far, the running pause included. A
  // request's throttle_time_ms is how much of this accrued while it was held.
  std::uint64_t backpressure_ms() const {
    return counters_.backpressure_ms_total + (paused_ ? uv_now(loop_) - paused_since_ms_ : 0);
  }
  // A frame is admitted whole only if the budget has room for it beside the
  // room reserved for parked requests, and never during a pause.
  bool budget_admits(std::size_t announced) const { return !paused_ && budget_.admits(announced); }

  // The fair share. A connection is active while it holds bytes or waits to
  // start a frame; it says when that changes, naming its principal. One
  // going inactive grows the others' shares: those stopped at theirs are
  // woken.
  void set_active(bool active, const std::string& principal);
  // The active connections, counting one more if the asking connection is
  // not active yet (it would be, holding what it asks for).
  std::size_t active_with(bool asker_counted) const { return active_ + (asker_counted ? 0 : 1); }
  // The budget over the active connections, as the asker sees it.
  std::size_t fair_share(bool asker_counted) const {
    return budget_.limit() / std::max<std::size_t>(active_with(asker_counted), 1);
  }
  // A connection's share: the budget over the active principals, then its
  // principal's part over that principal's active connections, as the asker
  // sees it. A principal with many connections, or one throttled or stalled,
  // holds at most its part, so the other principals keep theirs. With one
  // principal (every client anonymous) it is fair_share(asker_counted).
  std::size_t fair_share(bool asker_counted, const std::string& principal) const;
  // Over the budget, connections under their share may together hold this
  // much more: a stalled client holding the whole budget does not starve them.
  std::size_t share_headroom() const { return budget_.limit() / 8; }
  // Bytes held by the connections holding less than `share`: summed at most
  // once a loop millisecond (asked per frame only while the budget is over),
  // with the admissions in the headroom meanwhile added by headroom_taken.
  std::size_t under_share_held(std::size_t share);
  void headroom_taken(std::size_t bytes) { under_share_held_ += bytes; }
  // Whether a connection under its share, `asker_counted` as in active_with,
  // may take `announced` more bytes in the headroom; never for a lone client.
  bool headroom_admits(bool asker_counted, std::size_t announced);
  // A connection stopped reading at its share.
  void count_share_pause();

  // Accepts pause with reads (a session costs memory the budget does not
  // see), but only while a newcomer could not start a frame anyway: over the
  // budget a connection under its share is admitted only in the headroom, so
  // while that has room a newcomer is still taken. Re-checked on pause,
  // resume and every sweep of the front end; meanwhile connections wait in
  // the kernel's backlog, none refused.
  void update_accepting();

 private:
  void pause();
  void resume();
  void recheck_shares();
  void recheck_room();
  void defer(std::function<void()> fn);
  // A snapshot of the roster (connections may close while we go round),
  // starting one further each pass.
  std::vector<std::shared_ptr<FlowConnection>> in_turn();

  uv_loop_t* loop_;
  MemoryBudget& budget_;
  net::TcpListener& listener_;
  net::Deferred& deferred_;
  FrontendCounters& counters_;
  FrontendObserver& observer_;

  std::unordered_map<std::uint64_t, std::shared_ptr<FlowConnection>> roster_;
  std::size_t next_turn_ = 0;
  std::size_t active_ = 0;
  // Active connections by principal name; no entry for a principal with none.
  std::unordered_map<std::string, std::size_t> active_by_principal_;
  bool stopped_ = false;

  bool paused_ = false;
  std::uint64_t paused_since_ms_ = 0;
  // Info at most every few seconds: under a sustained burst pauses come and
  // go every few milliseconds (the counters have them all).
  static constexpr std::uint64_t kPauseLogIntervalMs = 5000;
  std::uint64_t last_pause_log_ms_ = 0;

  // under_share_held's cache: the sum, the loop millisecond and the share it
  // was taken for.
  std::size_t under_share_held_ = 0;
  std::uint64_t under_share_held_ms_ = 0;
  std::size_t under_share_held_share_ = 0;
  bool under_share_held_known_ = false;
  bool share_recheck_scheduled_ = false;
  bool room_recheck_scheduled_ = false;
  // The budget's listeners run only while this FlowControl lives.
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace pp
