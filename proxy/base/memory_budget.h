// A memory budget: a limit, and a ledger of what is charged against it by
// use. Which uses there are is its owner's to say: the owner names them in an
// enum and declares each one's name and role in a table (MemoryUseInfo) that
// instantiates BasicMemoryBudget; this header knows only the roles the
// ledger acts on. The proxy's one budget (producer.buffer_memory_bytes) and
// its uses are declared where the pipeline creates it, in
// proxy/pipeline/memory_uses.h ("Bounded everything", ARCHITECTURE.md, rules
// of the house).
// Holders keep a Charge; it is released when the Charge goes away, so memory
// freed on any path (a completion, a closed connection, shutdown) is returned.
//
// The budget never refuses a charge: it only says when it is over, and the
// front end then stops reading (docs/design/ARCHITECTURE.md, "Bounded
// everything"). Loop thread only.
//
// A charge may also count into a MemoryAccount: what one client connection
// holds, so the front end can keep each connection to its fair share
// (docs/design/ARCHITECTURE.md, "Bounded everything", "Fair share"). The
// account is shared by its charges: runs of a closed connection may outlive
// its session, and their charges still count into (and release from) a live
// object.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iterator>
#include <memory>
#include <string_view>
#include <utility>

namespace pp {

// What the ledger does with a use's bytes.
enum class MemoryRole : std::uint8_t {
  kHeld,           // held until its holder lets it go
  kRequestFrames,  // client requests not decoded yet: held for requests
  kDraining,       // given back on its own as the owner's work completes: held for
                   // requests, and what a request that does not fit may wait for
};

// One use of a budget, as its owner declares it.
struct MemoryUseInfo {
  std::string_view name;  // a metric label
  MemoryRole role = MemoryRole::kHeld;
};

// What is charged on behalf of one client connection. Counts bytes only; the
// budget's ledger holds the same bytes (or, for an account-only charge, the
// pipeline charges them there itself).
class MemoryAccount {
 public:
  std::size_t held() const { return held_; }
  // Called after a release (the connection held bytes and now holds fewer),
  // inside whatever freed them: it must not re-enter that holder.
  void set_release_listener(std::function<void()> listener) { on_release_ = std::move(listener); }
  // Called when held() goes from 0 to more, or back to 0.
  void set_holding_listener(std::function<void()> listener) { on_holding_ = std::move(listener); }

  void add(std::size_t n) {
    const bool was_empty = held_ == 0;
    held_ += n;
    if (was_empty && n > 0 && on_holding_) on_holding_();
  }
  void remove(std::size_t n) {
    held_ -= n;
    if (held_ == 0 && n > 0 && on_holding_) on_holding_();
    if (n > 0 && on_release_) on_release_();
  }

 private:
  std::size_t held_ = 0;
  std::function<void()> on_release_;
  std::function<void()> on_holding_;
};

// `Use`: the owner's enum of uses, 0 to N-1; `kUses`: its table of N
// MemoryUseInfo, indexed by them.
template <class Use, const auto& kUses>
class BasicMemoryBudget {
  static constexpr std::size_t kUseCount = std::size(kUses);

  struct Ledger {
    std::size_t limit = 0;
    std::size_t used = 0;
    std::array<std::size_t, kUseCount> by_use{};
    bool was_over = false;
    // Fired once usage is back at the low-water mark (nine tenths of the
    // limit) after having been at or over the limit. May run inside any
    // release: it must not re-enter the holder that released (the front end
    // defers its resume).
    std::function<void()> on_available;
    // The least room someone waits for (0: nobody): a frame that does not
    // fit whole, a request whose decoding did not fit (docs/design/
    // ARCHITECTURE.md, "Bounded everything"). Fired, once, by the release that
    // makes that room, or that leaves nothing in flight to release: the waiter
    // then goes anyway.
    std::size_t room_wanted = 0;
    std::function<void()> on_room;
    // Room held back from new frames for parked requests (RoomReservation).
    std::size_t reserved = 0;

