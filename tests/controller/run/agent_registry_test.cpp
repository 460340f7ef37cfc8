// The controller's listening side against misbehaving peers: each bad connection is closed with
// a reason, and the controller keeps serving good agents.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <thread>

#include "tests/support/raw_agent.hpp"
#include "tests/support/registry_fixture.hpp"

namespace tusk::testing {
namespace {

bool registered(RegistryFixture& fixture, const std::string& name) {
  auto view = fixture.registry().agent(name);
  return view && view->connected;
}

TEST(AgentRegistry, RegistersAnAgentAndAcknowledgesItsHello) {
  RegistryFixture fixture;
  RawAgent agent(fixture.port());
  agent.hello("lab-a", 1);
  auto ack = agent.next(proto::Envelope::kHelloAck);
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->hello_ack().protocol_version(), kProtocolVersion);
  EXPECT_EQ(ack->hello_ack().lease_ms(), 3000u);
  EXPECT_TRUE(fixture.eventually([&] { return registered(fixture, "lab-a"); }));
}

TEST(AgentRegistry, WrongProtocolVersionIsRefusedWithAReason) {
  RegistryFixture fixture;
  RawAgent agent(fixture.port());
  agent.hello("lab-a", 1, 1, proto::PROTOCOL_VERSION_UNSPECIFIED);
  auto error = agent.next(proto::Envelope::kError);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->error().code(), proto::Error::VERSION_MISMATCH);
  EXPECT_NE(error->error().message().find("protocol version 0 is not ours (1)"), std::string::npos);
  EXPECT_TRUE(agent.closed_by_peer());
  EXPECT_FALSE(fixture.registry().agent("lab-a"));
}

TEST(AgentRegistry, FirstFrameOtherThanHelloIsRefused) {
  RegistryFixture fixture;
  RawAgent agent(fixture.port());
  proto::Envelope heartbeat;
  heartbeat.mutable_heartbeat()->set_sender_time_ns(1);
  agent.send(heartbeat);
  auto error = agent.next(proto::Envelope::kError);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->error().code(), proto::Error::BAD_MESSAGE);
  EXPECT_TRUE(agent.closed_by_peer());
}

