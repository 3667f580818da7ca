// What the spool's index costs in memory per owed entry (docs/design/SPOOL.md,
// "Acknowledging from the spool"): the spool lives on disk, so the index of
// what it owes must stay small per entry, and give back what it held once
// everything is resolved. Measured with glibc's own heap statistics; a
// sanitizer's allocator has none, so there the same bounds are checked on
// the index's own estimate (memory_bytes(), which the glibc builds check
// against the heap).
#include <gtest/gtest.h>
#include <malloc.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "proxy/spool/spool_index.h"

namespace pp::spool {
namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kGlibcHeap = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kGlibcHeap = false;
#else
constexpr bool kGlibcHeap = true;
#endif
#else
constexpr bool kGlibcHeap = true;
#endif

constexpr int kEntries = 200'000;
constexpr int kEntriesPerSegment = 60'000;  // about 64 MiB of 1.1 KiB entries
constexpr std::size_t kEntryBytes = 1'100;

std::size_t heap_in_use() {
  const struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd;
}

EntryLocation location_of(int i) {
  const auto in_segment = static_cast<std::size_t>(i % kEntriesPerSegment);
  return EntryLocation{1 + static_cast<std::uint64_t>(i / kEntriesPerSegment), 36 + in_segment * kEntryBytes,
                       kEntryBytes};
}

// One Records entry per client request partition, as a proxy with Kafka down
// spools them: eight partitions of one topic, from four idempotent clients
// or from clients without an identity.
void apply_records(SpoolIndex& index, int n, bool idempotent) {
  RecordsEntry r;
  r.topic = "telemetry.device-events";
  r.acks = -1;
  r.record_count = 1;
  for (int i = 0; i < n; ++i) {
    r.partition = i % 8;
    r.client_producer_id = idempotent ? 1000 + i % 4 : -1;
    r.client_producer_epoch = idempotent ? 0 : -1;
    r.client_base_sequence = idempotent ? i / 32 : -1;
    index.apply(Entry{static_cast<EntryId>(i + 1), 1'700'000'000'000 + i, r}, location_of(i));
  }
}

// Fails every entry applied by apply_records, in order.
void fail_all(SpoolIndex& index, int n) {
  for (int i = 0; i < n; ++i) {
    const auto id = static_cast<EntryId>(n) + static_cast<EntryId>(i) + 1;
    index.apply(Entry{id, 0, ResolvedEntry{static_cast<EntryId>(i + 1), Outcome::kFailed, 7, -1}}, location_of(n - 1));
  }
}

// What the allocator counts as held but the index gave back: glibc's tcache
// keeps up to seven freed chunks of each small size, counted as in use.
constexpr std::size_t kFreedNoise = 32 << 10;

bool within_a_quarter(std::size_t estimate, std::size_t measured) {
  const auto diff = estimate > measured ? estimate - measured : measured - estimate;
  return diff * 4 <= measured;
}

class SpoolIndexMemory : public ::testing::TestWithParam<bool> {};

TEST_P(SpoolIndexMemory, AnOwedRecordsEntryCostsUnder64BytesAndIsGivenBackWhenResolved) {
  std::printf("measuring\n");  // stdout's buffer allocated before the measurement
  const std::size_t before = heap_in_use();
  SpoolIndex index;
  apply_records(index, kEntries, GetParam());
  const std::size_t held = kGlibcHeap ? heap_in_use() - before : index.memory_bytes();
  const double per_entry = static_cast<double>(held) / kEntries;
  std::printf("index heap: %zu bytes for %d owed entries, %.1f bytes each; memory_bytes() %zu\n", held, kEntries,
              per_entry, index.memory_bytes());
  EXPECT_LT(per_entry, 64.0);
  EXPECT_TRUE(within_a_quarter(index.memory_bytes(), held)) << index.memory_bytes() << " vs " << held;
  ASSERT_EQ(index.unresolved_records().size(), static_cast<std::size_t>(kEntries));

  fail_all(index, kEntries);
  EXPECT_EQ(index.unresolved_record_count(), 0);
  EXPECT_TRUE(index.client_records().empty());
  const std::size_t left = kGlibcHeap ? heap_in_use() - before : index.memory_bytes();
  std::printf("index heap with nothing owed: %zu bytes; memory_bytes() %zu\n", left, index.memory_bytes());
  EXPECT_LT(left, kFreedNoise);
  EXPECT_LT(index.memory_bytes(), std::size_t{2048});
}

INSTANTIATE_TEST_SUITE_P(Clients, SpoolIndexMemory, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& p) {
                           return p.param ? std::string("Idempotent") : std::string("WithoutIdentity");
                         });

