// The one memory budget (producer.buffer_memory_bytes) that everything the
// proxy holds for its clients and the upstream is charged against: request
// frames from their size prefix until the last run pinning them completes,
// the records decoded from them, built upstream batches, queued responses and
// the idempotent clients' dedup state (issue 14; ARCHITECTURE.md rule 5).
// Holders keep a Charge; it is released when the Charge goes away, so memory
// freed on any path (a completion, a closed connection, shutdown) is returned.
//
// The budget never refuses a charge: it only says when it is over, and the
// front end then stops reading (docs/design/ARCHITECTURE.md "memory"). Loop
// thread only.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>
#include <utility>

namespace pp {

enum class MemoryUse : std::uint8_t {
  kRequestFrames,    // client request bytes, partial ones at their announced size
  kDecodedRecords,   // decompressed bytes, record and header views of queued runs
  kUpstreamBatches,  // encoded batches awaiting their acknowledgement
  kResponses,        // answers not yet written to the client's socket
  kClientProducers,  // idempotent clients' dedup state
  kSequenceMemos,    // what retired partitions keep of their sequences (C.3a)
};
inline constexpr std::size_t kMemoryUseCount = 6;

constexpr std::string_view to_string(MemoryUse use) {
  switch (use) {
    case MemoryUse::kRequestFrames:
      return "request_frames";
    case MemoryUse::kDecodedRecords:
      return "decoded_records";
    case MemoryUse::kUpstreamBatches:
      return "upstream_batches";
    case MemoryUse::kResponses:
      return "responses";
    case MemoryUse::kClientProducers:
      return "client_producers";
    case MemoryUse::kSequenceMemos:
      return "sequence_memos";
  }
  return "unknown";
}

class MemoryBudget {
  struct Ledger {
    std::size_t limit = 0;
    std::size_t used = 0;
    std::array<std::size_t, kMemoryUseCount> by_use{};
    bool was_over = false;
    // Fired once usage is back at the low-water mark (90%) after having been
    // at or over the limit. May run inside any release: it must not re-enter
    // the holder that released (the front end defers its resume).
    std::function<void()> on_available;

    void add(MemoryUse use, std::size_t n) {
      used += n;
      by_use[static_cast<std::size_t>(use)] += n;
      if (used >= limit) was_over = true;
    }
    void remove(MemoryUse use, std::size_t n) {
      used -= n;
      by_use[static_cast<std::size_t>(use)] -= n;
      if (was_over && used <= limit / 10 * 9) {
        was_over = false;
        if (on_available) on_available();
      }
    }
  };

 public:
  // Move-only; returns its bytes when destroyed or reset. Outliving the
  // budget is harmless (the ledger is shared).
  class Charge {
   public:
    Charge() = default;
    Charge(Charge&& other) noexcept
        : ledger_(std::move(other.ledger_)), use_(other.use_), bytes_(std::exchange(other.bytes_, 0)) {}
    Charge& operator=(Charge&& other) noexcept {
      if (this != &other) {
        reset();
        ledger_ = std::move(other.ledger_);
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
      if (!ledger_ || bytes == bytes_) return;
      if (bytes > bytes_) {
        ledger_->add(use_, bytes - bytes_);
      } else {
        // Kept in a local: the listener may run and drop this Charge's owner.
        const std::size_t less = bytes_ - bytes;
        bytes_ = bytes;
        std::shared_ptr<Ledger> ledger = ledger_;
        ledger->remove(use_, less);
        return;
      }
      bytes_ = bytes;
    }
    void reset() {
      if (!ledger_) return;
      std::shared_ptr<Ledger> ledger = std::move(ledger_);
      const std::size_t bytes = std::exchange(bytes_, 0);
      if (bytes > 0) ledger->remove(use_, bytes);
    }
    std::size_t bytes() const { return bytes_; }

   private:
    friend class MemoryBudget;
    Charge(std::shared_ptr<Ledger> ledger, MemoryUse use) : ledger_(std::move(ledger)), use_(use) {}
    std::shared_ptr<Ledger> ledger_;
    MemoryUse use_ = MemoryUse::kRequestFrames;
    std::size_t bytes_ = 0;
  };

  explicit MemoryBudget(std::size_t limit) : ledger_(std::make_shared<Ledger>()) { ledger_->limit = limit; }

  Charge charge(MemoryUse use, std::size_t bytes) {
    Charge c(ledger_, use);
    c.set(bytes);
    return c;
  }

  bool over() const { return ledger_->used >= ledger_->limit; }
  std::size_t used() const { return ledger_->used; }
  std::size_t used(MemoryUse use) const { return ledger_->by_use[static_cast<std::size_t>(use)]; }
  std::size_t limit() const { return ledger_->limit; }
  void set_available_listener(std::function<void()> listener) { ledger_->on_available = std::move(listener); }
  bool has_available_listener() const { return static_cast<bool>(ledger_->on_available); }
  void set_limit(std::size_t limit) { ledger_->limit = limit; }

 private:
  std::shared_ptr<Ledger> ledger_;
};

using MemoryCharge = MemoryBudget::Charge;

}  // namespace pp
