// Bisection (docs/design/PIPELINE.md, "Isolating refused records"): a batch
// refused for the content of some record, without record_errors naming it, is
// resent as two halves of its client runs until the refused runs stand alone.
#include <spdlog/spdlog.h>

#include <bit>

#include "proxy/pipeline/idempotent_producer.h"

namespace pp {

namespace {

// Enough halvings to single out two refused runs among `runs`: each one takes
// ceil(log2(runs)). Past it a refused part fails whole, so a partition-wide
// refusal costs O(log runs) resends, not O(runs).
std::int32_t bisection_budget(std::size_t runs) {
  const auto depth = static_cast<std::int32_t>(std::bit_width(runs - 1));
  return 2 * depth + 1;
}

}  // namespace

// The broker appended none of `b` and used none of its sequences (the error
// came from LogValidator, before the producer state). Its runs are rebuilt into
// two batches, the first half of the runs and the second, that take its place
// in unacked and its sequences (rebuilt as a split is), so the batches behind
// it still follow on: those in flight come back OUT_OF_ORDER_SEQUENCE_NUMBER,
// are not head of line and only wait. No bump: that comes when a part holding
// one run is refused and fails (response handling, PIPELINE.md).
void IdempotentProducer::bisect(PartitionState& p, const BatchPtr& b, ErrorCode error) {
  if (!b->bisections_left) b->bisections_left = std::make_shared<std::int32_t>(bisection_budget(b->pieces.size()));
  --*b->bisections_left;
  const std::size_t half = b->pieces.size() / 2;
  const std::vector<BatchPiece> front_pieces(b->pieces.begin(), b->pieces.begin() + static_cast<std::ptrdiff_t>(half));
  const std::vector<BatchPiece> back_pieces(b->pieces.begin() + static_cast<std::ptrdiff_t>(half), b->pieces.end());
  BatchPtr front = rebuild(*b, front_pieces, b->base_sequence);
  BatchPtr back = rebuild(*b, back_pieces, ProducerBatch::wrap_sequence(b->base_sequence, front->record_count));
  for (const BatchPtr& part : {front, back}) {
    part->bisections_left = b->bisections_left;
    part->corrupt_responses = b->corrupt_responses;  // a corrupt part is not retried once more
    part->retry_at_ms = 0;                           // resent at once: the refusal was not transient
  }
  for (const auto& piece : b->pieces) --piece.run->pieces_outstanding;
  spdlog::info(
      "{}: {} without record_errors for seq {}..{} ({} client runs): resent as {} + {} runs to find the "
      "refused ones ({} bisections left)",
      p.tp().to_string(), error_name(error), b->base_sequence, b->last_sequence(), b->pieces.size(),
      front_pieces.size(), back_pieces.size(), *b->bisections_left);
  // New boundaries: had an earlier attempt been appended, the broker could
  // not match these parts to it ("Possible duplicates", PIPELINE.md).
  if (b->ever_ambiguous) bumper_.count_ambiguous_renumbered(p, 1, "bisection");
  observer_->on_retry(error);
  p.replace_with_split(b, {front, back});
}

}  // namespace pp