// The client records kept after the last snapshot (the last 64 per client
// producer and partition), with many client producers: each acknowledged,
// so only what their dedup state is rebuilt from is left.
TEST(SpoolIndexMemoryInFlight, AKeptClientRecordCostsUnder128Bytes) {
  constexpr int kProducers = 400;
  constexpr int kKept = kProducers * 8 * static_cast<int>(SpoolIndex::kClientRecordsPerPartition);
  std::printf("measuring\n");
  const std::size_t before = heap_in_use();
  SpoolIndex index;
  RecordsEntry r;
  r.topic = "telemetry.device-events";
  r.record_count = 1;
  r.client_producer_epoch = 0;
  for (int i = 0; i < kKept; ++i) {
    r.partition = i % 8;
    r.client_producer_id = 1000 + (i / 8) % kProducers;
    r.client_base_sequence = i / (8 * kProducers);
    index.apply(Entry{static_cast<EntryId>(i + 1), 0, r}, location_of(i));
  }
  for (int i = 0; i < kKept; ++i) {
    const ResolvedEntry ack{static_cast<EntryId>(i + 1), Outcome::kAcknowledged, 0, i};
    index.apply(Entry{static_cast<EntryId>(kKept) + static_cast<EntryId>(i) + 1, 0, ack}, location_of(kKept));
  }
  ASSERT_EQ(index.unresolved_record_count(), 0);
  ASSERT_EQ(index.client_records().size(), static_cast<std::size_t>(kKept));
  const std::size_t held = kGlibcHeap ? heap_in_use() - before : index.memory_bytes();
  std::printf("index heap: %zu bytes for %d kept client records, %.1f bytes each; memory_bytes() %zu\n", held, kKept,
              static_cast<double>(held) / kKept, index.memory_bytes());
  EXPECT_LT(static_cast<double>(held) / kKept, 128.0);
  EXPECT_TRUE(within_a_quarter(index.memory_bytes(), held)) << index.memory_bytes() << " vs " << held;
}

// Entries in flight: each sequenced into a batch of its own, then
// acknowledged. The estimate follows the batches and the progress kept for
// them, and everything is given back.
TEST(SpoolIndexMemoryInFlight, TheEstimateFollowsBatchesInFlight) {
  constexpr int kInFlight = 20'000;
  std::printf("measuring\n");
  const std::size_t before = heap_in_use();
  SpoolIndex index;
  apply_records(index, kInFlight, /*idempotent=*/true);
  auto next = static_cast<EntryId>(kInFlight) + 1;
  for (int i = 0; i < kInFlight; ++i) {
    const SequencedEntry batch{
        "telemetry.device-events", i % 8, 5, 0, i, 1, kNoEntry, {RecordRange{static_cast<EntryId>(i + 1), 0, 1}}};
    index.apply(Entry{next++, 0, batch}, location_of(kInFlight));
  }
  EXPECT_TRUE(index.unsequenced_records().empty());
  const std::size_t held = kGlibcHeap ? heap_in_use() - before : index.memory_bytes();
  std::printf("index heap: %zu bytes for %d entries in flight, %.1f bytes each; memory_bytes() %zu\n", held, kInFlight,
              static_cast<double>(held) / kInFlight, index.memory_bytes());
  EXPECT_TRUE(within_a_quarter(index.memory_bytes(), held)) << index.memory_bytes() << " vs " << held;

  for (int i = 0; i < kInFlight; ++i) {
    const ResolvedEntry ack{static_cast<EntryId>(kInFlight) + static_cast<EntryId>(i) + 1, Outcome::kAcknowledged, 0,
                            i};
    index.apply(Entry{next++, 0, ack}, location_of(kInFlight));
  }
  EXPECT_EQ(index.unresolved_record_count(), 0);
  EXPECT_TRUE(index.unresolved_batches().empty());
  index.apply(Entry{next++, 0, ClientProducersEntry{}}, location_of(kInFlight));
  if (kGlibcHeap) EXPECT_LT(heap_in_use() - before, kFreedNoise);
  EXPECT_LT(index.memory_bytes(), std::size_t{2048});
}

// Entries resolved out of order (one partition drains, the other is stuck)
// leave gaps among the owed ones; every lookup still finds exactly what is
// owed, in order.
TEST(SpoolIndexMemoryInFlight, EntriesResolvedOutOfOrderLeaveTheRestFindable) {
  constexpr int kOwed = 5'000;
  SpoolIndex index;
  apply_records(index, kOwed, /*idempotent=*/false);
  auto next = static_cast<EntryId>(kOwed) + 1;
  for (int i = 1; i < kOwed; i += 2) {
    index.apply(Entry{next++, 0, ResolvedEntry{static_cast<EntryId>(i + 1), Outcome::kFailed, 7, -1}},
                location_of(kOwed));
  }
  const std::vector<PendingRecords> owed = index.unresolved_records();
  ASSERT_EQ(owed.size(), static_cast<std::size_t>(kOwed / 2));
  for (std::size_t k = 0; k < owed.size(); ++k) {
    EXPECT_EQ(owed[k].id, 2 * k + 1);
    EXPECT_EQ(owed[k].topic, "telemetry.device-events");
    EXPECT_EQ(owed[k].partition, static_cast<std::int32_t>((2 * k) % 8));
    EXPECT_EQ(owed[k].location.offset, location_of(static_cast<int>(2 * k)).offset);
  }
  EXPECT_EQ(index.records(2), nullptr);
  ASSERT_NE(index.records(3), nullptr);
  EXPECT_EQ(index.records(3)->location.size, kEntryBytes);
  EXPECT_EQ(index.next_unsequenced(2, kOwed)->id, 3U);
  EXPECT_EQ(index.count_unsequenced(1, 100), 50U);
  EXPECT_EQ(index.oldest_record_ms(), 1'700'000'000'000);
  index.apply(Entry{next++, 0, ResolvedEntry{1, Outcome::kFailed, 7, -1}}, location_of(kOwed));
  EXPECT_EQ(index.oldest_record_ms(), 1'700'000'000'002);
  EXPECT_EQ(index.unresolved_record_count(), kOwed / 2 - 1);
}

}  // namespace
}  // namespace pp::spool
