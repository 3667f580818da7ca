#include "proxy/spool/spool_recovery.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "proxy/spool/segment_reader.h"

namespace pp::spool {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kIdDigits = 20;
constexpr std::string_view kSegmentSuffix = ".seg";

std::string errno_text(int err) {
  return std::strerror(err);
}

// The id of "<20 digits>.seg" or "<20 digits>.seg.corrupt", else nullopt.
std::optional<std::pair<std::uint64_t, bool>> parse_name(std::string_view name) {
  if (name.size() < kIdDigits + kSegmentSuffix.size()) return std::nullopt;
  const std::string_view digits = name.substr(0, kIdDigits);
  if (!std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) return std::nullopt;
  const std::string_view rest = name.substr(kIdDigits);
  bool corrupt = false;
  if (rest == kSegmentSuffix) {
    corrupt = false;
  } else if (rest.size() == kSegmentSuffix.size() + kCorruptSuffix.size() && rest.starts_with(kSegmentSuffix) &&
             rest.ends_with(kCorruptSuffix)) {
    corrupt = true;
  } else {
    return std::nullopt;
  }
  std::uint64_t id = 0;
  for (const char c : digits) {
    if (id > (UINT64_MAX - 9) / 10) return std::nullopt;
    id = id * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return std::pair{id, corrupt};
}

std::expected<Bytes, std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::unexpected(path + ": cannot open: " + errno_text(errno));
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  in.seekg(0, std::ios::beg);
  Bytes bytes(static_cast<std::size_t>(std::max<std::streamoff>(size, 0)));
  if (!bytes.empty() && !in.read(reinterpret_cast<char*>(bytes.data()), size)) {
    return std::unexpected(path + ": cannot read: " + errno_text(errno));
  }
  return bytes;
}

// Makes a rename or a removal in `dir` durable.
void sync_dir(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  (void)::fsync(fd);
  ::close(fd);
}

}  // namespace

std::string segment_file_name(std::uint64_t id) {
  std::string digits = std::to_string(id);
  return std::string(kIdDigits - std::min(kIdDigits, digits.size()), '0') + digits + std::string(kSegmentSuffix);
}

std::expected<std::vector<SpoolRecovery::Listed>, std::string> SpoolRecovery::list() const {
  std::error_code ec;
  if (!fs::exists(dir_, ec)) {
    if (mode_ == Mode::kReadOnly) return std::vector<Listed>{};
    fs::create_directories(dir_, ec);
    if (ec) return std::unexpected(dir_ + ": cannot create the spool directory: " + ec.message());
  }
  std::vector<Listed> files;
  for (const auto& item : fs::directory_iterator(dir_, ec)) {
    const auto parsed = parse_name(item.path().filename().string());
    if (!parsed) continue;
    files.push_back(Listed{parsed->first, item.path().string(), parsed->second});
  }
  if (ec) return std::unexpected(dir_ + ": cannot list the spool directory: " + ec.message());
  std::sort(files.begin(), files.end(), [](const Listed& a, const Listed& b) { return a.id < b.id; });
  return files;
}

std::expected<void, std::string> SpoolRecovery::cut_tail(const std::string& path, std::size_t keep) const {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return std::unexpected(path + ": cannot open to cut its torn tail: " + errno_text(errno));
  const bool ok = ::ftruncate(fd, static_cast<off_t>(keep)) == 0 && ::fsync(fd) == 0;
  const int err = errno;
  ::close(fd);
  if (!ok) return std::unexpected(path + ": cannot cut its torn tail: " + errno_text(err));
  return {};
}

std::expected<std::string, std::string> SpoolRecovery::move_aside(const std::string& path) const {
  const std::string aside = path + std::string(kCorruptSuffix);
  if (::rename(path.c_str(), aside.c_str()) != 0) {
    return std::unexpected(path + ": cannot move the corrupt segment aside: " + errno_text(errno));
  }
  sync_dir(dir_);
  return aside;
}

