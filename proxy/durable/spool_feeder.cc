#include "proxy/durable/spool_feeder.h"

#include <spdlog/spdlog.h>

#include <expected>
#include <memory>
#include <optional>

#include "proxy/durable/durable_completion.h"
#include "proxy/durable/spooled_run.h"
#include "proxy/spool/entry_reader.h"

namespace pp::durable {

namespace {
// How often a full budget is looked at again. The budget frees as upstream
// acknowledgements arrive, so a short poll costs nothing while it is full
// and adds at most this much to a drain.
constexpr std::uint64_t kBudgetRetryMs = 5;
}  // namespace

struct SpoolFeeder::Job {
  uv_work_t req{};
  SpoolFeeder* feeder = nullptr;  // null once the feeder is gone
  std::string path;
  spool::EntryLocation location;
  spool::EntryId id = spool::kNoEntry;
  std::optional<std::expected<spool::LoadedEntry, std::string>> result;
};

SpoolFeeder::SpoolFeeder(uv_loop_t* loop, spool::SpoolWriter& writer, RecordSink& producer)
    : loop_(loop), writer_(writer), producer_(producer), retry_(loop) {}

SpoolFeeder::~SpoolFeeder() {
  if (job_ != nullptr) job_->feeder = nullptr;
}

void SpoolFeeder::push(FeedItem item) {
  queue_.push_back(std::move(item));
  pump();
}

void SpoolFeeder::pump() {
  while (job_ == nullptr && !queue_.empty()) {
    if (!room_for_durable(producer_.memory_budget())) {
      retry_.start(kBudgetRetryMs, 0, [this] { pump(); });
      return;
    }
    const FeedItem& item = queue_.front();
    const spool::PendingRecords* owed = writer_.index().records(item.id);
    const std::string* path = owed != nullptr ? writer_.segment_path(owed->location.segment) : nullptr;
    if (path == nullptr) {
      // Resolved meanwhile (failed by a resolution, or its segment gone):
      // nothing is owed any more.
      queue_.pop_front();
      continue;
    }
    auto* job = new Job;
    job->req.data = job;
    job->feeder = this;
    job->path = *path;
    job->location = owed->location;
    job->id = item.id;
    job_ = job;
    uv_queue_work(
        loop_, &job->req,
        [](uv_work_t* req) {
          auto* j = static_cast<Job*>(req->data);
          j->result = spool::read_entry(j->path, j->location, j->id);
        },
        [](uv_work_t* req, int /*status*/) {
          std::unique_ptr<Job> j(static_cast<Job*>(req->data));
          if (j->feeder != nullptr) j->feeder->finish_read(*j);
        });
    return;
  }
}

void SpoolFeeder::finish_read(Job& job) {
  job_ = nullptr;
  FeedItem item = std::move(queue_.front());
  queue_.pop_front();
  std::expected<RecordRun, std::string> run =
      job.result && *job.result ? run_from_entry(std::move(**job.result), item.first_record)
                                : std::unexpected(job.result ? job.result->error() : std::string("read cancelled"));
  if (!run) {
    spdlog::error("spool: records entry {} for {}-{} cannot be read back ({}): its acknowledged records are lost",
                  item.id, item.topic, item.partition, run.error());
    spool::ResolvedEntry failed;
    failed.target = item.id;
    failed.outcome = spool::Outcome::kFailed;
    failed.error_code = static_cast<std::int16_t>(ErrorCode::kCorruptMessage);
    static_cast<void>(writer_.append(failed, [](int, spool::EntryId) {}));
  } else {
    ++fed_;
    const auto records = static_cast<std::int64_t>(run->records.size());
    producer_.submit(item.topic, item.partition, std::move(*run),
                     durable_completion(item.topic, item.partition, records));
  }
  pump();
}

}  // namespace pp::durable
