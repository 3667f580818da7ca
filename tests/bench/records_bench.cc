// Record-format micro-benchmarks: CRC-32C, and RecordBatch v2 write/read of
// 1 KiB records into 1 MiB batches, next to a 1 MiB memcpy baseline so results
// read as ratios. Results and the command: docs/BENCHMARKS_RECORDS.md.
#include <benchmark/benchmark.h>

#include <cstring>
#include <random>
#include <string_view>

#include "proxy/records/crc32.h"
#include "proxy/records/crc32c.h"
#include "proxy/records/record_batch.h"
#include "proxy/records/record_batch_builder.h"

namespace {

constexpr std::size_t kMiB = 1 << 20;
constexpr std::size_t kRecordBytes = 1024;
// 1 KiB values plus ~8 bytes of framing each: 1000 records fill ~1 MiB.
constexpr int kRecordsPerBatch = 1000;

// Text-like bytes (random words), so the codecs see realistic ratios.
pp::Bytes text(std::size_t n, std::uint32_t seed) {
  static const char* const kWords[] = {"kafka ", "record ",   "batch ",  "offset ", "producer ",
                                       "epoch ", "sequence ", "leader ", "topic ",  "partition "};
  std::mt19937 rng(seed);
  pp::Bytes out;
  out.reserve(n + 16);
  while (out.size() < n) {
    const std::string_view w = kWords[rng() % 10];
    out.insert(out.end(), w.begin(), w.end());
  }
  out.resize(n);
  return out;
}

const std::vector<pp::Bytes>& values() {
  static const std::vector<pp::Bytes> v = [] {
    std::vector<pp::Bytes> out;
    for (int i = 0; i < kRecordsPerBatch; ++i) out.push_back(text(kRecordBytes, static_cast<std::uint32_t>(i)));
    return out;
  }();
  return v;
}

void BM_Memcpy1MiB(benchmark::State& state) {
  const pp::Bytes src = text(kMiB, 1);
  pp::Bytes dst(kMiB);
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), kMiB);
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * kMiB));
}
BENCHMARK(BM_Memcpy1MiB);

void BM_Crc32cDispatch1MiB(benchmark::State& state) {
  const pp::Bytes data = text(kMiB, 2);
  for (auto _ : state) benchmark::DoNotOptimize(pp::crc32c(data));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * kMiB));
  state.SetLabel(std::string(pp::crc32c_implementation()));
}
BENCHMARK(BM_Crc32cDispatch1MiB);

void BM_Crc32cSse42_1MiB(benchmark::State& state) {
  if (!pp::crc32c_hardware_available()) {
    state.SkipWithError("no SSE4.2");
    return;
  }
  const pp::Bytes data = text(kMiB, 3);
  for (auto _ : state) benchmark::DoNotOptimize(pp::crc32c_hardware(data));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * kMiB));
}
BENCHMARK(BM_Crc32cSse42_1MiB);

void BM_Crc32cPortable1MiB(benchmark::State& state) {
  const pp::Bytes data = text(kMiB, 4);
  for (auto _ : state) benchmark::DoNotOptimize(pp::crc32c_portable(data));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * kMiB));
}
BENCHMARK(BM_Crc32cPortable1MiB);

// Reading the bytes as the proxy does (VPCLMULQDQ folding where the CPU has
// it) and with the crc32 instruction alone, against joining a known CRC
// (RecordBatchBuilder::kKnownCrcMinBytes): where folding and the join pay.
void BM_Crc32cRead(benchmark::State& state, std::uint32_t (*read)(pp::ByteView, std::uint32_t), bool needs_sse42) {
  if (needs_sse42 && !pp::crc32c_hardware_available()) {
    state.SkipWithError("no SSE4.2");
    return;
  }
  const pp::Bytes data = text(static_cast<std::size_t>(state.range(0)), 5);
  for (auto _ : state) benchmark::DoNotOptimize(read(data, 0));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * state.range(0)));
}
void crc_read_sizes(benchmark::internal::Benchmark* b) {
  for (std::int64_t bytes : {128, 256, 512, 1024, 2048, 4096, 16384}) b->Arg(bytes);
}
BENCHMARK_CAPTURE(BM_Crc32cRead, dispatch, &pp::crc32c, false)->Apply(crc_read_sizes);
BENCHMARK_CAPTURE(BM_Crc32cRead, sse42, &pp::crc32c_hardware, true)->Apply(crc_read_sizes);

