// Issue 17: a WireFrame's borrowed slices go to the socket where they lie,
// in order between the frame's own bytes, and their owners live until
// libuv is done with them. Real sockets over loopback; the reader starts
// late so the write is partly queued, the path where lifetimes matter.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "proxy/net/tcp.h"
#include "proxy/net/timer.h"
#include "tests/unit/net/loop_test.h"

namespace pp::net {
namespace {

// More than loopback's socket buffers hold: a write of it cannot finish
// before the peer reads.
constexpr std::size_t kSliceBytes = 8 * 1024 * 1024;

std::shared_ptr<Bytes> pattern(std::size_t size, std::uint8_t seed) {
  auto bytes = std::make_shared<Bytes>(size);
  for (std::size_t i = 0; i < size; ++i) (*bytes)[i] = static_cast<std::uint8_t>(i * 7 + seed);
  return bytes;
}

TEST_F(LoopTest, WireFrameArrivesInOrderAndKeepsItsOwnersUntilWritten) {
  std::vector<TcpConnection> accepted;
  Bytes received;
  auto listener = TcpListener::listen(&loop_, {"127.0.0.1", 0}, [&](TcpConnection c) {
    accepted.push_back(std::move(c));
    accepted.back().set_callbacks([&](ByteView d) { received.insert(received.end(), d.begin(), d.end()); }, [](int) {});
  });
  ASSERT_TRUE(listener.has_value()) << listener.error();

  auto first = pattern(kSliceBytes, 1);
  auto second = pattern(kSliceBytes, 2);
  WireFrame frame(*pattern(3000, 3));
  // A slice at the very start, one inside, and one at the end, two of them
  // from the same owner.
  frame.borrowed.push_back({0, ByteView(*first), first});
  frame.borrowed.push_back({1500, ByteView(*second), second});
  frame.borrowed.push_back({3000, ByteView(*first).subspan(100, 5000), first});
  Bytes expected = frame.flatten();
  const Bytes after(100, 0xab);  // a plain write queued behind the frame
  expected.insert(expected.end(), after.begin(), after.end());
  const std::weak_ptr<Bytes> first_alive = first;
  const std::weak_ptr<Bytes> second_alive = second;
  first.reset();
  second.reset();

  bool written = false;
  TcpConnection client = TcpConnection::connect(&loop_, {"127.0.0.1", listener->port()}, [&](int status) {
    ASSERT_EQ(status, 0) << uv_strerror(status);
    client.write(std::move(frame));
    client.write(after);
    written = true;
  });
  Timer guard(&loop_);
  guard.start(10000, 0, [&] { ADD_FAILURE() << "timed out"; });
  while ((!written || accepted.empty()) && guard.active() && uv_run(&loop_, UV_RUN_ONCE) != 0) {
  }
  ASSERT_TRUE(written);
  EXPECT_FALSE(first_alive.expired()) << "a queued write keeps the bytes it borrows";
  EXPECT_FALSE(second_alive.expired());

  accepted.front().start_reading();
  while (received.size() < expected.size() && guard.active() && uv_run(&loop_, UV_RUN_ONCE) != 0) {
  }
  for (int i = 0; i < 10 && !first_alive.expired(); ++i) uv_run(&loop_, UV_RUN_NOWAIT);
  guard.stop();
  guard = Timer();
  client.close();
  listener->close();
  accepted.clear();
  ASSERT_EQ(received.size(), expected.size());
  EXPECT_TRUE(bytes_equal(received, expected)) << "pieces in wire order, the plain write after them";
  EXPECT_TRUE(first_alive.expired()) << "released once written";
  EXPECT_TRUE(second_alive.expired());
}

TEST_F(LoopTest, ClosingWithAFrameQueuedReleasesItsOwners) {
  std::vector<TcpConnection> accepted;
  auto listener = TcpListener::listen(&loop_, {"127.0.0.1", 0}, [&](TcpConnection c) {
    accepted.push_back(std::move(c));  // never reads
  });
  ASSERT_TRUE(listener.has_value()) << listener.error();
  auto owner = pattern(3 * kSliceBytes, 4);
  const std::weak_ptr<Bytes> alive = owner;
  WireFrame frame(Bytes(10, 1));
  frame.borrowed.push_back({5, ByteView(*owner), owner});
  owner.reset();
  bool written = false;
  TcpConnection client = TcpConnection::connect(&loop_, {"127.0.0.1", listener->port()}, [&](int status) {
    ASSERT_EQ(status, 0) << uv_strerror(status);
    client.write(std::move(frame));
    written = true;
  });
  Timer guard(&loop_);
  guard.start(10000, 0, [&] { ADD_FAILURE() << "timed out"; });
  while (!written && guard.active() && uv_run(&loop_, UV_RUN_ONCE) != 0) {
  }
  EXPECT_FALSE(alive.expired());
  client.close();  // the queued write is cancelled
  guard.stop();
  guard = Timer();
  listener->close();
  accepted.clear();
  uv_run(&loop_, UV_RUN_DEFAULT);
  EXPECT_TRUE(alive.expired()) << "a cancelled write still frees what it borrowed";
}

}  // namespace
}  // namespace pp::net
