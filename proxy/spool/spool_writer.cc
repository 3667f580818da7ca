#include "proxy/spool/spool_writer.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>

#include "proxy/protocol/wire_writer.h"
#include "proxy/spool/spool_format.h"

namespace pp::spool {

// One commit's file work and its results. Inputs are set on the loop before
// the job is queued, outputs by run() on a threadpool thread; the loop reads
// them only in the after-work callback, so no field is shared at once.
struct SpoolWriter::Job {
  uv_work_t req{};
  SpoolWriter* writer = nullptr;  // null once the writer is gone: the job only cleans up
  // Inputs.
  std::string dir;
  int fd = -1;              // the segment to append to; on return, the one still open (or -1)
  int close_fd = -1;        // a segment to close first
  std::string create_path;  // non-empty: create this segment and write at 0
  std::size_t offset = 0;
  Bytes buf;
  std::vector<std::string> unlink;
  // Loop-side bookkeeping.
  std::uint64_t segment = 0;
  std::vector<Pending> items;                              // at their offsets in buf
  std::vector<std::pair<Entry, EntryLocation>> applied;    // checkpoint and voids, before the items
  std::vector<std::pair<std::size_t, std::size_t>> seals;  // entries in buf to checksum: offset, size
  std::vector<EntryId> voids;
  // Outputs.
  int error = 0;               // errno of the failure, 0 when durable
  bool maybe_on_disk = false;  // failed, yet some of buf may be in the file
  double seconds = 0;
  std::optional<std::uint64_t> free_bytes;  // of the file system, after the job
  std::size_t checkpoint_end = 0;           // a new segment's size after its checkpoint

