#include "agent/record_outbox.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace tusk {
namespace {

using Seqs = std::vector<std::uint64_t>;

// A sample record whose index lets a test tell records apart independently of seq.
proto::Record record(std::uint32_t index) {
  proto::Record r;
  r.mutable_sample()->set_run_id("run");
  r.mutable_sample()->set_index(index);
  return r;
}

void add_n(RecordOutbox& outbox, int n) {
  for (int i = 0; i < n; ++i) outbox.add(record(static_cast<std::uint32_t>(i + 1)));
}

// Sequence numbers of what one take_unsent hands out.
Seqs take(RecordOutbox& outbox, std::size_t max_records = 100) {
  proto::RecordBatch batch;
  outbox.take_unsent(batch, max_records);
  Seqs seqs;
  for (const auto& r : batch.records()) seqs.push_back(r.seq());
  return seqs;
}

// ---- numbering -------------------------------------------------------------------------------

TEST(RecordOutbox, StartsEmpty) {
  RecordOutbox outbox(8);
  EXPECT_EQ(outbox.pending(), 0u);
  EXPECT_EQ(outbox.last_seq(), 0u);
  EXPECT_EQ(outbox.first_unacked_seq(), 1u);
  EXPECT_EQ(outbox.acked_through(), 0u);
  EXPECT_EQ(outbox.dropped(), 0u);
  proto::RecordBatch batch;
  EXPECT_FALSE(outbox.take_unsent(batch, 10));
  EXPECT_EQ(batch.records_size(), 0);
}

TEST(RecordOutbox, SequenceNumbersStartAtOneAndCount) {
  RecordOutbox outbox(8);
  EXPECT_EQ(outbox.add(record(10)), 1u);
  EXPECT_EQ(outbox.add(record(20)), 2u);
  EXPECT_EQ(outbox.add(record(30)), 3u);
  EXPECT_EQ(outbox.last_seq(), 3u);
  EXPECT_EQ(outbox.pending(), 3u);
  EXPECT_EQ(outbox.first_unacked_seq(), 1u);
}

TEST(RecordOutbox, AddAssignsTheSeqWhateverTheCallerSet) {
  RecordOutbox outbox(8);
  auto r = record(1);
  r.set_seq(99);
  EXPECT_EQ(outbox.add(r), 1u);
  EXPECT_EQ(take(outbox), (Seqs{1}));
}

TEST(RecordOutbox, SentRecordsCarryTheirSeqAndContent) {
  RecordOutbox outbox(8);
  outbox.add(record(10));
  outbox.add(record(20));
  proto::RecordBatch batch;
  ASSERT_TRUE(outbox.take_unsent(batch, 10));
  ASSERT_EQ(batch.records_size(), 2);
  EXPECT_EQ(batch.records(0).seq(), 1u);
  EXPECT_EQ(batch.records(0).sample().index(), 10u);
  EXPECT_EQ(batch.records(1).seq(), 2u);
  EXPECT_EQ(batch.records(1).sample().index(), 20u);
  EXPECT_EQ(batch.records(1).sample().run_id(), "run");
}

// ---- take_unsent -----------------------------------------------------------------------------

TEST(RecordOutbox, TakeUnsentRespectsMaxRecords) {
  RecordOutbox outbox(8);
  add_n(outbox, 5);
  EXPECT_EQ(take(outbox, 2), (Seqs{1, 2}));
  EXPECT_EQ(take(outbox, 2), (Seqs{3, 4}));
  EXPECT_EQ(take(outbox, 2), (Seqs{5}));
  EXPECT_EQ(take(outbox, 2), Seqs{});
}

TEST(RecordOutbox, EachRecordIsSentOncePerConnection) {
  RecordOutbox outbox(8);
  add_n(outbox, 3);
  EXPECT_EQ(take(outbox), (Seqs{1, 2, 3}));
  proto::RecordBatch batch;
  EXPECT_FALSE(outbox.take_unsent(batch, 10));
  EXPECT_EQ(batch.records_size(), 0);
  // Sent but not acknowledged: still held.
  EXPECT_EQ(outbox.pending(), 3u);
  // Only the new one goes out.
  outbox.add(record(4));
  EXPECT_EQ(take(outbox), (Seqs{4}));
}

TEST(RecordOutbox, TakeUnsentReplacesWhatTheBatchHeld) {
  RecordOutbox outbox(8);
  add_n(outbox, 2);
  proto::RecordBatch batch;
  batch.add_records()->set_seq(77);
  ASSERT_TRUE(outbox.take_unsent(batch, 10));
  ASSERT_EQ(batch.records_size(), 2);
  EXPECT_EQ(batch.records(0).seq(), 1u);
  EXPECT_EQ(batch.records(1).seq(), 2u);
}

// ---- acknowledge -----------------------------------------------------------------------------

TEST(RecordOutbox, AcknowledgeDropsRecordsThroughTheAckedSeq) {
  RecordOutbox outbox(8);
  add_n(outbox, 5);
  take(outbox);
  outbox.acknowledge(3);
  EXPECT_EQ(outbox.acked_through(), 3u);
  EXPECT_EQ(outbox.pending(), 2u);  // 4 and 5
  EXPECT_EQ(outbox.first_unacked_seq(), 4u);
  outbox.rewind();
  EXPECT_EQ(take(outbox), (Seqs{4, 5}));
}

TEST(RecordOutbox, AnOlderOrRepeatedAckIsIgnored) {
  RecordOutbox outbox(8);
  add_n(outbox, 5);
  take(outbox);
  outbox.acknowledge(3);
  outbox.acknowledge(2);
  EXPECT_EQ(outbox.acked_through(), 3u);  // not moved back to 2
  outbox.acknowledge(3);
  EXPECT_EQ(outbox.acked_through(), 3u);
  EXPECT_EQ(outbox.pending(), 2u);
  EXPECT_EQ(outbox.first_unacked_seq(), 4u);
  // Nothing was un-sent by the stale acks.
  EXPECT_EQ(take(outbox), Seqs{});
}

TEST(RecordOutbox, AcknowledgingEverythingEmptiesTheOutbox) {
  RecordOutbox outbox(8);
  add_n(outbox, 3);
  take(outbox);
  outbox.acknowledge(3);
  EXPECT_EQ(outbox.pending(), 0u);
  EXPECT_EQ(outbox.first_unacked_seq(), 4u);  // last_seq 3 + 1
  EXPECT_EQ(outbox.last_seq(), 3u);
  outbox.rewind();
  EXPECT_EQ(take(outbox), Seqs{});
  // Numbering goes on after the acked ones.
  EXPECT_EQ(outbox.add(record(4)), 4u);
  EXPECT_EQ(outbox.first_unacked_seq(), 4u);
  EXPECT_EQ(take(outbox), (Seqs{4}));
}

TEST(RecordOutbox, AckOfPartOfWhatWasSentKeepsTheRestUnsentOnly) {
  // 5 held, 3 sent, ack 2: record 3 is sent-but-unacked, 4 and 5 still to send.
  RecordOutbox outbox(8);
  add_n(outbox, 5);
  EXPECT_EQ(take(outbox, 3), (Seqs{1, 2, 3}));
  outbox.acknowledge(2);
  EXPECT_EQ(take(outbox), (Seqs{4, 5}));
  EXPECT_EQ(outbox.pending(), 3u);  // 3, 4, 5
}

// ---- rewind ----------------------------------------------------------------------------------

TEST(RecordOutbox, RewindSendsEveryUnacknowledgedRecordAgainInOrder) {
  RecordOutbox outbox(8);
  add_n(outbox, 5);
  EXPECT_EQ(take(outbox, 3), (Seqs{1, 2, 3}));
  outbox.rewind();
  EXPECT_EQ(take(outbox), (Seqs{1, 2, 3, 4, 5}));
}

TEST(RecordOutbox, RewindAfterAnAckResendsOnlyTheUnacknowledged) {
  RecordOutbox outbox(8);
  add_n(outbox, 5);
  take(outbox);
  outbox.acknowledge(2);
  outbox.rewind();
  EXPECT_EQ(take(outbox, 2), (Seqs{3, 4}));
  EXPECT_EQ(take(outbox, 2), (Seqs{5}));
}

TEST(RecordOutbox, RewindWithNothingSentChangesNothing) {
  RecordOutbox outbox(8);
  add_n(outbox, 2);
  outbox.rewind();
  EXPECT_EQ(take(outbox), (Seqs{1, 2}));
  EXPECT_EQ(take(outbox), Seqs{});
}

// ---- capacity --------------------------------------------------------------------------------

TEST(RecordOutbox, OverflowDropsTheOldestAndCountsIt) {
  RecordOutbox outbox(3);
  add_n(outbox, 5);  // 1 and 2 pushed out by 4 and 5
  EXPECT_EQ(outbox.pending(), 3u);
  EXPECT_EQ(outbox.dropped(), 2u);
  EXPECT_EQ(outbox.last_seq(), 5u);
  EXPECT_EQ(outbox.first_unacked_seq(), 3u);
  // Seqs are never reused: the controller will see the jump from 0 to 3.
  EXPECT_EQ(take(outbox), (Seqs{3, 4, 5}));
}

TEST(RecordOutbox, OverflowOfSentRecordsDoesNotResendOrSkipOthers) {
  RecordOutbox outbox(3);
  add_n(outbox, 3);
  EXPECT_EQ(take(outbox), (Seqs{1, 2, 3}));
  outbox.add(record(4));  // drops 1, which had been sent
  EXPECT_EQ(outbox.dropped(), 1u);
  EXPECT_EQ(take(outbox), (Seqs{4}));
  outbox.rewind();
  EXPECT_EQ(take(outbox), (Seqs{2, 3, 4}));
}

TEST(RecordOutbox, OverflowWithPartOfTheRecordsSent) {
  RecordOutbox outbox(3);
  add_n(outbox, 3);
  EXPECT_EQ(take(outbox, 1), (Seqs{1}));
  outbox.add(record(4));  // drops 1 (sent); 2 and 3 were not sent yet
  EXPECT_EQ(take(outbox), (Seqs{2, 3, 4}));
}

TEST(RecordOutbox, OverflowOfUnsentRecordsLosesThem) {
  RecordOutbox outbox(2);
  add_n(outbox, 3);  // 1 never went out
  EXPECT_EQ(outbox.dropped(), 1u);
  EXPECT_EQ(take(outbox), (Seqs{2, 3}));
}

TEST(RecordOutbox, AcknowledgedRecordsFreeCapacity) {
  RecordOutbox outbox(3);
  add_n(outbox, 3);
  take(outbox);
  outbox.acknowledge(3);
  add_n(outbox, 3);  // 4, 5, 6 fit without dropping
  EXPECT_EQ(outbox.dropped(), 0u);
  EXPECT_EQ(outbox.pending(), 3u);
  EXPECT_EQ(take(outbox), (Seqs{4, 5, 6}));
}

TEST(RecordOutbox, DroppedAccumulates) {
  RecordOutbox outbox(1);
  add_n(outbox, 4);  // each add after the first drops one: 3
  EXPECT_EQ(outbox.dropped(), 3u);
  EXPECT_EQ(outbox.first_unacked_seq(), 4u);
  EXPECT_EQ(take(outbox), (Seqs{4}));
}

// ---- reconnect interactions ------------------------------------------------------------------

TEST(RecordOutbox, AckAfterRewindOfRecordsNotYetResent) {
  // All five went out on the old connection; the controller had stored 1..3 and says so on
  // the new one before anything was resent.
  RecordOutbox outbox(8);
  add_n(outbox, 5);
  take(outbox);
  outbox.rewind();
  outbox.acknowledge(3);
  EXPECT_EQ(outbox.pending(), 2u);
  EXPECT_EQ(outbox.first_unacked_seq(), 4u);
  EXPECT_EQ(take(outbox), (Seqs{4, 5}));
}

TEST(RecordOutbox, AckBeyondWhatWasResentSkipsOnlyTheAcked) {
  // After a rewind 1 and 2 are resent; the ack covers 1..4 (4 was stored before the cut).
  RecordOutbox outbox(8);
  add_n(outbox, 5);
  take(outbox);
  outbox.rewind();
  EXPECT_EQ(take(outbox, 2), (Seqs{1, 2}));
  outbox.acknowledge(4);
  EXPECT_EQ(outbox.pending(), 1u);
  EXPECT_EQ(take(outbox), (Seqs{5}));
  EXPECT_EQ(take(outbox), Seqs{});
}

TEST(RecordOutbox, AckOfEverythingAfterRewindLeavesNothingToSend) {
  RecordOutbox outbox(8);
  add_n(outbox, 4);
  take(outbox);
  outbox.rewind();
  outbox.acknowledge(4);
  EXPECT_EQ(take(outbox), Seqs{});
  outbox.add(record(5));
  EXPECT_EQ(take(outbox), (Seqs{5}));
}

// ---- window ----------------------------------------------------------------------------------

// Records of one size (while seq < 128), so a window can be counted in records.
proto::Record same_size_record() {
  proto::Record r;
  r.mutable_event()->set_message(std::string(100, 'e'));
  return r;
}
std::size_t same_size_bytes() {
  proto::Record r = same_size_record();
  r.set_seq(1);
  return r.ByteSizeLong();
}
void add_same_size(RecordOutbox& outbox, int n) {
  for (int i = 0; i < n; ++i) outbox.add(same_size_record());
}

TEST(RecordOutbox, WindowLimitsTheBytesOutUnacknowledged) {
  RecordOutbox outbox(100, 4 * same_size_bytes());
  add_same_size(outbox, 10);
  EXPECT_EQ(take(outbox, 3), (Seqs{1, 2, 3}));
  EXPECT_EQ(take(outbox, 3), (Seqs{4}));  // the window holds 4
  EXPECT_EQ(outbox.in_flight(), 4u);
  EXPECT_EQ(outbox.in_flight_bytes(), 4 * same_size_bytes());
  EXPECT_EQ(take(outbox), Seqs{});
  outbox.acknowledge(2);
  EXPECT_EQ(outbox.in_flight(), 2u);
  EXPECT_EQ(take(outbox), (Seqs{5, 6}));
  outbox.acknowledge(6);
  EXPECT_EQ(take(outbox), (Seqs{7, 8, 9, 10}));
}

TEST(RecordOutbox, ABatchStopsAtItsByteLimitButTakesAtLeastOneRecord) {
  RecordOutbox outbox(100);
  add_same_size(outbox, 5);
  proto::RecordBatch batch;
  outbox.take_unsent(batch, 100, 2 * same_size_bytes() + 1);
  EXPECT_EQ(batch.records_size(), 2);
  outbox.take_unsent(batch, 100, 1);
  EXPECT_EQ(batch.records_size(), 1) << "a record larger than the batch limit still goes, alone";
}

TEST(RecordOutbox, ARecordLargerThanTheWindowGoesAloneWhenNothingIsInFlight) {
  RecordOutbox outbox(100, same_size_bytes() / 2);
  add_same_size(outbox, 3);
  EXPECT_EQ(take(outbox), (Seqs{1}));
  EXPECT_EQ(take(outbox), Seqs{});
  outbox.acknowledge(1);
  EXPECT_EQ(take(outbox), (Seqs{2}));
}

TEST(RecordOutbox, RewindOpensTheWindowForTheResend) {
  RecordOutbox outbox(100, 3 * same_size_bytes());
  add_same_size(outbox, 5);
  EXPECT_EQ(take(outbox), (Seqs{1, 2, 3}));
  outbox.rewind();  // a new connection: nothing is in flight on it yet
  EXPECT_EQ(outbox.in_flight(), 0u);
  EXPECT_EQ(outbox.in_flight_bytes(), 0u);
  EXPECT_EQ(take(outbox), (Seqs{1, 2, 3}));
  EXPECT_EQ(take(outbox), Seqs{});
}

TEST(RecordOutbox, DroppingTheOldestWhileFullShrinksWhatIsInFlight) {
  RecordOutbox outbox(4, 2 * same_size_bytes());
  add_same_size(outbox, 4);
  EXPECT_EQ(take(outbox), (Seqs{1, 2}));
  outbox.add(same_size_record());  // drops 1, which was in flight
  EXPECT_EQ(outbox.in_flight(), 1u);
  EXPECT_EQ(outbox.in_flight_bytes(), same_size_bytes());
  EXPECT_EQ(take(outbox), (Seqs{3}));
}

}  // namespace
}  // namespace tusk

