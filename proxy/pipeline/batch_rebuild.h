// Building a batch again from pieces of another: a split, an isolation, a
// bisection, or a withdrawal from batches the broker refused. The new batch
// borrows its records' values from their runs as the accumulator's batches
// do, keeps `from`'s partition, producer id and epoch, creation time, attempt
// count and renumbering mark, and waits for a retry. A durable one is
// journaled again, superseding `from`'s entry, before it is sent
// (BatchJournaling). Loop thread only.
#pragma once

#include <cstdint>
#include <vector>

#include "proxy/pipeline/memory_uses.h"
#include "proxy/pipeline/producer_batch.h"
#include "proxy/records/compression.h"

namespace pp {

// `pieces` (their offset_in_batch is ignored and set here) in order from
// `base_sequence`; each piece's run counts one more outstanding piece. The
// caller drops `from`'s own pieces from their runs' counts.
BatchPtr rebuild_batch(const ProducerBatch& from, const std::vector<BatchPiece>& pieces, std::int32_t base_sequence,
                       CompressionCodec compression, MemoryBudget& memory);

}  // namespace pp