TEST(AgentRegistry, GarbageClosesThatConnectionAndAGoodAgentStillRegisters) {
  RegistryFixture fixture;
  RawAgent garbage(fixture.port());
  garbage.send_bytes("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_TRUE(garbage.closed_by_peer());

  RawAgent good(fixture.port());
  good.hello("lab-a", 1);
  EXPECT_TRUE(good.next(proto::Envelope::kHelloAck));
}

TEST(AgentRegistry, OversizeFrameClosesThatConnection) {
  RegistryFixture fixture;
  RawAgent agent(fixture.port());
  agent.send_bytes(std::string("TUSK\x7f\xff\xff\xff", 8));  // announces ~2 GiB
  EXPECT_TRUE(agent.closed_by_peer());
}

TEST(AgentRegistry, HalfAFrameThatNeverCompletesDoesNotStallOthersAndTimesOut) {
  RegistryFixture fixture;
  RawAgent stalled(fixture.port());
  const std::string frame = framing::encode([] {
    proto::Envelope e;
    e.mutable_hello()->set_agent_name("slow");
    return e;
  }());
  stalled.send_bytes(frame.substr(0, frame.size() / 2));

  RawAgent good(fixture.port());
  good.hello("lab-a", 1);
  EXPECT_TRUE(good.next(proto::Envelope::kHelloAck)) << "a stalled peer must not block the controller";
  // The fixture's hello timeout is 500 ms: the half-frame connection is closed after it.
  EXPECT_TRUE(stalled.closed_by_peer(std::chrono::seconds(3)));
}

// Big frames wait for their last byte in memory: before its hello, an unknown peer may not make
// the controller hold more than kMaxHelloFrame; after it, records may use the full frame size.
TEST(AgentRegistry, BeforeItsHelloAPeerMayNotAnnounceAFrameLargerThanAHello) {
  RegistryFixture fixture([](AgentRegistry::Options& options) { options.hello_timeout = std::chrono::seconds(10); });
  RawAgent agent(fixture.port());
  std::string header("TUSK\0\0\0\0", 8);
  const std::uint32_t length = htonl(kMaxHelloFrame + 1);
  std::memcpy(header.data() + 4, &length, 4);
  agent.send_bytes(header);
  EXPECT_TRUE(agent.closed_by_peer(std::chrono::seconds(2))) << "closed at once, not at the hello timeout";
}

TEST(AgentRegistry, AfterItsHelloAnAgentMaySendFramesLargerThanAHello) {
  RegistryFixture fixture;
  RawAgent agent(fixture.port());
  agent.hello("lab-a", 1);
  ASSERT_TRUE(agent.next(proto::Envelope::kHelloAck));
  proto::Envelope batch;
  auto* record = batch.mutable_records()->add_records();
  record->set_seq(1);
  record->mutable_event()->set_message(std::string(kMaxHelloFrame * 2, 'x'));
  agent.send(batch);
  // The first ack answers the hello (nothing stored yet); the next one, the batch.
  std::optional<proto::Envelope> ack;
  do {
    ack = agent.next(proto::Envelope::kRecordAck);
  } while (ack && ack->record_ack().acked_through() == 0);
  ASSERT_TRUE(ack) << "the connection was closed instead";
  EXPECT_EQ(ack->record_ack().acked_through(), 1u);
}

// Heartbeats go only where the controller has been quiet: an agent whose records are acked
// often gets none, and an idle one still hears from us well within its lease.
TEST(AgentRegistry, OnlyAQuietConnectionGetsHeartbeatsAndNeverWaitsLongerThanHalfTheLease) {
  using namespace std::chrono_literals;
  RegistryFixture fixture([](AgentRegistry::Options& options) { options.lease = 900ms; });
  RawAgent idle(fixture.port());
  idle.hello("lab-idle", 1);
  ASSERT_TRUE(idle.next(proto::Envelope::kHelloAck));
  RawAgent busy(fixture.port());
  busy.hello("lab-busy", 2);
  ASSERT_TRUE(busy.next(proto::Envelope::kHelloAck));

  // Each agent's own thread: every 250 ms it sends (a record, or a heartbeat of its own so the
  // controller does not drop it as silent) and notes what arrived meanwhile.
  const auto talk = [](RawAgent& agent, bool records) {
    std::vector<RawAgent::Arrival> frames;
    for (std::uint64_t seq = 1; seq <= 16; ++seq) {
      proto::Envelope message;
      if (records) {
        auto* record = message.mutable_records()->add_records();
        record->set_seq(seq);
        record->mutable_event()->set_message("busy");
      } else {
        message.mutable_heartbeat()->set_sender_time_ns(1);
      }
      agent.send(message);
      for (const auto& frame : agent.frames_for(250ms)) frames.push_back(frame);
    }
    return frames;
  };
  std::vector<RawAgent::Arrival> idle_frames;
  std::thread idle_thread([&] { idle_frames = talk(idle, false); });
  const auto busy_frames = talk(busy, true);
  idle_thread.join();

  const auto count = [](const std::vector<RawAgent::Arrival>& frames, proto::Envelope::BodyCase kind) {
    return std::count_if(frames.begin(), frames.end(), [&](const auto& frame) { return frame.kind == kind; });
  };
  EXPECT_GE(count(busy_frames, proto::Envelope::kRecordAck), 12);
  EXPECT_EQ(count(busy_frames, proto::Envelope::kHeartbeat), 0) << "an ack every 250 ms is enough";

  EXPECT_GE(count(idle_frames, proto::Envelope::kHeartbeat), 6);
  for (std::size_t i = 1; i < idle_frames.size(); ++i) {
    EXPECT_LT(idle_frames[i].at - idle_frames[i - 1].at, 600ms) << "between frames " << i - 1 << " and " << i;
  }
}

// Connections that never say hello are capped: the one that waited longest makes room, and a
// burst of fresh ones (real agents mid-handshake) is not broken up: the newcomer is refused.
TEST(AgentRegistry, ConnectionsWithoutAHelloAreCappedAndTheOldestMakesRoom) {
  RegistryFixture fixture([](AgentRegistry::Options& options) {
    options.hello_timeout = std::chrono::seconds(10);
    options.max_pending_connections = 3;
    options.pending_grace = std::chrono::milliseconds(300);
  });
  std::vector<std::unique_ptr<RawAgent>> idle;
  for (int i = 0; i < 3; ++i) idle.push_back(std::make_unique<RawAgent>(fixture.port()));
  // The limit is full of connections younger than the grace: a fourth is refused.
  RawAgent refused(fixture.port());
  EXPECT_TRUE(refused.closed_by_peer(std::chrono::seconds(2)));
  for (const auto& connection : idle) EXPECT_FALSE(connection->closed_by_peer(std::chrono::milliseconds(10)));

  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  RawAgent good(fixture.port());
  good.hello("lab-a", 1);
  EXPECT_TRUE(good.next(proto::Envelope::kHelloAck)) << "a real agent gets in past idle connections";
  int closed = 0;
  for (const auto& connection : idle) closed += connection->closed_by_peer(std::chrono::milliseconds(200)) ? 1 : 0;
  EXPECT_EQ(closed, 1) << "exactly one idle connection made room";
}

TEST(AgentRegistry, SecondLiveProcessWithTheSameNameIsRefused) {
  RegistryFixture fixture;
  RawAgent first(fixture.port());
  first.hello("lab-a", 1);
  ASSERT_TRUE(first.next(proto::Envelope::kHelloAck));
  RawAgent second(fixture.port());
  second.hello("lab-a", 2);
  auto error = second.next(proto::Envelope::kError);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->error().code(), proto::Error::DUPLICATE_AGENT);
}