// CRC-32 (IEEE) of a legacy message as the proxy checks it (four AVX-512
// registers from 256 bytes where the CPU has VPCLMULQDQ, 16-byte PCLMULQDQ
// lanes otherwise) and with slicing-by-8 alone.
void BM_Crc32IeeeRead(benchmark::State& state, std::uint32_t (*read)(pp::ByteView, std::uint32_t)) {
  const pp::Bytes data = text(static_cast<std::size_t>(state.range(0)), 6);
  for (auto _ : state) benchmark::DoNotOptimize(read(data, 0));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * state.range(0)));
}
BENCHMARK_CAPTURE(BM_Crc32IeeeRead, dispatch, &pp::crc32_ieee)->Arg(128)->Arg(256)->Arg(1024)->Arg(4096);
BENCHMARK_CAPTURE(BM_Crc32IeeeRead, portable, &pp::crc32_ieee_portable)->Arg(1024);

// crc32c_combine as the proxy calls it (PCLMULQDQ where the CPU has it) and
// the portable multiplication, for the ratio.
void BM_Crc32cCombine(benchmark::State& state, std::uint32_t (*combine)(std::uint32_t, std::uint32_t, std::size_t)) {
  std::uint32_t crc = 0x12345678u;
  for (auto _ : state) {
    crc = combine(crc, 0x9abcdef0u, static_cast<std::size_t>(state.range(0)));
    benchmark::DoNotOptimize(crc);
  }
}
BENCHMARK_CAPTURE(BM_Crc32cCombine, dispatch, &pp::crc32c_combine)
    ->Arg(256)
    ->Arg(1024)
    ->Arg(2048)
    ->Arg(4096)
    ->Arg(16384);
BENCHMARK_CAPTURE(BM_Crc32cCombine, portable, &pp::crc32c_combine_portable)->Arg(1024)->Arg(16384);

pp::RecordBatchBuildOptions options_for(pp::CompressionCodec codec) {
  pp::RecordBatchBuildOptions o;
  o.producer_id = 4242;
  o.producer_epoch = 0;
  o.base_sequence = 0;
  o.compression = codec;
  return o;
}

// Bytes processed = the uncompressed batch (header + records), per batch.
void BM_BatchWrite(benchmark::State& state) {
  const auto codec = static_cast<pp::CompressionCodec>(state.range(0));
  const auto& vals = values();
  pp::RecordBatchBuilder builder(options_for(codec), kMiB + 64 * 1024);
  std::size_t batch_bytes = 0;
  std::size_t wire_bytes = 0;
  const pp::Bytes key = text(16, 5);
  for (auto _ : state) {
    for (int i = 0; i < kRecordsPerBatch; ++i) {
      builder.append(1700000000000 + i, pp::ByteView(key), pp::ByteView(vals[static_cast<std::size_t>(i)]));
    }
    batch_bytes = builder.size_bytes();
    pp::Bytes wire = builder.build();
    wire_bytes = wire.size();
    benchmark::DoNotOptimize(wire.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * batch_bytes));
  state.counters["batch_bytes"] = static_cast<double>(batch_bytes);
  state.counters["wire_bytes"] = static_cast<double>(wire_bytes);
  state.SetLabel(std::string(pp::to_string(codec)));
}

void BM_BatchRead(benchmark::State& state) {
  const auto codec = static_cast<pp::CompressionCodec>(state.range(0));
  const auto& vals = values();
  pp::RecordBatchBuilder builder(options_for(codec), kMiB + 64 * 1024);
  const pp::Bytes key = text(16, 5);
  for (int i = 0; i < kRecordsPerBatch; ++i) {
    builder.append(1700000000000 + i, pp::ByteView(key), pp::ByteView(vals[static_cast<std::size_t>(i)]));
  }
  const std::size_t batch_bytes = builder.size_bytes();
  const pp::Bytes wire = builder.build();
  for (auto _ : state) {
    auto batch = pp::decode_record_batch(wire);
    if (!batch || batch->records().size() != kRecordsPerBatch) {
      state.SkipWithError("decode failed");
      return;
    }
    benchmark::DoNotOptimize(batch->records().data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * batch_bytes));
  state.counters["wire_bytes"] = static_cast<double>(wire.size());
  state.SetLabel(std::string(pp::to_string(codec)));
}

void codecs(benchmark::internal::Benchmark* b) {
  b->ArgName("codec");
  for (int c = 0; c <= 4; ++c) b->Arg(c);
}
BENCHMARK(BM_BatchWrite)->Apply(codecs);
BENCHMARK(BM_BatchRead)->Apply(codecs);

}  // namespace
