// Idempotent client batch headers (issue 16): peer bytes decide every field
// ClientProducers judges (producer id, epoch, base sequence, last offset
// delta) and the order in which batches are checked, completed, failed and
// retried. The input is cut into 61-byte RecordBatch v2 headers (Produce
// frames from the golden seeds are mostly that plus records); each header's
// byte after the magic picks what happens. Checked: nothing crashes or traps
// in the sanitizers, the bounds hold, a batch just appended is recognised as
// in flight, and an acknowledged one that is still retained gets its own
// offset back.
#include <cstdint>
#include <vector>

#include "proxy/frontend/client_producers.h"
#include "proxy/records/record_batch.h"

namespace {

constexpr std::size_t kHeader = pp::record_batch_layout::kHeaderSize;

struct Pending {
  std::uint64_t handle;
  pp::ClientBatch batch;
  std::int32_t partition;
};

void check_retry_in_flight(pp::ClientProducers& p, const Pending& x, std::uint64_t now) {
  const pp::BatchCheck again = p.check("t", x.partition, x.batch, now);
  if (again.verdict != pp::BatchVerdict::kDuplicateInFlight || again.handle != x.handle) __builtin_trap();
}

void complete(pp::ClientProducers& p, std::vector<Pending>& pending, std::size_t pick, bool fail, std::uint64_t now,
              bool recheck = true) {
  if (pending.empty()) return;
  const Pending x = pending[pick % pending.size()];
  pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(pick % pending.size()));
  const std::int64_t offset = static_cast<std::int64_t>(x.handle) * 10;
  pp::ClientBatchOutcome o{fail ? pp::ErrorCode::kRequestTimedOut : pp::ErrorCode::kNone, offset, -1, 0, {}};
  std::size_t called = 0;
  for (auto& w : p.complete(x.handle, o)) {
    w(o);
    ++called;
  }
  if (called > 1) __builtin_trap();  // one retry attached at most, below
  if (!recheck) return;
  const pp::BatchCheck after = p.check("t", x.partition, x.batch, now);
  if (!fail && after.verdict == pp::BatchVerdict::kDuplicateAcked && after.outcome.base_offset != offset) {
    __builtin_trap();
  }
  if (after.verdict == pp::BatchVerdict::kAppend) pending.push_back({after.handle, x.batch, x.partition});
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  pp::ClientProducersConfig config;
  config.max_producers = 4;
  config.idle_timeout_ms = 5000;
  pp::ClientProducers producers(config);
  std::vector<Pending> pending;
  std::uint64_t now = 0;
  for (std::size_t at = 0; at + kHeader <= size; at += kHeader) {
    const pp::ByteView bytes(data + at, kHeader);
    std::vector<std::uint8_t> header(bytes.begin(), bytes.end());
    // Reach the fields, not the magic and length checks.
    header[pp::record_batch_layout::kMagic] = pp::kRecordBatchMagic;
    const std::size_t length = kHeader - pp::record_batch_layout::kLogOverhead;
    header[pp::record_batch_layout::kLength + 3] = static_cast<std::uint8_t>(length);
    for (std::size_t i = 0; i < 3; ++i) header[pp::record_batch_layout::kLength + i] = 0;
    auto h = pp::decode_record_batch_header(pp::ByteView(header.data(), header.size()));
    if (!h) continue;
    const std::uint8_t op = data[at + pp::record_batch_layout::kMagic];
    now += op & 0x3f;
    if (op & 0x80) {
      auto a = producers.init_producer_id(h->producer_id, h->producer_epoch, now);
      if (a.error == pp::ErrorCode::kNone && (a.producer_id < 0 || a.epoch < 0)) __builtin_trap();
      continue;
    }
    if (op & 0x40) {
      complete(producers, pending, static_cast<std::size_t>(h->base_offset), (op & 1) != 0, now);
      continue;
    }
    if (h->producer_id < 0 || h->producer_epoch < 0 || h->base_sequence < 0 || h->last_offset_delta < 0) continue;
    const pp::ClientBatch b{h->producer_id % 8, h->producer_epoch, h->base_sequence,
                            pp::last_sequence_of(h->base_sequence, h->last_offset_delta)};
    const std::int32_t partition = h->partition_leader_epoch & 3;
    const pp::BatchCheck c = producers.check("t", partition, b, now);
    if (c.verdict == pp::BatchVerdict::kAppend) {
      pending.push_back({c.handle, b, partition});
      check_retry_in_flight(producers, pending.back(), now);
      producers.attach(c.handle, [](const pp::ClientBatchOutcome&) {});
    }
    if (producers.producers() > config.max_producers) __builtin_trap();
    if (producers.batches_in_flight() != pending.size()) __builtin_trap();
  }
  while (!pending.empty()) complete(producers, pending, 0, false, now, false);
  producers.expire(now + 10000);
  if (producers.producers() != 0) __builtin_trap();
  return 0;
}