    std::size_t of(Use use) const { return by_use[static_cast<std::size_t>(use)]; }
    // The sum over the uses of `kRole`, chosen at compile time.
    template <MemoryRole kRole>
    std::size_t of_role() const {
      return [this]<std::size_t... kI>(std::index_sequence<kI...>) {
        return ((kUses[kI].role == kRole ? by_use[kI] : std::size_t{0}) + ... + std::size_t{0});
      }(std::make_index_sequence<kUseCount>{});
    }
    std::size_t draining() const { return of_role<MemoryRole::kDraining>(); }

    void add(Use use, std::size_t n) {
      used += n;
      by_use[static_cast<std::size_t>(use)] += n;
      if (used >= limit) was_over = true;
    }
    void remove(Use use, std::size_t n) {
      used -= n;
      by_use[static_cast<std::size_t>(use)] -= n;
      if (was_over && used <= limit / 10 * 9) {
        was_over = false;
        if (on_available) on_available();
      }
      check_room();
    }
    void check_room() {
      if (room_wanted != 0 && (used + room_wanted <= limit || draining() == 0)) {
        room_wanted = 0;
        if (on_room) on_room();
      }
    }
  };

 public:
  // Move-only; returns its bytes when destroyed or reset. Outliving the
  // budget or the account is harmless (both are shared).
  class Charge {
   public:
    Charge() = default;
    // Counts into `account` only: bytes the pipeline charges to the budget
    // itself (a run's decoded records) but that a connection holds.
    static Charge account_only(std::shared_ptr<MemoryAccount> account, std::size_t bytes) {
      Charge c(nullptr, std::move(account), Use{});
      c.set(bytes);
      return c;
    }
    Charge(Charge&& other) noexcept
        : ledger_(std::move(other.ledger_)),
          account_(std::move(other.account_)),
          use_(other.use_),
          bytes_(std::exchange(other.bytes_, 0)) {}
    Charge& operator=(Charge&& other) noexcept {
      if (this != &other) {
        reset();
        ledger_ = std::move(other.ledger_);
        account_ = std::move(other.account_);
        use_ = other.use_;
        bytes_ = std::exchange(other.bytes_, 0);
      }
      return *this;
    }
    Charge(const Charge&) = delete;
    Charge& operator=(const Charge&) = delete;
    ~Charge() { reset(); }

    // Grows or shrinks to `bytes`.
    void set(std::size_t bytes) {
      if ((!ledger_ && !account_) || bytes == bytes_) return;
      if (bytes > bytes_) {
        if (ledger_) ledger_->add(use_, bytes - bytes_);
        if (account_) account_->add(bytes - bytes_);
        bytes_ = bytes;
        return;
      }
      // Kept in locals: a listener may run and drop this Charge's owner.
      const std::size_t less = bytes_ - bytes;
      bytes_ = bytes;
      const std::shared_ptr<Ledger> ledger = ledger_;
      const std::shared_ptr<MemoryAccount> account = account_;
      release(ledger, account, use_, less);
    }
    void reset() {
      if (!ledger_ && !account_) return;
      const std::shared_ptr<Ledger> ledger = std::move(ledger_);
      const std::shared_ptr<MemoryAccount> account = std::move(account_);
      release(ledger, account, use_, std::exchange(bytes_, 0));
    }
    std::size_t bytes() const { return bytes_; }

   private:
    friend class BasicMemoryBudget;
    Charge(std::shared_ptr<Ledger> ledger, std::shared_ptr<MemoryAccount> account, Use use)
        : ledger_(std::move(ledger)), account_(std::move(account)), use_(use) {}
    // Static, on the caller's local copies: a listener may destroy this Charge. The
    // account first, so whoever the budget's listener resumes sees this
    // connection's account already lighter.
    static void release(const std::shared_ptr<Ledger>& ledger, const std::shared_ptr<MemoryAccount>& account, Use use,
                        std::size_t bytes) {
      if (bytes == 0) return;
      if (account) account->remove(bytes);
      if (ledger) ledger->remove(use, bytes);
    }
    std::shared_ptr<Ledger> ledger_;
    std::shared_ptr<MemoryAccount> account_;
    Use use_{};
    std::size_t bytes_ = 0;
  };

  explicit BasicMemoryBudget(std::size_t limit) : ledger_(std::make_shared<Ledger>()) { ledger_->limit = limit; }