std::expected<std::optional<std::size_t>, std::string> SpoolRecovery::handle_damage(const Listed& file, bool last,
                                                                                    const SegmentScan& scan,
                                                                                    std::size_t file_size,
                                                                                    SegmentFile& seg,
                                                                                    RecoveredSpool& out) const {
  out.report.damage.push_back(CorruptRange{file.path, scan.valid_bytes, scan.invalid_bytes, *scan.damage});
  if (file.corrupt) return scan.invalid_bytes;  // moved aside at an earlier start: counted then
  if (last && (scan.valid_bytes >= kSegmentHeaderBytes || file_size <= kSegmentHeaderBytes)) {
    // A torn tail: the last group written before a crash.
    out.report.torn_bytes += scan.invalid_bytes;
    seg.bytes = scan.valid_bytes;
    if (mode_ == Mode::kReadOnly) return std::size_t{0};
    if (scan.valid_bytes == 0) {
      if (::unlink(file.path.c_str()) != 0) return std::unexpected(file.path + ": " + errno_text(errno));
      return std::optional<std::size_t>{};
    }
    if (auto cut = cut_tail(file.path, scan.valid_bytes); !cut) return std::unexpected(cut.error());
    return std::size_t{0};
  }
  out.report.corrupt_bytes += scan.invalid_bytes;
  seg.corrupt = true;
  if (mode_ == Mode::kRepair) {
    auto aside = move_aside(file.path);
    if (!aside) return std::unexpected(aside.error());
    seg.path = *aside;
    out.report.moved_aside.push_back(*aside);
  }
  return scan.invalid_bytes;
}

std::expected<void, std::string> SpoolRecovery::recover_one(const Listed& file, bool last, RecoveredSpool& out) const {
  auto bytes = read_file(file.path);
  if (!bytes) return std::unexpected(bytes.error());
  const HeaderResult header = decode_segment_header(*bytes);
  if (header.problem == HeaderProblem::kNewerVersion) {
    return std::unexpected(file.path + ": written by spool format version " + std::to_string(header.header.version) +
                           "; this build reads versions up to " + std::to_string(kFormatVersion) +
                           ". Refusing the spool directory: run the newer produce-proxy, or move the directory "
                           "aside");
  }
  SegmentFile seg{file.id, file.path, bytes->size(), 0, kNoEntry, kNoEntry, header.header.created_ms, file.corrupt};
  SegmentScan scan;
  if (!header.problem && header.header.segment_id != file.id) {
    scan.valid_bytes = 0;
    scan.invalid_bytes = bytes->size();
    scan.damage = "header names segment " + std::to_string(header.header.segment_id);
  } else {
    const SegmentReader reader(out.last_id);
    scan = reader.scan(*bytes, [&](const Entry& entry, std::size_t offset, std::size_t size) {
      out.index.apply(entry, EntryLocation{file.id, offset, size});
      if (seg.first_id == kNoEntry) seg.first_id = entry.id;
      seg.last_id = entry.id;
      ++seg.entries;
    });
    if (scan.entries > 0) out.last_id = scan.last_id;
  }
  const std::size_t header_bytes = std::min(bytes->size(), scan.valid_bytes == 0 ? 0 : kSegmentHeaderBytes);
  std::size_t kept_damage = 0;
  if (scan.damage) {
    auto kept = handle_damage(file, last, scan, bytes->size(), seg, out);
    if (!kept) return std::unexpected(kept.error());
    if (!*kept) {
      out.report.segments.push_back(seg);  // removed: a header torn before any entry
      return {};
    }
    kept_damage = **kept;
  }
  out.index.add_segment_bytes(file.id, header_bytes + kept_damage);
  out.paths[file.id] = seg.path;
  out.last_segment = std::max(out.last_segment, file.id);
  out.report.segments.push_back(seg);
  return {};
}

std::expected<RecoveredSpool, std::string> SpoolRecovery::run() const {
  auto files = list();
  if (!files) return std::unexpected(files.error());
  RecoveredSpool out;
  out.dir = dir_;
  // The last segment written: the highest id not already moved aside.
  std::optional<std::uint64_t> last;
  for (const Listed& f : *files) {
    if (!f.corrupt) last = f.id;
  }
  for (const Listed& f : *files) {
    if (auto one = recover_one(f, last && f.id == *last && !f.corrupt, out); !one) {
      return std::unexpected(one.error());
    }
  }
  return out;
}

}  // namespace pp::spool