namespace tusk {
namespace {

// Before: an engine's text in another encoding (an interface name, a strerror in a Latin-1
// locale) made a record the controller refused whole, again after every reconnect.
TEST(RecordOutbox, EveryStringOfARecordIsMadeValidUtf8AsItIsAdded) {
  RecordOutbox outbox(10);
  proto::Record record;
  auto& stream = *record.mutable_sample()->add_streams();
  stream.set_stream_id("eth\xe9");
  (*stream.mutable_counters())["rx_\xff"] = 7;
  stream.add_path()->set_address("\xc0\xaf");
  outbox.add(record);
  proto::Record event;
  event.mutable_event()->set_message("caf\xe9 \x01 kept");
  outbox.add(event);
  proto::RecordBatch batch;
  ASSERT_TRUE(outbox.take_unsent(batch, 10));
  ASSERT_EQ(batch.records_size(), 2);
  const auto& sent = batch.records(0).sample().streams(0);
  EXPECT_EQ(sent.stream_id(), "eth\xef\xbf\xbd");
  EXPECT_EQ(sent.counters().at("rx_\xef\xbf\xbd"), 7u);
  EXPECT_EQ(sent.path(0).address(), "\xef\xbf\xbd\xef\xbf\xbd");
  EXPECT_FALSE(sent.has_flow());
  // Control characters are the controller's to escape where it prints them; only encoding is fixed.
  EXPECT_EQ(batch.records(1).event().message(), "caf\xef\xbf\xbd \x01 kept");
  std::string wire;
  ASSERT_TRUE(batch.SerializeToString(&wire));
  proto::RecordBatch parsed;
  EXPECT_TRUE(parsed.ParseFromString(wire)) << "the controller's strict parse accepts it";
}

}  // namespace
}  // namespace tusk
