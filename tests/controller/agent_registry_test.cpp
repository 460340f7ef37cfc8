// The controller's listening side against misbehaving peers: each bad connection is closed with
// a reason, and the controller keeps serving good agents.
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace tusk::testing
