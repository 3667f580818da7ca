#include "proxy/durable/spool_feeder.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <expected>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "proxy/durable/durable_completion.h"
#include "proxy/durable/spooled_run.h"
#include "proxy/spool/entry_reader.h"

namespace pp::durable {

namespace {
// How often a full budget is looked at again. The budget frees as upstream
// acknowledgements arrive, so a short poll costs nothing while it is full
// and adds at most this much to a drain.
constexpr std::uint64_t kBudgetRetryMs = 5;
// The answer of an entry pushed with one that is never fed.
constexpr std::string_view kUnfed = "not delivered: its spooled records were failed or lost before their turn";
}  // namespace

// One owed entry of a job and what reading it gave.
struct ReadItem {
  spool::PendingRecords owed;
  Bytes buffer;  // allocated on the loop thread, read into on the threadpool
  std::optional<std::expected<spool::LoadedEntry, std::string>> result;
};

struct SpoolFeeder::Job {
  uv_work_t req{};
  SpoolFeeder* feeder = nullptr;  // null once the feeder is gone, or for a close-only job
  std::uint64_t segment = 0;
  std::string path;
  int fd = -1;        // the segment's fd: kept from the last job, else opened here
  int close_fd = -1;  // another segment's fd, closed first
  std::string open_error;
  std::vector<ReadItem> items;  // empty: a close-only job
};

namespace {

// The threadpool half of a job: touches only the job.
void run_job(uv_work_t* req) {
  auto* j = static_cast<SpoolFeeder::Job*>(req->data);
  if (j->close_fd >= 0) ::close(j->close_fd);
  j->close_fd = -1;
  if (j->items.empty()) return;
  if (j->fd < 0) {
    j->fd = ::open(j->path.c_str(), O_RDONLY | O_CLOEXEC);
    if (j->fd < 0) j->open_error = j->path + ": cannot open: " + std::strerror(errno);
  }
  for (ReadItem& item : j->items) {
    if (j->fd < 0) {
      item.result = std::unexpected(j->open_error);
    } else {
      item.result = spool::read_entry(j->fd, j->path, item.owed.location, item.owed.id, std::move(item.buffer));
    }
  }
}

}  // namespace

SpoolFeeder::SpoolFeeder(uv_loop_t* loop, spool::SpoolWriter& writer, RecordSink& producer)
    : loop_(loop), writer_(writer), producer_(producer), retry_(loop) {}

SpoolFeeder::~SpoolFeeder() {
  if (job_ != nullptr) job_->feeder = nullptr;
  // The loop may not turn again: the kept fd is closed here.
  if (fd_ >= 0) ::close(fd_);
}

void SpoolFeeder::push(spool::EntryId id) {
  if (id <= last_) return;  // ids rise: an entry is owed once
  if (next_ > last_ && job_ == nullptr) next_ = id;
  last_ = id;
  pump();
}

void SpoolFeeder::push(spool::EntryId id, RunCompletion answer) {
  // Kept whatever the id: an entry still owed is fed with it, one already
  // past is answered as never fed (answer_unfed), never dropped unanswered.
  answers_.emplace(id, std::move(answer));
  if (id <= last_) {
    pump();
    return;
  }
  push(id);
}

RunCompletion SpoolFeeder::completion_for(spool::EntryId id, const std::string& topic, std::int32_t partition,
                                          std::int64_t records) {
  const auto it = answers_.find(id);
  if (it == answers_.end()) return durable_completion(topic, partition, records);
  RunCompletion answer = std::move(it->second);
  answers_.erase(it);
  return answer;
}

void SpoolFeeder::answer_unfed(spool::EntryId below, std::string_view why) {
  while (!answers_.empty() && answers_.begin()->first < below) {
    RunCompletion answer = std::move(answers_.begin()->second);
    answers_.erase(answers_.begin());
    RunResult r;
    r.error = ErrorCode::kNotEnoughReplicas;
    r.error_message = std::string(why);
    answer(r);
  }
}

std::size_t SpoolFeeder::backlog() const {
  return next_ > last_ ? 0 : writer_.index().count_unsequenced(next_, last_);
}

void SpoolFeeder::pump() {
  while (job_ == nullptr) {
    const std::optional<spool::PendingRecords> owed =
        next_ <= last_ ? writer_.index().next_unsequenced(next_, last_) : std::nullopt;
    if (!owed) {
      // Everything in the range was fed or resolved meanwhile (failed by a
      // resolution, or its segment gone): nothing is owed any more.
      if (next_ <= last_) next_ = last_ + 1;
      answer_unfed(next_, kUnfed);
      release_fd();
      return;
    }
    next_ = owed->id;
    answer_unfed(next_, kUnfed);
    const std::string* path = writer_.segment_path(owed->location.segment);
    if (fd_ >= 0 && (fd_segment_ != owed->location.segment || writer_.segment_path(fd_segment_) == nullptr)) {
      release_fd();
    }
    if (!room_for_durable(producer_.memory_budget())) {
      retry_.start(kBudgetRetryMs, 0, [this] { pump(); });
      return;
    }
    if (path == nullptr) {
      next_ = owed->id + 1;
      answer_unfed(next_, kUnfed);
      continue;
    }
    start_read(*owed, *path);
  }
}

void SpoolFeeder::release_fd() {
  if (fd_ < 0) return;
  auto* job = new Job;
  job->req.data = job;
  job->close_fd = fd_;
  fd_ = -1;
  uv_queue_work(loop_, &job->req, run_job, [](uv_work_t* req, int /*status*/) {
    std::unique_ptr<Job> j(static_cast<Job*>(req->data));
    if (j->close_fd >= 0) ::close(j->close_fd);  // cancelled before it ran
  });
}

void SpoolFeeder::start_read(const spool::PendingRecords& first, const std::string& path) {
  auto* job = new Job;
  job->req.data = job;
  job->feeder = this;
  job->segment = first.location.segment;
  job->path = path;
  if (fd_ >= 0) job->fd = fd_;  // pump released any fd of another segment
  fd_ = -1;
  // The run: consecutive owed entries of this segment, within the caps and
  // the room left in the durable share of the budget (at least one entry).
  const MemoryBudget& budget = producer_.memory_budget();
  const std::size_t room = std::min(budget.limit() / 2 - budget.used(), kMaxBytesPerJob);
  std::size_t bytes = first.location.size;
  job->items.push_back(ReadItem{first, Bytes(first.location.size), std::nullopt});
  while (job->items.size() < kMaxEntriesPerJob) {
    std::optional<spool::PendingRecords> more = writer_.index().next_unsequenced(job->items.back().owed.id + 1, last_);
    if (!more || more->location.segment != job->segment || bytes + more->location.size > room) break;
    bytes += more->location.size;
    const std::size_t size = more->location.size;
    job->items.push_back(ReadItem{std::move(*more), Bytes(size), std::nullopt});
  }
  job_ = job;
  ++jobs_;
  uv_queue_work(loop_, &job->req, run_job, [](uv_work_t* req, int /*status*/) {
    std::unique_ptr<Job> j(static_cast<Job*>(req->data));
    if (j->close_fd >= 0) ::close(j->close_fd);  // cancelled before it ran
    if (j->feeder != nullptr) {
      j->feeder->finish_read(*j);
    } else if (j->fd >= 0) {
      ::close(j->fd);  // the feeder is gone: so is the loop's serving
    }
  });
}

void SpoolFeeder::finish_read(Job& job) {
  job_ = nullptr;
  fd_ = job.fd;
  fd_segment_ = job.segment;
  job.fd = -1;
  next_ = job.items.back().owed.id + 1;
  feed(job);
  pump();
}

void SpoolFeeder::feed(Job& job) {
  for (ReadItem& item : job.items) {
    // Resolved while the job ran (failed, its segment gone): not fed. Else
    // fed from its first record not yet in a batch now.
    const std::optional<spool::PendingRecords> now = writer_.index().next_unsequenced(item.owed.id, item.owed.id);
    if (!now) continue;
    const std::string& topic = now->topic;
    const std::int32_t partition = now->partition;
    std::expected<RecordRun, std::string> run =
        item.result && *item.result
            ? run_from_entry(std::move(**item.result), now->first_unsequenced)
            : std::unexpected(item.result ? item.result->error() : std::string("read cancelled"));
    if (!run) {
      spdlog::error("spool: records entry {} for {}-{} cannot be read back ({}): its acknowledged records are lost",
                    now->id, topic, partition, run.error());
      spool::ResolvedEntry failed;
      failed.target = now->id;
      failed.outcome = spool::Outcome::kFailed;
      failed.error_code = static_cast<std::int16_t>(ErrorCode::kCorruptMessage);
      static_cast<void>(writer_.append(failed, [](int, spool::EntryId) {}));
      continue;
    }
    ++fed_;
    const auto records = static_cast<std::int64_t>(run->records.size());
    producer_.submit(topic, partition, std::move(*run), completion_for(now->id, topic, partition, records));
  }
}

}  // namespace pp::durable