TEST(AgentRegistry, DisconnectIsReportedAsAFault) {
  RegistryFixture fixture;
  {
    RawAgent agent(fixture.port());
    agent.hello("lab-a", 1);
    ASSERT_TRUE(agent.next(proto::Envelope::kHelloAck));
  }
  EXPECT_TRUE(fixture.eventually([&] {
    for (const auto& fault : fixture.faults()) {
      if (fault.rfind("lab-a: connection lost", 0) == 0) return true;
    }
    return false;
  }));
  EXPECT_TRUE(fixture.eventually([&] { return !registered(fixture, "lab-a"); }));
}

TEST(AgentRegistry, AcceptRetriesBackOffFromTenMillisecondsToOneSecond) {
  EXPECT_EQ(accept_retry_delay(1), std::chrono::milliseconds(10));
  EXPECT_EQ(accept_retry_delay(2), std::chrono::milliseconds(20));
  EXPECT_EQ(accept_retry_delay(7), std::chrono::milliseconds(640));
  EXPECT_EQ(accept_retry_delay(8), std::chrono::milliseconds(1000));
  EXPECT_EQ(accept_retry_delay(4'000'000'000u), std::chrono::milliseconds(1000));
}

// Before: at the open-file limit every accept failed at once and the loop spun (88 % CPU, two
// million "accept failed" lines in 5 s). Now it backs off, and accepts again once fds are free.
TEST(AgentRegistry, AtTheOpenFileLimitAcceptsBackOffInsteadOfSpinning) {
  RegistryFixture fixture;
  // Three client sockets made first; connecting them needs no new descriptor, accepting them does.
  std::vector<int> clients;
  for (int i = 0; i < 3; ++i) clients.push_back(socket(AF_INET, SOCK_STREAM, 0));
  rlimit saved{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &saved), 0);
  rlimit tight = saved;
  // The count includes the directory's own descriptor, closed once it is read.
  tight.rlim_cur = static_cast<rlim_t>(std::distance(std::filesystem::directory_iterator("/proc/self/fd"),
                                                     std::filesystem::directory_iterator{})) -
                   1;
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &tight), 0);  // not one descriptor more: accept fails, EMFILE
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(fixture.port());
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  for (const int fd : clients) EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const std::uint64_t before = fixture.registry().accepts_tried();
  std::this_thread::sleep_for(std::chrono::seconds(1));
  const std::uint64_t during = fixture.registry().accepts_tried() - before;
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &saved), 0);
  EXPECT_GE(during, 1u) << "accept was not even tried";
  EXPECT_LE(during, 20u) << "accept tried " << during << " times in 1 s at the fd limit";
  // With descriptors free again every queued connection is taken (the next try is at most 1 s
  // away), and closed for saying no hello in time: each client reads the end of its stream.
  for (const int fd : clients) {
    pollfd readable{fd, POLLIN, 0};
    EXPECT_EQ(poll(&readable, 1, 4000), 1) << "a queued connection was never accepted";
    char byte;
    EXPECT_EQ(recv(fd, &byte, 1, 0), 0);
    close(fd);
  }
}

}  // namespace
}  // namespace tusk::testing