  // `account` (may be null): the connection this is held for.
  Charge charge(Use use, std::size_t bytes, std::shared_ptr<MemoryAccount> account = nullptr) {
    Charge c(ledger_, std::move(account), use);
    c.set(bytes);
    return c;
  }

  bool over() const { return ledger_->used >= ledger_->limit; }
  std::size_t used() const { return ledger_->used; }
  std::size_t used(Use use) const { return ledger_->of(use); }
  static constexpr std::size_t use_count() { return kUseCount; }
  static constexpr const MemoryUseInfo& info(Use use) { return kUses[static_cast<std::size_t>(use)]; }
  std::size_t room() const { return ledger_->used < ledger_->limit ? ledger_->limit - ledger_->used : 0; }
  // What the owner gives back on its own (the kDraining uses), as its work
  // completes or times out: while there is some, a request that does not fit
  // can wait for it.
  std::size_t draining() const { return ledger_->draining(); }
  // A new frame of `bytes` fits whole, beside the room reserved for parked
  // requests. One that cannot fit even then is taken when nothing else is
  // held for requests, so it is never stuck.
  bool admits(std::size_t bytes) const {
    if (over()) return false;
    const std::size_t held_for_requests = draining() + ledger_->template of_role<MemoryRole::kRequestFrames>();
    return (bytes <= room() && ledger_->reserved <= room() - bytes) || held_for_requests == 0;
  }

  // Room a parked request waits for, held back from new frames until the
  // reservation goes away, so a stream of small requests cannot keep taking
  // it; a reservation over the room stops new frames until the pipeline
  // drains. Also asks for the room listener (want_room).
  class RoomReservation {
   public:
    RoomReservation() = default;
    RoomReservation(RoomReservation&& other) noexcept
        : ledger_(std::move(other.ledger_)), bytes_(std::exchange(other.bytes_, 0)) {}
    RoomReservation& operator=(RoomReservation&& other) noexcept {
      if (this != &other) {
        reset();
        ledger_ = std::move(other.ledger_);
        bytes_ = std::exchange(other.bytes_, 0);
      }
      return *this;
    }
    RoomReservation(const RoomReservation&) = delete;
    RoomReservation& operator=(const RoomReservation&) = delete;
    ~RoomReservation() { reset(); }
    std::size_t bytes() const { return bytes_; }
    // Frames that waited beside it may fit now.
    void reset() {
      if (!ledger_) return;
      const std::shared_ptr<Ledger> ledger = std::move(ledger_);
      ledger->reserved -= std::exchange(bytes_, 0);
      ledger->check_room();
    }

   private:
    friend class BasicMemoryBudget;
    RoomReservation(std::shared_ptr<Ledger> ledger, std::size_t bytes) : ledger_(std::move(ledger)), bytes_(bytes) {
      ledger_->reserved += bytes_;
    }
    std::shared_ptr<Ledger> ledger_;
    std::size_t bytes_ = 0;
  };
  RoomReservation reserve_room(std::size_t bytes) {
    want_room(bytes);
    return {ledger_, bytes};
  }
  std::size_t reserved() const { return ledger_->reserved; }
  // Calls the room listener once `bytes` fit, or nothing drains any more.
  void want_room(std::size_t bytes) {
    if (ledger_->room_wanted == 0 || bytes < ledger_->room_wanted) ledger_->room_wanted = bytes;
  }
  // NOLINTNEXTLINE(performance-unnecessary-value-param): moved in; tidy misreads the dependent ledger
  void set_room_listener(std::function<void()> listener) { ledger_->on_room = std::move(listener); }
  std::size_t limit() const { return ledger_->limit; }
  // NOLINTNEXTLINE(performance-unnecessary-value-param): moved in; tidy misreads the dependent ledger
  void set_available_listener(std::function<void()> listener) { ledger_->on_available = std::move(listener); }
  bool has_available_listener() const { return static_cast<bool>(ledger_->on_available); }
  void set_limit(std::size_t limit) { ledger_->limit = limit; }

 private:
  std::shared_ptr<Ledger> ledger_;
};

}  // namespace pp
