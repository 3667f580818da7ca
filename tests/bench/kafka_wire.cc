#include "tests/bench/kafka_wire.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "proxy/protocol/codec.h"
#include "proxy/protocol/messages/all.h"
#include "proxy/records/message_set_builder.h"
#include "proxy/records/record_batch_builder.h"

namespace pp::bench {

int connect_to(const HostPort& to) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  const std::string port = std::to_string(to.port);
  if (getaddrinfo(to.host.c_str(), port.c_str(), &hints, &res) != 0 || !res) {
    std::fprintf(stderr, "cannot resolve %s\n", to.host.c_str());
    return -1;
  }
  int fd = socket(res->ai_family, SOCK_STREAM, 0);
  if (fd >= 0 && connect(fd, res->ai_addr, res->ai_addrlen) != 0) {
    std::fprintf(stderr, "connect %s:%d: %s\n", to.host.c_str(), to.port, std::strerror(errno));
    close(fd);
    fd = -1;
  }
  freeaddrinfo(res);
  if (fd >= 0) {
    const int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  }
  return fd;
}

bool write_all(int fd, ByteView data) {
  std::size_t off = 0;
  while (off < data.size()) {
    const ssize_t n = send(fd, data.data() + off, data.size() - off, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    off += static_cast<std::size_t>(n);
  }
  return true;
}

namespace {

bool read_exact(int fd, std::uint8_t* out, std::size_t n) {
  std::size_t off = 0;
  while (off < n) {
    const ssize_t r = recv(fd, out + off, n - off, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    off += static_cast<std::size_t>(r);
  }
  return true;
}

std::int32_t be32(const std::uint8_t* p) {
  return static_cast<std::int32_t>((std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) |
                                   (std::uint32_t{p[2]} << 8) | std::uint32_t{p[3]});
}

// Frames above this are not a response to anything these tools send.
constexpr std::int32_t kMaxFrame = 64 << 20;

}  // namespace

std::optional<Bytes> read_frame_blocking(int fd) {
  std::uint8_t prefix[4];
  if (!read_exact(fd, prefix, 4)) return std::nullopt;
  const std::int32_t size = be32(prefix);
  if (size < 0 || size > kMaxFrame) return std::nullopt;
  Bytes frame(static_cast<std::size_t>(size));
  if (!read_exact(fd, frame.data(), frame.size())) return std::nullopt;
  return frame;
}

bool FrameAssembler::read_some(int fd) {
  std::uint8_t chunk[65536];
  for (;;) {
    const ssize_t n = recv(fd, chunk, sizeof chunk, MSG_DONTWAIT);
    if (n > 0) {
      buffer_.insert(buffer_.end(), chunk, chunk + n);
      if (static_cast<std::size_t>(n) < sizeof chunk) return true;
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
    if (n < 0 && errno == EINTR) continue;
    return false;
  }
}

std::optional<Bytes> FrameAssembler::pop() {
  const std::size_t have = buffer_.size() - consumed_;
  if (have < 4) return std::nullopt;
  const std::int32_t size = be32(buffer_.data() + consumed_);
  if (size < 0 || size > kMaxFrame || have < 4 + static_cast<std::size_t>(size)) return std::nullopt;
  const auto* begin = buffer_.data() + consumed_ + 4;
  Bytes frame(begin, begin + size);
  consumed_ += 4 + static_cast<std::size_t>(size);
  if (consumed_ == buffer_.size()) {
    buffer_.clear();
    consumed_ = 0;
  }
  return frame;
}

std::map<std::int32_t, HostPort> partition_leaders(const std::string& bootstrap, const std::string& topic) {
  constexpr std::int16_t kVersion = 1;  // every broker and the proxy speak it
  for (const HostPort& server : parse_bootstrap(bootstrap)) {
    const int fd = connect_to(server);
    if (fd < 0) continue;
    MetadataRequest request;
    request.topics = std::vector<MetadataRequestTopic>{MetadataRequestTopic{{}, topic, {}}};
    const RequestHeader header{ApiKey::kMetadata, kVersion, 1, std::string("bench-chatty"), {}};
    std::optional<Bytes> frame;
    if (write_all(fd, encode_request_frame(header, request))) frame = read_frame_blocking(fd);
    close(fd);
    if (!frame) continue;
    WireReader r{ByteView(*frame)};
    if (!decode_response_header(r, ApiKey::kMetadata, kVersion)) continue;
    auto response = decode_body<MetadataResponse>(r, kVersion);
    if (!response) continue;
    std::map<std::int32_t, HostPort> brokers;
    for (const auto& b : response->brokers) brokers[b.node_id] = HostPort{b.host, b.port};
    std::map<std::int32_t, HostPort> leaders;
    for (const auto& t : response->topics) {
      for (const auto& p : t.partitions) {
        if (auto it = brokers.find(p.leader_id); it != brokers.end()) leaders[p.partition_index] = it->second;
      }
    }
    if (!leaders.empty()) return leaders;
  }
  std::fprintf(stderr, "no leaders for topic %s from %s\n", topic.c_str(), bootstrap.c_str());
  return {};
}

Bytes produce_request(std::int16_t version, std::int32_t correlation_id, const std::string& topic,
                      std::int32_t partition, std::int16_t acks, ByteView value) {
  Bytes records;
  if (version < 3) {
    MessageSetBuilder builder(MessageSetBuildOptions{.magic = 1});
    builder.append(wall_ms(), std::nullopt, value);
    records = builder.build();
  } else {
    RecordBatchBuilder builder;
    builder.append(wall_ms(), std::nullopt, value);
    records = builder.build();
  }
  ProduceRequest request;
  request.acks = acks;
  request.timeout_ms = 30000;
  ProduceTopicData t;
  t.name = topic;
  t.partition_data.push_back(ProducePartitionData{partition, RecordsView{ByteView(records)}, {}});
  request.topic_data.push_back(std::move(t));
  const RequestHeader header{ApiKey::kProduce, version, correlation_id, std::string("bench-chatty"), {}};
  return encode_request_frame(header, request);
}

Bytes api_versions_request(std::int32_t correlation_id) {
  const RequestHeader header{ApiKey::kApiVersions, 0, correlation_id, std::string("bench-chatty"), {}};
  return encode_request_frame(header, ApiVersionsRequest{});
}

int produce_response_error(ByteView frame, std::int16_t version, std::int32_t* correlation_id) {
  WireReader r{frame};
  auto corr = decode_response_header(r, ApiKey::kProduce, version);
  if (!corr) return -1;
  *correlation_id = *corr;
  auto response = decode_body<ProduceResponse>(r, version);
  if (!response || response->responses.empty() || response->responses[0].partition_responses.empty()) {
    return -1;
  }
  return static_cast<int>(response->responses[0].partition_responses[0].error_code);
}

}  // namespace pp::bench
