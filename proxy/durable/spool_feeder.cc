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
  std::string topic;
  std::int32_t partition = 0;
  std::int32_t first_record = 0;
  std::optional<std::expected<spool::LoadedEntry, std::string>> result;
};

SpoolFeeder::SpoolFeeder(uv_loop_t* loop, spool::SpoolWriter& writer, RecordSink& producer)
    : loop_(loop), writer_(writer), producer_(producer), retry_(loop) {}

SpoolFeeder::~SpoolFeeder() {
  if (job_ != nullptr) job_->feeder = nullptr;
}

void SpoolFeeder::push(spool::EntryId id) {
  if (id <= last_) return;  // ids rise: an entry is owed once
  if (next_ > last_ && job_ == nullptr) next_ = id;
  last_ = id;
  pump();
}

std::size_t SpoolFeeder::backlog() const {
  return next_ > last_ ? 0 : writer_.index().count_unsequenced(next_, last_);
}

void SpoolFeeder::pump() {
  while (job_ == nullptr && next_ <= last_) {
    const std::optional<spool::PendingRecords> owed = writer_.index().next_unsequenced(next_, last_);
    if (!owed) {
      // Everything in the range was resolved meanwhile (failed by a
      // resolution, or its segment gone): nothing is owed any more.
      next_ = last_ + 1;
      return;
    }
    next_ = owed->id;
    if (!room_for_durable(producer_.memory_budget())) {
      retry_.start(kBudgetRetryMs, 0, [this] { pump(); });
      return;
    }
    const std::string* path = writer_.segment_path(owed->location.segment);
    if (path == nullptr) {
      next_ = owed->id + 1;
      continue;
    }
    start_read(*owed, *path);
  }
}

void SpoolFeeder::start_read(const spool::PendingRecords& owed, const std::string& path) {
  auto* job = new Job;
  job->req.data = job;
  job->feeder = this;
  job->path = path;
  job->location = owed.location;
  job->id = owed.id;
  job->topic = owed.topic;
  job->partition = owed.partition;
  job->first_record = owed.first_unsequenced;
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
}

void SpoolFeeder::finish_read(Job& job) {
  job_ = nullptr;
  next_ = job.id + 1;
  std::expected<RecordRun, std::string> run =
      job.result && *job.result ? run_from_entry(std::move(**job.result), job.first_record)
                                : std::unexpected(job.result ? job.result->error() : std::string("read cancelled"));
  if (!run) {
    spdlog::error("spool: records entry {} for {}-{} cannot be read back ({}): its acknowledged records are lost",
                  job.id, job.topic, job.partition, run.error());
    spool::ResolvedEntry failed;
    failed.target = job.id;
    failed.outcome = spool::Outcome::kFailed;
    failed.error_code = static_cast<std::int16_t>(ErrorCode::kCorruptMessage);
    static_cast<void>(writer_.append(failed, [](int, spool::EntryId) {}));
  } else {
    ++fed_;
    const auto records = static_cast<std::int64_t>(run->records.size());
    producer_.submit(job.topic, job.partition, std::move(*run), durable_completion(job.topic, job.partition, records));
  }
  pump();
}

}  // namespace pp::durable
