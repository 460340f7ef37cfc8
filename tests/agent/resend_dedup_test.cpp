// At least once, counted once, across a forced disconnect: the agent's RecordOutbox feeds a live
// controller registry over a real socket; the connection is cut with records unacknowledged, the
// agent reconnects and resends, and the controller hands each record on exactly once.
#include <gtest/gtest.h>

#include "agent/record_outbox.hpp"
#include "tests/support/raw_agent.hpp"
#include "tests/support/registry_fixture.hpp"

namespace tusk::testing {
namespace {

proto::Record sample_record(std::uint32_t index) {
  proto::Record record;
  record.mutable_sample()->set_run_id("run");
  record.mutable_sample()->set_index(index);
  return record;
}

void send_unsent(RecordOutbox& outbox, RawAgent& agent) {
  proto::Envelope envelope;
  while (outbox.take_unsent(*envelope.mutable_records(), 3)) agent.send(envelope);
}

std::vector<std::uint64_t> one_to(std::uint64_t n) {
  std::vector<std::uint64_t> seqs;
  for (std::uint64_t i = 1; i <= n; ++i) seqs.push_back(i);
  return seqs;
}

TEST(ResendDedup, RecordsUnacknowledgedAtADisconnectArriveOnceAfterReconnect) {
  RegistryFixture controller;
  RecordOutbox outbox(100);
  {
    RawAgent agent(controller.port());
    agent.hello("lab-a", 77, outbox.first_unacked_seq());
    ASSERT_TRUE(agent.next(proto::Envelope::kHelloAck));
    for (std::uint32_t i = 1; i <= 5; ++i) outbox.add(sample_record(i));
    send_unsent(outbox, agent);
    // The controller acknowledges cumulatively; wait until it has all five.
    std::uint64_t acked = 0;
    while (acked < 5) {
      auto ack = agent.next(proto::Envelope::kRecordAck);
      ASSERT_TRUE(ack);
      acked = ack->record_ack().acked_through();
    }
    // Records 4 and 5 are acknowledged but, as if that ack were lost, we do not tell the outbox,
    // so they will be sent again; 6..8 go out and the connection dies before any answer.
    outbox.acknowledge(3);
    for (std::uint32_t i = 6; i <= 8; ++i) outbox.add(sample_record(i));
    send_unsent(outbox, agent);
    agent.close();
  }
  ASSERT_TRUE(controller.eventually([&] { return controller.record_seqs().size() >= 8; }));

  RawAgent again(controller.port());
  again.hello("lab-a", 77, outbox.first_unacked_seq());
  auto record_ack = again.next(proto::Envelope::kRecordAck);  // sent right after the hello ack
  ASSERT_TRUE(record_ack);
  EXPECT_EQ(record_ack->record_ack().acked_through(), 8u) << "the controller already holds 1..8";
  outbox.rewind();
  outbox.add(sample_record(9));
  send_unsent(outbox, again);  // resends 4..8 (duplicates) and sends 9
  ASSERT_TRUE(controller.eventually([&] { return controller.record_seqs().size() >= 9; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // room for any wrongly re-delivered record
  EXPECT_EQ(controller.record_seqs(), one_to(9));
  auto view = controller.registry().agent("lab-a");
  ASSERT_TRUE(view);
  EXPECT_EQ(view->duplicate_records, 5u);
  EXPECT_EQ(view->missing_records, 0u);
}

TEST(ResendDedup, RecordsTheAgentHadToDropAreReportedAsAGap) {
  RegistryFixture controller;
  RawAgent agent(controller.port());
  agent.hello("lab-a", 5, 1);
  ASSERT_TRUE(agent.next(proto::Envelope::kHelloAck));
  proto::Envelope envelope;
  for (std::uint64_t seq : {1, 2, 6}) {  // 3..5 dropped by an overflowing outbox
    auto* record = envelope.mutable_records()->add_records();
    *record = sample_record(static_cast<std::uint32_t>(seq));
    record->set_seq(seq);
  }
  agent.send(envelope);
  ASSERT_TRUE(controller.eventually([&] { return controller.record_seqs().size() == 3; }));
  EXPECT_TRUE(controller.eventually([&] {
    for (const auto& fault : controller.faults()) {
      if (fault == "lab-a: records 3..5 never arrived: the agent dropped them") return true;
    }
    return false;
  }));
}

TEST(ResendDedup, ANewControllerDoesNotMistakeRecordsAckedByTheOldOneForAGap) {
  RegistryFixture controller;
  RawAgent agent(controller.port());
  agent.hello("lab-a", 9, 41);  // records 1..40 were acknowledged by a controller before this one
  ASSERT_TRUE(agent.next(proto::Envelope::kHelloAck));
  proto::Envelope envelope;
  auto* record = envelope.mutable_records()->add_records();
  *record = sample_record(1);
  record->set_seq(41);
  agent.send(envelope);
  ASSERT_TRUE(controller.eventually([&] { return controller.record_seqs().size() == 1; }));
  EXPECT_TRUE(controller.faults().empty());
}

}  // namespace
}  // namespace tusk::testing
