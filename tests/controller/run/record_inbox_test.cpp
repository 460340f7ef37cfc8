#include "controller/run/record_inbox.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <initializer_list>
#include <utility>
#include <vector>

namespace tusk {
namespace {

using Seqs = std::vector<std::uint64_t>;
using Gaps = std::vector<std::pair<std::uint64_t, std::uint64_t>>;

// A batch of sample records with these sequence numbers; each sample's index echoes its seq so
// the test can tell that the record returned is the one sent.
proto::RecordBatch batch(std::initializer_list<std::uint64_t> seqs) {
  proto::RecordBatch b;
  for (auto seq : seqs) {
    auto* record = b.add_records();
    record->set_seq(seq);
    record->mutable_sample()->set_run_id("run");
    record->mutable_sample()->set_index(static_cast<std::uint32_t>(seq));
  }
  return b;
}

Seqs seqs_of(const std::vector<proto::Record>& records) {
  Seqs seqs;
  for (const auto& record : records) seqs.push_back(record.seq());
  return seqs;
}

TEST(RecordInbox, StartsWithNothingStored) {
  RecordInbox inbox;
  EXPECT_EQ(inbox.acked_through(), 0u);
  EXPECT_EQ(inbox.duplicates_total(), 0u);
  EXPECT_EQ(inbox.missing_total(), 0u);
}

TEST(RecordInbox, InOrderRecordsAreAllFresh) {
  RecordInbox inbox;
  auto accepted = inbox.accept(batch({1, 2, 3}));
  EXPECT_EQ(seqs_of(accepted.fresh), (Seqs{1, 2, 3}));
  EXPECT_EQ(accepted.duplicates, 0u);
  EXPECT_TRUE(accepted.gaps.empty());
  EXPECT_EQ(inbox.acked_through(), 3u);

  accepted = inbox.accept(batch({4, 5}));
  EXPECT_EQ(seqs_of(accepted.fresh), (Seqs{4, 5}));
  EXPECT_EQ(accepted.duplicates, 0u);
  EXPECT_TRUE(accepted.gaps.empty());
  EXPECT_EQ(inbox.acked_through(), 5u);
  EXPECT_EQ(inbox.duplicates_total(), 0u);
  EXPECT_EQ(inbox.missing_total(), 0u);
}

TEST(RecordInbox, FreshRecordsKeepTheirContent) {
  RecordInbox inbox;
  const auto accepted = inbox.accept(batch({1, 2}));
  ASSERT_EQ(accepted.fresh.size(), 2u);
  ASSERT_TRUE(accepted.fresh[1].has_sample());
  EXPECT_EQ(accepted.fresh[1].sample().index(), 2u);
  EXPECT_EQ(accepted.fresh[1].sample().run_id(), "run");
}

TEST(RecordInbox, EmptyBatchChangesNothing) {
  RecordInbox inbox;
  inbox.accept(batch({1, 2}));
  const auto accepted = inbox.accept(proto::RecordBatch{});
  EXPECT_TRUE(accepted.fresh.empty());
  EXPECT_EQ(accepted.duplicates, 0u);
  EXPECT_TRUE(accepted.gaps.empty());
  EXPECT_EQ(inbox.acked_through(), 2u);
}

TEST(RecordInbox, ResentOverlappingBatchReturnsOnlyTheNewRecords) {
  // After a reconnect the agent resends 2..5; 2 and 3 are already stored.
  RecordInbox inbox;
  inbox.accept(batch({1, 2, 3}));
  const auto accepted = inbox.accept(batch({2, 3, 4, 5}));
  EXPECT_EQ(seqs_of(accepted.fresh), (Seqs{4, 5}));
  EXPECT_EQ(accepted.duplicates, 2u);
  EXPECT_TRUE(accepted.gaps.empty());
  EXPECT_EQ(inbox.acked_through(), 5u);
  EXPECT_EQ(inbox.duplicates_total(), 2u);
}

TEST(RecordInbox, AWhollyResentBatchIsAllDuplicates) {
  RecordInbox inbox;
  inbox.accept(batch({1, 2, 3}));
  const auto accepted = inbox.accept(batch({1, 2, 3}));
  EXPECT_TRUE(accepted.fresh.empty());
  EXPECT_EQ(accepted.duplicates, 3u);
  EXPECT_EQ(inbox.acked_through(), 3u);
}

TEST(RecordInbox, ARepeatWithinOneBatchIsADuplicate) {
  RecordInbox inbox;
  const auto accepted = inbox.accept(batch({1, 2, 2, 3}));
  EXPECT_EQ(seqs_of(accepted.fresh), (Seqs{1, 2, 3}));
  EXPECT_EQ(accepted.duplicates, 1u);
}

TEST(RecordInbox, AJumpInSequenceIsReportedAsAnInclusiveGap) {
  RecordInbox inbox;
  inbox.accept(batch({1, 2}));
  // 3 and 4 were dropped by the agent.
  const auto accepted = inbox.accept(batch({5, 6}));
  EXPECT_EQ(accepted.gaps, (Gaps{{3, 4}}));
  EXPECT_EQ(inbox.missing_total(), 2u);  // 4 - 3 + 1
  // The records after the gap are still stored.
  EXPECT_EQ(seqs_of(accepted.fresh), (Seqs{5, 6}));
  EXPECT_EQ(accepted.duplicates, 0u);
  EXPECT_EQ(inbox.acked_through(), 6u);
}

TEST(RecordInbox, RecordsAfterAGapAreAcceptedNormally) {
  RecordInbox inbox;
  inbox.accept(batch({1, 4}));
  const auto accepted = inbox.accept(batch({5, 6}));
  EXPECT_EQ(seqs_of(accepted.fresh), (Seqs{5, 6}));
  EXPECT_TRUE(accepted.gaps.empty());
  EXPECT_EQ(inbox.missing_total(), 2u);  // only 2 and 3, counted once
}

TEST(RecordInbox, ASingleMissingRecordIsAOneElementRange) {
  RecordInbox inbox;
  const auto accepted = inbox.accept(batch({1, 3}));
  EXPECT_EQ(accepted.gaps, (Gaps{{2, 2}}));
  EXPECT_EQ(inbox.missing_total(), 1u);
  EXPECT_EQ(seqs_of(accepted.fresh), (Seqs{1, 3}));
}

TEST(RecordInbox, AGapAtTheStartIsReported) {
  // The first record seen is 3: 1 and 2 were never received.
  RecordInbox inbox;
  const auto accepted = inbox.accept(batch({3}));
  EXPECT_EQ(accepted.gaps, (Gaps{{1, 2}}));
  EXPECT_EQ(inbox.missing_total(), 2u);
  EXPECT_EQ(seqs_of(accepted.fresh), (Seqs{3}));
}

TEST(RecordInbox, SeveralGapsInOneBatchAreEachReported) {
  RecordInbox inbox;
  const auto accepted = inbox.accept(batch({1, 4, 5, 9}));
  // Missing: 2..3 (2 records) and 6..8 (3 records) = 5.
  EXPECT_EQ(accepted.gaps, (Gaps{{2, 3}, {6, 8}}));
  EXPECT_EQ(inbox.missing_total(), 5u);
  EXPECT_EQ(seqs_of(accepted.fresh), (Seqs{1, 4, 5, 9}));
  EXPECT_EQ(inbox.acked_through(), 9u);
}

TEST(RecordInbox, MissingTotalAccumulatesAcrossBatches) {
  RecordInbox inbox;
  inbox.accept(batch({2}));              // 1 missing
  inbox.accept(batch({3, 7}));           // 4..6 missing: 3
  inbox.accept(batch({10}));             // 8..9 missing: 2
  EXPECT_EQ(inbox.missing_total(), 6u);  // 1 + 3 + 2
}

TEST(RecordInbox, StartAtSettlesEverythingBefore) {
  // A controller meeting an agent whose oldest unacknowledged record is 10.
  RecordInbox inbox;
  inbox.start_at(10);
  EXPECT_EQ(inbox.acked_through(), 9u);
  const auto accepted = inbox.accept(batch({8, 9, 10, 11}));
  // 8 and 9 were settled elsewhere: duplicates, not fresh, and not a gap.
  EXPECT_EQ(seqs_of(accepted.fresh), (Seqs{10, 11}));
  EXPECT_EQ(accepted.duplicates, 2u);
  EXPECT_TRUE(accepted.gaps.empty());
  EXPECT_EQ(inbox.missing_total(), 0u);
  EXPECT_EQ(inbox.acked_through(), 11u);
}

TEST(RecordInbox, StartAtAcceptsTheFirstSeqWithoutAGap) {
  RecordInbox inbox;
  inbox.start_at(100);
  const auto accepted = inbox.accept(batch({100}));
  EXPECT_EQ(seqs_of(accepted.fresh), (Seqs{100}));
  EXPECT_TRUE(accepted.gaps.empty());
  EXPECT_EQ(inbox.missing_total(), 0u);
  EXPECT_EQ(inbox.acked_through(), 100u);
}

TEST(RecordInbox, StartAtStillReportsGapsAfterTheStart) {
  RecordInbox inbox;
  inbox.start_at(10);
  const auto accepted = inbox.accept(batch({12}));
  EXPECT_EQ(accepted.gaps, (Gaps{{10, 11}}));
  EXPECT_EQ(inbox.missing_total(), 2u);
}

TEST(RecordInbox, StartAtOneOrZeroIsAFreshStart) {
  RecordInbox one;
  one.start_at(1);
  EXPECT_EQ(one.acked_through(), 0u);
  auto accepted = one.accept(batch({1}));
  EXPECT_EQ(seqs_of(accepted.fresh), (Seqs{1}));
  EXPECT_TRUE(accepted.gaps.empty());

  RecordInbox zero;
  zero.start_at(0);
  EXPECT_EQ(zero.acked_through(), 0u);
  accepted = zero.accept(batch({1}));
  EXPECT_EQ(seqs_of(accepted.fresh), (Seqs{1}));
  EXPECT_TRUE(accepted.gaps.empty());
}

TEST(RecordInbox, DuplicatesTotalAccumulatesAcrossBatches) {
  RecordInbox inbox;
  inbox.accept(batch({1, 2}));
  EXPECT_EQ(inbox.accept(batch({1, 2, 3})).duplicates, 2u);  // 1, 2
  EXPECT_EQ(inbox.accept(batch({2, 3, 4})).duplicates, 2u);  // 2, 3
  EXPECT_EQ(inbox.accept(batch({5})).duplicates, 0u);
  EXPECT_EQ(inbox.duplicates_total(), 4u);  // 2 + 2 + 0
  EXPECT_EQ(inbox.acked_through(), 5u);
}

TEST(DescribeGaps, OneGapIsNamedByItsRange) {
  EXPECT_EQ(describe_gaps({{3, 4}}), "records 3..4 never arrived: the agent dropped them");
  EXPECT_EQ(describe_gaps({{2, 2}}), "records 2 never arrived: the agent dropped them");
  EXPECT_EQ(describe_gaps({}), "");
}

TEST(DescribeGaps, ManyGapsAreOneLineWithTheirCount) {
  // An agent that numbers every other record: 256 gaps in one batch.
  RecordInbox inbox;
  proto::RecordBatch every_other;
  for (std::uint64_t seq = 2; seq <= 512; seq += 2) every_other.add_records()->set_seq(seq);
  const auto accepted = inbox.accept(every_other);
  EXPECT_EQ(accepted.gaps.size(), 256u);
  EXPECT_EQ(describe_gaps(accepted.gaps),
            "256 records in 256 gaps (first 1, last 511) never arrived: the agent dropped them");
}

}  // namespace
}  // namespace tusk
