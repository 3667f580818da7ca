#include "proxy/spool/entry_reader.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "proxy/records/crc32c.h"
#include "proxy/spool/spool_format.h"

namespace pp::spool {
namespace {

std::uint32_t be32(const std::uint8_t* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) | p[3];
}

}  // namespace

std::expected<LoadedEntry, std::string> read_entry(const std::string& path, const EntryLocation& location,
                                                   EntryId expected_id) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::unexpected(path + ": cannot open: " + std::strerror(errno));
  auto out = read_entry(fd, path, location, expected_id);
  ::close(fd);
  return out;
}

std::expected<LoadedEntry, std::string> read_entry(int fd, const std::string& path, const EntryLocation& location,
                                                   EntryId expected_id, Bytes buffer) {
  const std::string where = path + " at offset " + std::to_string(location.offset);
  if (location.size < kEntryHeaderBytes || location.size > kMaxEntryBytes + kEntryFrameBytes) {
    return std::unexpected(where + ": impossible entry size " + std::to_string(location.size));
  }
  LoadedEntry out;
  out.bytes = std::move(buffer);
  if (out.bytes.size() != location.size) out.bytes.resize(location.size);
  std::size_t done = 0;
  while (done < location.size) {
    const ssize_t n =
        ::pread(fd, out.bytes.data() + done, location.size - done, static_cast<off_t>(location.offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      std::string message = where;
      message += ": cannot read: ";
      message += n < 0 ? std::strerror(errno) : "the file ends before the entry";
      return std::unexpected(std::move(message));
    }
    done += static_cast<std::size_t>(n);
  }
  const ByteView payload = ByteView(out.bytes).subspan(kEntryFrameBytes);
  if (be32(out.bytes.data()) != payload.size() || crc32c(payload) != be32(out.bytes.data() + 4)) {
    return std::unexpected(where + ": the entry no longer matches its checksum");
  }
  auto entry = decode_entry_payload(payload);
  if (!entry) return std::unexpected(where + ": " + entry.error().describe());
  if (entry->id != expected_id) {
    return std::unexpected(where + ": holds entry " + std::to_string(entry->id) + ", not " +
                           std::to_string(expected_id));
  }
  out.entry = std::move(*entry);
  return out;
}

}  // namespace pp::spool