  void run();
  bool write_all();
  void undo_write(bool created);
  void seal();
};

namespace {

std::optional<std::uint64_t> free_bytes_of(const std::string& dir) {
  struct statvfs st {};
  if (::statvfs(dir.c_str(), &st) != 0) return std::nullopt;
  return static_cast<std::uint64_t>(st.f_bavail) * st.f_frsize;
}

std::int64_t wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Entries queued before their id is known carry this one; it is patched,
// with the CRC, at commit.
constexpr EntryId kPlaceholderId = 1;
constexpr std::size_t kIdOffset = 9;
// A group this large goes at once, without waiting out the interval.
constexpr std::size_t kEagerGroupBytes = std::size_t{1} << 20;
// A written commit's buffer is kept for the appends after the next one up
// to this capacity; a larger one (a burst) is freed.
constexpr std::size_t kSpareBufferBytes = std::size_t{8} << 20;

void work(uv_work_t* req) {
  static_cast<SpoolWriter::Job*>(req->data)->run();
}

}  // namespace

void SpoolWriter::Job::seal() {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

bool SpoolWriter::Job::write_all() {
  std::size_t done = 0;
  while (done < buf.size()) {
    const ssize_t n = ::pwrite(fd, buf.data() + done, buf.size() - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error = n < 0 ? errno : ENOSPC;
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  return true;
}

// After a failed write: a segment created by this job goes; otherwise the
// file is cut back to its durable size, or sealed if even that fails.
void SpoolWriter::Job::undo_write(bool created) {
  if (created) {
    seal();
    ::unlink(create_path.c_str());
    return;
  }
  if (::ftruncate(fd, static_cast<off_t>(offset)) != 0) {
    maybe_on_disk = true;
    seal();
  }
}

void SpoolWriter::Job::run() {
  const auto start = std::chrono::steady_clock::now();
  for (const auto& [at, size] : seals) seal_entry(buf.data() + at, size);
  if (close_fd >= 0) ::close(close_fd);
  bool created = false;
  if (!create_path.empty()) {
    fd = ::open(create_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0640);
    if (fd < 0) error = errno;
    created = fd >= 0;
  }
  if (error == 0 && !buf.empty()) {
    if (!write_all()) {
      undo_write(created);
    } else if (::fdatasync(fd) != 0) {
      // The page cache's state is unknown after a failed sync: never write
      // to this segment again.
      error = errno;
      maybe_on_disk = true;
      seal();
    } else if (created) {
      // The new name must be durable before its entries are acknowledged.
      const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (dir_fd < 0 || ::fsync(dir_fd) != 0) {
        error = errno != 0 ? errno : EIO;
        maybe_on_disk = true;
        seal();
      }
      if (dir_fd >= 0) ::close(dir_fd);
    }
  }
  for (const std::string& path : unlink) ::unlink(path.c_str());
  seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  free_bytes = free_bytes_of(dir);
}

SpoolWriter::SpoolWriter(uv_loop_t* loop, SpoolWriterConfig config, RecoveredSpool recovered, SpoolObserver* observer)
    : loop_(loop),
      config_(config),
      observer_(observer != nullptr ? observer : &null_observer_),
      dir_(std::move(recovered.dir)),
      index_(std::move(recovered.index)),
      paths_(std::move(recovered.paths)),
      next_id_(recovered.last_id + 1),
      next_segment_(recovered.last_segment + 1),
      timer_(loop) {
  disk_free_ = free_bytes_of(dir_);  // at start-up, before the loop serves
  report_usage();
}

SpoolWriter::~SpoolWriter() {
  if (job_ != nullptr) {
    job_->writer = nullptr;  // the job closes its own fd when it returns
  } else if (fd_ >= 0) {
    ::close(fd_);
  }
}

std::size_t SpoolWriter::bytes_used() const {
  return index_.bytes() + pending_bytes_.size() + in_flight_bytes_;
}

std::expected<void, SpoolWriter::Refusal> SpoolWriter::append(const EntryBody& body, Done done) {
  if (closing_) return std::unexpected(Refusal::kClosed);
  Pending p;
  p.offset = pending_bytes_.size();
  p.entry = Entry{kPlaceholderId, wall_ms(), body};
  p.size = encode_entry_unsealed(p.entry, pending_bytes_);
  // bytes_used() and the reserve count the new entry's bytes now.
  if (std::holds_alternative<RecordsEntry>(body) && (bytes_used() > config_.max_bytes || refused_for_disk())) {
    pending_bytes_.resize(p.offset);
    return std::unexpected(Refusal::kFull);
  }
  if (auto* records = std::get_if<RecordsEntry>(&p.entry.body)) records->batch = {};
  p.done = std::move(done);
  pending_.push_back(std::move(p));
  schedule();
  return {};
}

// Records that would eat into the disk reserve are refused; the refusal
// asks for a probe commit, which measures the disk again (and starts a new
// segment when that lets the active one be deleted).
bool SpoolWriter::refused_for_disk() {
  const std::uint64_t wanted = config_.disk_reserve_bytes + pending_bytes_.size() + in_flight_bytes_;
  disk_low_ = config_.disk_reserve_bytes > 0 && disk_free_.has_value() && *disk_free_ < wanted;
  if (!disk_low_) return false;
  if (auto held = disk_low_log_.admit(net::now_ms(loop_))) {
    spdlog::warn(
        "spool: the disk of {} is nearly full ({} bytes free, {} kept in reserve): records are refused with a "
        "retriable error until room returns ({} more refusals since last said)",
        dir_, *disk_free_, config_.disk_reserve_bytes, *held);
  }
  if (!probe_disk_) {
    probe_disk_ = true;
    schedule();
  }
  return true;
}

// The active segment holds entries past its checkpoint and owes nothing: a
// new segment lets it be deleted.
bool SpoolWriter::roll_for_room() const {
  return disk_low_ && fd_ >= 0 && segment_size_ > checkpoint_end_ && index_.unresolved_in_segment(segment_) == 0;
}

void SpoolWriter::close(std::function<void()> closed) {
  closing_ = true;
  on_closed_ = std::move(closed);
  timer_.stop();
  if (job_ == nullptr) start_commit();
}

void SpoolWriter::schedule() {
  if (job_ != nullptr) return;
  if (pending_.empty() && to_void_.empty() && to_unlink_.empty() && !probe_disk_) return;
  std::uint64_t delay = 0;
  // Only voids to write to a disk that just failed, or only a probe of a
  // full disk: retry at a calm pace.
  constexpr std::uint64_t kFailedRetryMs = 100;
  if ((failing_ || probe_disk_) && pending_.empty()) {
    delay = kFailedRetryMs;
  } else if (config_.fsync == FsyncPolicy::kGroup && pending_bytes_.size() < kEagerGroupBytes) {
    // At most one commit per interval: what arrives meanwhile joins the next.
    const std::uint64_t now = net::now_ms(loop_);
    const std::uint64_t due = last_commit_ms_ + config_.fsync_interval_ms;
    delay = due > now ? due - now : 0;
  }
  if (timer_.active() && delay > 0) return;
  timer_.start(delay, 0, [this] { start_commit(); });
}

std::size_t SpoolWriter::take_group(bool roll) const {
  const std::size_t used = roll ? kSegmentHeaderBytes : segment_size_;
  const std::size_t room = config_.segment_bytes > used ? config_.segment_bytes - used : 0;
  std::size_t n = 0;
  std::size_t total = 0;
  for (const Pending& p : pending_) {
    if (n > 0 && total + p.size > room) break;
    total += p.size;
    ++n;
    if (config_.fsync == FsyncPolicy::kAlways) break;
  }
  return n;
}

void SpoolWriter::add_entry(Job& job, const Entry& entry) {
  const std::size_t at = job.buf.size();
  const std::size_t size = encode_entry_unsealed(entry, job.buf);
  job.seals.emplace_back(at, size);
  job.applied.emplace_back(entry, EntryLocation{job.segment, job.offset + at, size});
}

// Moves the first `n` queued appends into the job's buffer after what it
// holds, gives them their ids, and leaves their checksums to the job.
void SpoolWriter::take_pending(Job& job, std::size_t n) {
  const std::size_t taken = n == pending_.size() ? pending_bytes_.size() : pending_[n].offset;
  const std::size_t base = job.buf.size();
  if (base == 0 && taken == pending_bytes_.size()) {
    job.buf = std::exchange(pending_bytes_, std::move(spare_bytes_));
    pending_bytes_.clear();
  } else {
    job.buf.insert(job.buf.end(), pending_bytes_.begin(), pending_bytes_.begin() + static_cast<std::ptrdiff_t>(taken));
    pending_bytes_.erase(pending_bytes_.begin(), pending_bytes_.begin() + static_cast<std::ptrdiff_t>(taken));
  }
  job.items.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    Pending& p = pending_[i];
    p.entry.id = next_id_++;
    p.offset += base;
    WireWriter::put_be(job.buf.data() + p.offset + kIdOffset, static_cast<std::int64_t>(p.entry.id));
    job.seals.emplace_back(p.offset, p.size);
    job.items.push_back(std::move(p));
  }
  pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(n));
  for (Pending& p : pending_) p.offset -= taken;
}

// A new segment starts with the identity, the cluster view and the client
// producers' snapshot, so that deleting older segments never loses them.
// The snapshot is taken now, when every earlier commit's callbacks have run:
// it covers every entry before it, and the Records entries after it are
// what a restore replays on it.
void SpoolWriter::add_checkpoint(Job& job) {
  if (index_.identity()) add_entry(job, Entry{next_id_++, wall_ms(), *index_.identity()});
  if (index_.cluster_view()) add_entry(job, Entry{next_id_++, wall_ms(), *index_.cluster_view()});
  if (client_producers_source_) add_entry(job, Entry{next_id_++, wall_ms(), client_producers_source_()});
}

// Takes the next group of queued appends (and the voids owed) into `job`,
// starting a new segment first when the active one is full or gone.
void SpoolWriter::fill_group(Job& job) {
  const bool roll = fd_ < 0 || roll_for_room() ||
                    (!pending_.empty() && segment_size_ > kSegmentHeaderBytes &&
                     segment_size_ + pending_.front().size > config_.segment_bytes);
  const std::size_t n = take_group(roll);
  if (roll) {
    job.close_fd = std::exchange(fd_, -1);
    job.segment = next_segment_++;
    job.create_path = dir_ + "/" + segment_file_name(job.segment);
    encode_segment_header(SegmentHeader{kFormatVersion, job.segment, wall_ms()}, job.buf);
    add_checkpoint(job);
    job.checkpoint_end = job.buf.size();
  } else {
    job.fd = fd_;
    job.segment = segment_;
    job.offset = segment_size_;
  }
  job.voids = std::exchange(to_void_, {});
  for (const EntryId id : job.voids) {
    add_entry(job, Entry{next_id_++, wall_ms(), ResolvedEntry{id, Outcome::kVoid, 0, -1}});
  }
  take_pending(job, n);
  last_commit_ms_ = net::now_ms(loop_);
}

void SpoolWriter::start_commit() {
  if (job_ != nullptr) return;
  // A disk that keeps failing does not hold a close up on voids it cannot write.
  const bool final_close = closing_ && pending_.empty() && (to_void_.empty() || failing_);
  const bool probe = std::exchange(probe_disk_, false);
  if (pending_.empty() && to_void_.empty() && to_unlink_.empty() && !(final_close && fd_ >= 0) && !probe) {
    if (final_close && on_closed_) std::exchange(on_closed_, nullptr)();
    return;
  }
  auto job = std::make_unique<Job>();
  job->writer = this;
  job->dir = dir_;
  job->unlink = std::exchange(to_unlink_, {});
  if (final_close) {
    job->close_fd = std::exchange(fd_, -1);
  } else if (pending_.empty() && to_void_.empty() && !roll_for_room()) {
    job->fd = fd_;  // only deletions
    job->segment = segment_;
    job->offset = segment_size_;
  } else {
    fill_group(*job);
  }
  in_flight_bytes_ = job->buf.size();
  job_ = job.release();
  job_->req.data = job_;
  uv_queue_work(loop_, &job_->req, work, [](uv_work_t* req, int /*status*/) {
    std::unique_ptr<Job> done(static_cast<Job*>(req->data));
    if (done->writer == nullptr) {
      if (done->fd >= 0) ::close(done->fd);
      return;
    }
    done->writer->finish(*done);
  });
}

void SpoolWriter::finish(Job& job) {
  job_ = nullptr;
  in_flight_bytes_ = 0;
  fd_ = job.fd;
  if (job.free_bytes) disk_free_ = job.free_bytes;
  if (disk_low_ && disk_free_ && *disk_free_ >= 2 * config_.disk_reserve_bytes) disk_low_ = false;
  if (job.error == 0) {
    finish_ok(job);
  } else {
    finish_failed(job);
  }
  if (job.buf.capacity() <= kSpareBufferBytes && job.buf.capacity() > spare_bytes_.capacity()) {
    job.buf.clear();
    spare_bytes_ = std::move(job.buf);
  }
  delete_resolved_segments();
  report_usage();
  if (closing_) {
    start_commit();
  } else {
    schedule();
  }
}

void SpoolWriter::finish_ok(Job& job) {
  if (!job.create_path.empty()) {
    paths_[job.segment] = job.create_path;
    index_.add_segment_bytes(job.segment, kSegmentHeaderBytes);
    checkpoint_end_ = job.checkpoint_end;
    spdlog::debug("spool: segment {} started", job.create_path);
  }
  if (!job.buf.empty()) {
    segment_ = job.segment;
    segment_size_ = job.offset + job.buf.size();
    observer_->on_fsync(job.seconds, job.items.size());
  }
  for (const auto& [entry, location] : job.applied) index_.apply(entry, location);
  for (const Pending& p : job.items) index_.apply(p.entry, EntryLocation{job.segment, job.offset + p.offset, p.size});
  if (failing_ && !job.buf.empty()) {
    failing_ = false;
    spdlog::info("spool: writing to {} works again ({} more failed writes since last said)", dir_,
                 write_errors_.reset());
  }
  for (Pending& p : job.items) p.done(0, p.entry.id);
}

void SpoolWriter::finish_failed(Job& job) {
  failing_ = true;
  if (auto held = write_errors_.admit(net::now_ms(loop_))) {
    spdlog::warn(
        "spool: writing to {} failed: {}; {} appends failed with a retriable error ({} more failed writes "
        "since last said)",
        dir_, std::strerror(job.error), job.items.size(), *held);
  }
  // What may have reached the disk is voided by the next commit; voids not
  // written are queued again.
  to_void_.insert(to_void_.end(), job.voids.begin(), job.voids.end());
  if (job.maybe_on_disk) {
    for (const Pending& p : job.items) to_void_.push_back(p.entry.id);
    if (!job.create_path.empty()) {
      // Sealed with entries that may be on disk: deleted once older than the
      // active segment, which takes those entries with it.
      paths_[job.segment] = job.create_path;
      index_.add_segment_bytes(job.segment, job.buf.size());
    }
  }
  if (job.fd < 0 && !job.create_path.empty()) {
    // The segment this job started is gone (or sealed): the next commit starts another.
    segment_size_ = 0;
  }
  const int status = -job.error;  // libuv errors are negated errno values
  for (Pending& p : job.items) p.done(status, kNoEntry);
}

// The newest segment stays even when closed or sealed: its checkpoint holds
// the last identity and cluster view, which the next start needs (a cold
// start answers Metadata from that view) even when nothing else is owed.
void SpoolWriter::delete_resolved_segments() {
  const std::uint64_t active = fd_ >= 0 ? segment_ : (paths_.empty() ? 0 : paths_.rbegin()->first);
  for (const std::uint64_t id : index_.take_deletable(active)) {
    const auto it = paths_.find(id);
    if (it == paths_.end()) continue;
    spdlog::debug("spool: segment {} fully resolved, deleting it", it->second);
    to_unlink_.push_back(it->second);
    paths_.erase(it);
  }
}

void SpoolWriter::report_usage() {
  observer_->on_usage(index_.bytes(), index_.unresolved_record_count(), index_.oldest_record_ms());
}

}  // namespace pp::spool
