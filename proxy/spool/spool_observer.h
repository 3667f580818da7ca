// What the spool reports as it works: the metrics layer implements this; the
// default does nothing. Called on the loop thread that owns the writer (or
// the thread running recovery), per commit or per event, never per record.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

namespace pp::spool {

class SpoolObserver {
 public:
  virtual ~SpoolObserver() = default;

  // One group commit made durable: the write and sync took `seconds`
  // together and covered `appends` appends.
  virtual void on_fsync(double /*seconds*/, std::size_t /*appends*/) {}
  // What the spool holds after a change: bytes on disk, client records not
  // yet resolved, and the append time of the oldest of them (none: empty).
  virtual void on_usage(std::size_t /*bytes*/, std::int64_t /*records*/, std::optional<std::int64_t> /*oldest_ms*/) {}
  // Bytes found torn or corrupt by recovery and cut off or moved aside.
  virtual void on_corrupt_bytes(std::size_t /*bytes*/) {}
  // Batches re-sent after a restart with the identity they first went with.
  virtual void on_replayed_batches(std::int64_t /*batches*/) {}
};

}  // namespace pp::spool
