// The fabric lab itself (tests/lab/fabric-lab.sh): routed leaf-spine namespaces whose leaves
// spread flows over every spine by their UDP ports, and whose faults sit on one link in one
// direction. Kernel UDP sockets opened inside the leaves' namespaces stand in for hosts here (a
// flow is a source port); the engines' tests run their own traffic through the same lab. Needs
// root; skips otherwise.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <bit>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tests/support/fabric_lab.hpp"

namespace tusk {
namespace {

using testing::FabricLab;

class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd& operator=(Fd&& other) noexcept {
    std::swap(fd_, other.fd_);
    return *this;
  }
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

// A UDP socket of network namespace `ns`, bound to address:port. A socket belongs to the
// namespace it was made in, so a thread that enters `ns` makes it and any thread may use it.
Fd udp_socket_in(const std::string& ns, const char* address, std::uint16_t port) {
  int made = -1;
  std::string error;
  std::thread maker([&] {
    Fd namespace_fd(::open(("/run/netns/" + ns).c_str(), O_RDONLY | O_CLOEXEC));
    if (namespace_fd.get() < 0 || setns(namespace_fd.get(), CLONE_NEWNET) != 0) {
      error = "cannot enter namespace " + ns;
      return;
    }
    Fd socket_fd(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    const int on = 1;
    // No UDP checksum: a flipped payload bit must reach the receiver, as it reaches a BERT.
    setsockopt(socket_fd.get(), SOL_SOCKET, SO_NO_CHECK, &on, sizeof(on));
    setsockopt(socket_fd.get(), SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
    const int buffer = 4 << 20;
    setsockopt(socket_fd.get(), SOL_SOCKET, SO_RCVBUF, &buffer, sizeof(buffer));
    sockaddr_in local{};
    local.sin_family = AF_INET;
    local.sin_port = htons(port);
    inet_pton(AF_INET, address, &local.sin_addr);
    if (bind(socket_fd.get(), reinterpret_cast<sockaddr*>(&local), sizeof(local)) != 0) {
      error = std::string("cannot bind ") + address + ":" + std::to_string(port) + " in " + ns;
      return;
    }
    made = socket_fd.release();
  });
  maker.join();
  if (made < 0) throw std::runtime_error(error);
  return Fd(made);
}

constexpr const char* kLeaf1Gateway = "192.168.101.1";
constexpr const char* kLeaf2Gateway = "192.168.102.1";
constexpr std::uint16_t kReceiverPort = 4791;
constexpr std::uint16_t kFirstSourcePort = 49152;
constexpr int kFlows = 64;
constexpr std::size_t kPayloadBytes = 256;

// Every datagram of a flow carries the same bytes, so any flipped bit shows as exactly one.
std::array<std::uint8_t, kPayloadBytes> payload_of(std::uint16_t source_port) {
  std::array<std::uint8_t, kPayloadBytes> payload{};
  for (std::size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<std::uint8_t>(source_port * 31 + i * 7);
  return payload;
}

struct FlowResult {
  int received = 0;
  int flipped_bits = 0;  // bits that differ from what was sent, over every datagram received
};

// Sends `datagrams` datagrams on each of kFlows flows (source ports) from leaf 1's gateway to
// leaf 2's, and returns what arrived per source port once the receiver has been quiet 300 ms.
std::map<std::uint16_t, FlowResult> send_flows(const FabricLab& lab, int datagrams) {
  const Fd receiver = udp_socket_in(lab.ns("l2"), kLeaf2Gateway, kReceiverPort);
  std::vector<Fd> senders;
  for (int flow = 0; flow < kFlows; ++flow) {
    senders.push_back(udp_socket_in(lab.ns("l1"), kLeaf1Gateway, static_cast<std::uint16_t>(kFirstSourcePort + flow)));
  }
  sockaddr_in destination{};
  destination.sin_family = AF_INET;
  destination.sin_port = htons(kReceiverPort);
  inet_pton(AF_INET, kLeaf2Gateway, &destination.sin_addr);
  std::map<std::uint16_t, FlowResult> results;
  for (int index = 0; index < datagrams; ++index) {
    for (int flow = 0; flow < kFlows; ++flow) {
      const auto payload = payload_of(static_cast<std::uint16_t>(kFirstSourcePort + flow));
      sendto(senders[flow].get(), payload.data(), payload.size(), 0, reinterpret_cast<const sockaddr*>(&destination),
             sizeof(destination));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  while (true) {
    pollfd ready{receiver.get(), POLLIN, 0};
    if (poll(&ready, 1, 300) <= 0) break;
    std::array<std::uint8_t, 2048> datagram{};
    sockaddr_in from{};
    socklen_t from_size = sizeof(from);
    const ssize_t n =
        recvfrom(receiver.get(), datagram.data(), datagram.size(), 0, reinterpret_cast<sockaddr*>(&from), &from_size);
    if (n != static_cast<ssize_t>(kPayloadBytes)) continue;
    const std::uint16_t port = ntohs(from.sin_port);
    auto& result = results[port];
    ++result.received;
    const auto sent = payload_of(port);
    for (std::size_t i = 0; i < kPayloadBytes; ++i)
      result.flipped_bits += std::popcount(static_cast<unsigned>(sent[i] ^ datagram[i]));
  }
  return results;
}

class FabricLabTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root to make the lab's namespaces";
    lab_ = std::make_unique<FabricLab>("f" + std::to_string(getpid() % 100000), "--spines 2 --leaves 2 --hosts 1");
  }
  std::unique_ptr<FabricLab> lab_;
};

int flows_with(const std::map<std::uint16_t, FlowResult>& results, const std::function<bool(const FlowResult&)>& is) {
  int count = 0;
  for (const auto& [port, result] : results) count += is(result) ? 1 : 0;
  return count;
}

TEST_F(FabricLabTest, TopologyNamesEverySwitchLinkAndHostWithItsAddresses) {
  const std::string topology = lab_->run("topology");
  for (const char* line :
       {"spine s1 namespace", "spine s2 namespace", "leaf l1 namespace", "hosts 192.168.102.0/24 gateway 192.168.102.1",
        "link l1-s2 leaf l1 dev s2 172.16.1.4/31 spine s2 dev l1 172.16.1.5/31", "host l2h1 port",
        "address 192.168.102.11/24 gateway 192.168.102.1 leaf l2"}) {
    EXPECT_NE(topology.find(line), std::string::npos) << line << "\nin:\n" << topology;
  }
  EXPECT_THROW(lab_->run("impair l3-s1 up loss=1"), std::runtime_error) << "no leaf 3 in this lab";
  EXPECT_THROW(lab_->run("impair l1-s1 sideways loss=1"), std::runtime_error);
}

// Every flow crosses; the leaf hashes flows by their ports onto both spines.
TEST_F(FabricLabTest, FlowsCrossTheSpinesAndEachSpineCarriesSome) {
  const std::uint64_t via_s1 = lab_->counter("l1-s1", "up");
  const std::uint64_t via_s2 = lab_->counter("l1-s2", "up");
  const auto results = send_flows(*lab_, 4);
  EXPECT_EQ(flows_with(results, [](const FlowResult& r) { return r.received == 4 && r.flipped_bits == 0; }), kFlows);
  const std::uint64_t s1 = lab_->counter("l1-s1", "up") - via_s1;
  const std::uint64_t s2 = lab_->counter("l1-s2", "up") - via_s2;
  EXPECT_GE(s1 + s2, 4u * kFlows);
  // 64 flows over 2 paths: fewer than 13 on one path happens once in a million runs.
  EXPECT_GE(s1, 4u * 13) << "spine 1 carried " << s1 << ", spine 2 " << s2;
  EXPECT_GE(s2, 4u * 13) << "spine 1 carried " << s1 << ", spine 2 " << s2;
}

// Loss on one link in one direction hits exactly the flows hashed onto it, every time, and
// nothing else: the signature of a path fault.
TEST_F(FabricLabTest, LossOnOneLinkDirectionHitsExactlyTheFlowsHashedOntoIt) {
  lab_->run("impair l1-s1 up loss=100");
  const auto first = send_flows(*lab_, 5);
  const auto second = send_flows(*lab_, 5);
  const int lost = kFlows - flows_with(first, [](const FlowResult& r) { return r.received > 0; });
  EXPECT_GE(lost, 13);
  EXPECT_LE(lost, kFlows - 13);
  EXPECT_EQ(flows_with(first, [](const FlowResult& r) { return r.received != 5; }), 0) << "a flow never splits";
  for (const auto& [port, result] : first) EXPECT_TRUE(second.count(port)) << "flow " << port << " changed path";
  EXPECT_EQ(first.size(), second.size());

  // The other direction of the same link does not touch this traffic.
  lab_->run("clear l1-s1");
  lab_->run("impair l1-s1 down loss=100");
  EXPECT_EQ(flows_with(send_flows(*lab_, 2), [](const FlowResult& r) { return r.received == 2; }), kFlows);
}

TEST_F(FabricLabTest, CorruptionFlipsOneBitAfterTheHeadersAndDuplicationDoublesOnlyThatPath) {
  lab_->run("impair l1-s2 up corrupt=100");
  const auto corrupted = send_flows(*lab_, 3);
  EXPECT_EQ(flows_with(corrupted, [](const FlowResult& r) { return r.received == 3; }), kFlows)
      << "corruption is not loss";
  const int hit = flows_with(corrupted, [](const FlowResult& r) { return r.flipped_bits == 3; });
  const int clean = flows_with(corrupted, [](const FlowResult& r) { return r.flipped_bits == 0; });
  EXPECT_EQ(hit + clean, kFlows) << "one bit per datagram through spine 2, none through spine 1";
  EXPECT_GE(hit, 13);
  EXPECT_GE(clean, 13);

  lab_->run("clear l1-s2");
  lab_->run("impair l1-s1 up duplicate=100");
  const auto duplicated = send_flows(*lab_, 3);
  const int doubled = flows_with(duplicated, [](const FlowResult& r) { return r.received == 6; });
  EXPECT_EQ(doubled + flows_with(duplicated, [](const FlowResult& r) { return r.received == 3; }), kFlows);
  EXPECT_EQ(doubled, clean);
  for (const auto& [port, result] : duplicated) {
    EXPECT_EQ(result.received == 6, corrupted.at(port).flipped_bits == 0)
        << "flow " << port << ": doubled on spine 1 exactly when it was clean on spine 2";
  }
}

TEST_F(FabricLabTest, ALinkThatGoesDownIsRoutedAroundAndCarriesAgainWhenBack) {
  lab_->run("link l1-s1 down");
  const std::uint64_t via_s1 = lab_->counter("l1-s1", "up");
  EXPECT_EQ(flows_with(send_flows(*lab_, 2), [](const FlowResult& r) { return r.received == 2; }), kFlows);
  EXPECT_EQ(lab_->counter("l1-s1", "up"), via_s1) << "nothing goes out on a link without carrier";

  lab_->run("flap l1-s1 50");
  EXPECT_EQ(flows_with(send_flows(*lab_, 2), [](const FlowResult& r) { return r.received == 2; }), kFlows);
  EXPECT_GT(lab_->counter("l1-s1", "up"), via_s1 + 2 * 13) << "spine 1 carries its flows again";
}

}  // namespace
}  // namespace tusk
