// What one agent's records may cost the controller: bounded on arrival, and accounted for in time
// proportional to the test, whatever an agent claims.
#include "controller/run/run_data.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>

namespace tusk {
namespace {

using namespace std::chrono_literals;

proto::Record sample_record(int test_index, std::uint32_t index) {
  proto::Record record;
  record.mutable_sample()->set_run_id("run");
  record.mutable_sample()->set_test_index(test_index);
  record.mutable_sample()->set_index(index);
  return record;
}

proto::Record event_record(int test_index) {
  proto::Record record;
  record.mutable_event()->set_run_id("run");
  record.mutable_event()->set_test_index(test_index);
  record.mutable_event()->set_message("something happened");
  return record;
}

std::size_t faults(RunData& data) {
  return data.with([](RunState& s) { return s.faults.size(); });
}

TEST(RunData, MostSamplesIsOnePerIntervalAndOneToSpare) {
  EXPECT_EQ(most_samples(10s, 1s), 11u);
  EXPECT_EQ(most_samples(4500ms, 1s), 5u);
  EXPECT_EQ(most_samples(1s, 0ms), 1001u);  // no interval divides by zero
}

// Before: a result claiming 4294967295 samples made a uint32 loop that never ended.
TEST(RunData, AClaimOfFourBillionSamplesIsAccountedUpToTheTestsLength) {
  AgentTestData data;
  for (std::uint32_t i : {1u, 2u, 4u}) data.samples[i] = proto::Sample{};
  const SampleAccount account = account_samples(data, std::numeric_limits<std::uint32_t>::max(), 10);
  EXPECT_TRUE(account.claim_beyond_test);
  EXPECT_EQ(account.missing_count, 7u);  // 3, 5..10
  EXPECT_EQ(account.missing, (std::vector<std::uint32_t>{3, 5, 6, 7, 8, 9, 10}));
  const SampleAccount honest = account_samples(data, 4, 10);
  EXPECT_FALSE(honest.claim_beyond_test);
  EXPECT_EQ(honest.missing, std::vector<std::uint32_t>{3});
}

TEST(RunData, TheListOfMissingSamplesIsShortButTheCountIsWhole) {
  const SampleAccount account = account_samples(AgentTestData{}, 100'000, 100'000);
  EXPECT_EQ(account.missing_count, 100'000u);
  EXPECT_EQ(account.missing.size(), kMaxListedMissing);
}

TEST(RunData, SamplesPastTheTestOrOfATestTheRunLacksAreDroppedAndReportedOnce) {
  RunData data("run", {5});
  data.on_record("a", sample_record(0, 3));
  for (std::uint32_t index : {6u, 1'000'000u, std::numeric_limits<std::uint32_t>::max(), 0u}) {
    data.on_record("a", sample_record(0, index));
  }
  data.on_record("a", sample_record(7, 1));
  data.on_record("a", sample_record(-1, 1));
  data.with([](RunState& s) {
    ASSERT_EQ(s.tests.size(), 1u);
    EXPECT_EQ(s.tests.begin()->second.samples.size(), 1u);
    ASSERT_EQ(s.faults.size(), 3u);  // one per kind and test: sample index, test 7, test -1
    EXPECT_NE(s.faults[0].message.find("sample 6 of test 0, which makes at most 5"), std::string::npos)
        << s.faults[0].message;
    EXPECT_NE(s.faults[1].message.find("test 7, which this run of 1 tests does not have"), std::string::npos)
        << s.faults[1].message;
  });
}

TEST(RunData, EventsPastTheLimitAreCountedInOneFault) {
  RunData data("run", {5});
  for (std::size_t i = 0; i < kMaxEventsPerAgentTest + 500; ++i) data.on_record("a", event_record(0));
  const std::size_t kept = data.with([](RunState& s) { return s.tests[std::pair<int, std::string>{0, "a"}].events.size(); });
  EXPECT_EQ(kept, kMaxEventsPerAgentTest);
  EXPECT_EQ(faults(data), 1u);
}

TEST(RunData, ConnectionFaultsPastTheLimitAreCountedInOneFault) {
  RunData data("run", {5});
  for (std::size_t i = 0; i < kMaxConnectionFaultsPerAgentTest + 500; ++i) data.on_fault("a", "connection lost: x");
  data.on_fault("b", "connection lost: y");
  EXPECT_EQ(faults(data), kMaxConnectionFaultsPerAgentTest + 2) << "a's limit, one line saying so, and b's";
  const auto last_of_a = data.with([](RunState& s) { return s.faults[kMaxConnectionFaultsPerAgentTest].message; });
  EXPECT_NE(last_of_a.find("not listed"), std::string::npos) << last_of_a;
}

}  // namespace
}  // namespace tusk
