// What one agent's records may cost the controller: bounded on arrival, and accounted for in time
// proportional to the test, whatever an agent claims.
#include "controller/run/run_data.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>

#include <chrono>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>

#include "common/clock.hpp"
#include "common/wire_bounds.hpp"
#include "tests/support/optics_port.hpp"

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
  for (std::uint32_t i : {1u, 2u, 4u}) data.samples.insert(i);
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
  data.expect("a", 0, 4);
  data.on_record("a", sample_record(0, 3));
  for (std::uint32_t index : {6u, 1'000'000u, std::numeric_limits<std::uint32_t>::max(), 0u}) {
    data.on_record("a", sample_record(0, index));
  }
  data.on_record("a", sample_record(7, 1));
  data.on_record("a", sample_record(-1, 1));
  data.with([](RunState& s) {
    ASSERT_EQ(s.tests.size(), 1u);
    EXPECT_EQ(s.tests.begin()->second.samples.size(), 1u);
    ASSERT_EQ(s.faults.size(), 2u);  // one per kind: sample index of test 0, tests the run lacks (7, -1)
    EXPECT_NE(s.faults[0].message.find("sample 6 of test 0, which makes at most 5"), std::string::npos)
        << s.faults[0].message;
    EXPECT_NE(s.faults[1].message.find("test 7, which this run of 1 tests does not have"), std::string::npos)
        << s.faults[1].message;
  });
}

// Issue 63, before: samples were admitted by index alone, so a 10-minute test's 6,001 samples at
// 100 ms arrived in 9 s and wrote 527 MB to the series file. Now an index is admitted only as the
// test's time has passed: a lead of 3 intervals, and of at least 2 s for clocks that disagree.
TEST(RunData, SamplesAheadOfTheTestsTimeAreDroppedWithOneFault) {
  RunData data("run", {6'001});
  data.expect("a", 0, 4);
  const std::int64_t started = realtime_ns();
  data.pace(0, started, 100ms);  // the test started now
  for (std::uint32_t index = 1; index <= 6'000; ++index) data.on_record("a", sample_record(0, index));
  // However long the loop took here (a sanitizer, a busy machine), no more than its time allows.
  const std::uint64_t most = SamplePace{started, 100ms}.most_by(realtime_ns());
  data.with([most](RunState& s) {
    ASSERT_EQ(s.tests.size(), 1u);
    const std::size_t admitted = s.tests.begin()->second.samples.size();
    EXPECT_GE(admitted, 20u) << "2 s of lead at 100 ms";
    EXPECT_LE(admitted, most) << "only as many as the time that passed allows";
    EXPECT_LT(admitted, 6'000u);
    ASSERT_EQ(s.faults.size(), 1u);
    EXPECT_NE(s.faults[0].message.find("when at most"), std::string::npos) << s.faults[0].message;
    EXPECT_NE(s.faults[0].message.find("(one every 100 ms)"), std::string::npos) << s.faults[0].message;
  });
  // A test that started a minute ago takes its 600th sample, and a slow interval keeps 3 of lead.
  RunData later("run", {6'001, 100});
  later.expect("a", 0, 4);
  later.expect("a", 1, 4);
  later.pace(0, realtime_ns() - 60'000'000'000, 100ms);
  later.pace(1, realtime_ns(), 10s);
  later.on_record("a", sample_record(0, 600));
  later.on_record("a", sample_record(1, 3));
  later.on_record("a", sample_record(1, 4));
  EXPECT_EQ(faults(later), 1u);
  EXPECT_EQ(SamplePace({0, 10s}).most_by(0), 3u);
  EXPECT_EQ(SamplePace({0, 100ms}).most_by(1'000'000'000), 30u);
}

// Issue 63, before: the live metrics took each record before the run's cut, so one agent's unplanned
// streams filled their 16 MiB budget. What on_record hands on is what the run kept, and only that.
TEST(RunData, WhatTheRunKeptIsAllItHandsOnToTheLiveMetrics) {
  RunData data("run", {10});
  data.expect("a", 0, 2);
  const auto with_streams = [](proto::Record record, int streams) {
    auto* list =
        record.has_result() ? record.mutable_result()->mutable_streams() : record.mutable_sample()->mutable_streams();
    for (int i = 0; i < streams; ++i) {
      auto* stream = list->Add();
      stream->set_stream_id(fmt::format("rx:b/{}", i));
      stream->set_kind("rx");
      (*stream->mutable_counters())["rx_frames"] = static_cast<std::uint64_t>(i);
    }
    return record;
  };
  const auto kept = data.on_record("a", with_streams(sample_record(0, 1), 1000), true);
  ASSERT_TRUE(kept.has_value());
  EXPECT_EQ(kept->sample().streams_size(), 2) << "the plan's two";
  EXPECT_FALSE(data.on_record("a", with_streams(sample_record(0, 1), 1000), true)) << "a retry is not news";
  EXPECT_FALSE(data.on_record("b", with_streams(sample_record(0, 2), 2), true)) << "b was handed no plan";
  EXPECT_FALSE(data.on_record("a", with_streams(sample_record(0, 99), 2), true)) << "past the test's samples";
  EXPECT_FALSE(data.on_record("a", event_record(0), true)) << "events are not the metrics'";
  proto::Record result;
  result.mutable_result()->set_run_id("run");
  result.mutable_result()->set_test_index(0);
  const auto kept_result = data.on_record("a", with_streams(result, 5), true);
  ASSERT_TRUE(kept_result.has_value());
  EXPECT_EQ(kept_result->result().streams_size(), 2);
  EXPECT_FALSE(data.on_record("a", with_streams(sample_record(0, 2), 2)).has_value()) << "not asked";
}

// Issue 63, before: every fault cap was bypassed by a new unknown test index each time (200,000
// records of a few bytes made 200,000 faults).
TEST(RunData, RecordsOfEveryTestTheRunLacksAreOneFault) {
  RunData data("run", {5});
  data.expect("a", 0, 4);
  for (int test = 1; test < 20'000; ++test) data.on_record("a", sample_record(test, 1));
  for (int test = 1; test < 20'000; ++test) data.on_record("a", event_record(-test - 1));
  data.on_record("b", sample_record(99, 1));
  EXPECT_EQ(faults(data), 2u) << "one for each agent";
}

// Issue 63, before: PlanAcks were kept whole for any test index until the run ended (40 acks of
// 15 MiB took the controller to 1.55 GB, silently). Its error is cut where the frame arrives
// (PeerTexts.*); here, an ack is kept only for a plan handed out, one each.
TEST(RunData, PlanAcksAreKeptOnlyForPlansHandedOutOneEach) {
  RunData data("run", {5, 5});
  data.expect("a", 0, 4);
  proto::PlanAck ack;
  ack.set_run_id("run");
  ack.set_error("no such device");
  for (int test : {1, 2, 1000, -3}) {
    ack.set_test_index(test);
    data.on_plan_ack("a", ack);
  }
  ack.set_test_index(0);
  data.on_plan_ack("a", ack);
  data.on_plan_ack("a", ack);  // again: replaces, never adds
  data.with([](RunState& s) {
    ASSERT_EQ(s.tests.size(), 1u) << "no entry for a test without a plan";
    const auto& kept = s.tests.begin()->second.plan_ack;
    ASSERT_TRUE(kept);
    EXPECT_EQ(kept->test_index(), 0);
  });
}

TEST(RunData, EventsPastTheLimitAreCountedInOneFault) {
  RunData data("run", {5});
  data.expect("a", 0, 4);
  for (std::size_t i = 0; i < kMaxEventsPerAgentTest + 500; ++i) data.on_record("a", event_record(0));
  const std::size_t kept = data.with([](RunState& s) {
    return s.tests[std::pair<int, std::string>{0, "a"}].events.size();
  });
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

proto::StreamCounters stream_named(const std::string& id) {
  proto::StreamCounters stream;
  stream.set_stream_id(id);
  stream.set_kind("rx");
  stream.set_peer("b");
  (*stream.mutable_counters())["rx_frames"] = 1000;
  return stream;
}

std::string fault_text(RunData& data) {
  return data.with([](RunState& s) {
    std::string text;
    for (const auto& fault : s.faults) text += fault.message + "\n";
    return text;
  });
}

// Before: a result with 160,000 streams was kept whole and paired stream by stream (335 s).
TEST(RunData, StreamsPastWhatThePlanCanMakeAreDroppedWithOneFault) {
  RunData data("run", {5});
  data.expect("a", 0, 6);
  proto::Record record = sample_record(0, 1);
  for (int i = 0; i < 100'000; ++i) *record.mutable_sample()->add_streams() = stream_named("s" + std::to_string(i));
  data.on_record("a", record);
  proto::Record result;
  result.mutable_result()->set_run_id("run");
  result.mutable_result()->set_test_index(0);
  *result.mutable_result()->mutable_streams() = record.sample().streams();
  data.on_record("a", result);
  data.with([](RunState& s) {
    const auto& agent = s.tests[std::pair<int, std::string>{0, "a"}];
    ASSERT_EQ(agent.series.size(), 6u);
    EXPECT_TRUE(agent.series.contains("s5"));
    ASSERT_TRUE(agent.result);
    EXPECT_EQ(agent.result->streams_size(), 6);
  });
  const std::string faults = fault_text(data);
  EXPECT_NE(faults.find("reported 100000 streams in one record of test 0, more than the 6 its plan can make"),
            std::string::npos)
      << faults;
  EXPECT_EQ(std::count(faults.begin(), faults.end(), '\n'), 1) << faults;
}

// A hostile agent that names new streams in every sample, within each record's count: the run
// keeps the plan's number of series and says once that it dropped the rest.
TEST(RunData, StreamIdsPastThePlansCountAreDroppedAcrossSamples) {
  RunData data("run", {10'000});
  data.expect("a", 0, 4);
  for (std::uint32_t index = 1; index <= 10'000; ++index) {
    proto::Record record = sample_record(0, index);
    for (int i = 0; i < 4; ++i) {
      *record.mutable_sample()->add_streams() = stream_named(fmt::format("s{}-{}", index, i));
    }
    data.on_record("a", record);
  }
  data.with([](RunState& s) {
    const auto& agent = s.tests[std::pair<int, std::string>{0, "a"}];
    EXPECT_EQ(agent.series.size(), 4u);
    EXPECT_EQ(agent.samples.size(), 10'000u);
  });
  const std::string faults = fault_text(data);
  EXPECT_NE(faults.find("named more than the 4 streams its plan can make in test 0"), std::string::npos) << faults;
  EXPECT_EQ(std::count(faults.begin(), faults.end(), '\n'), 1) << faults;
}

// A sample sent twice (the telemetry is at least once) is folded in once.
TEST(RunData, ASampleSentTwiceCountsOnce) {
  RunData data("run", {10});
  data.expect("a", 0, 4);
  proto::Record record = sample_record(0, 1);
  *record.mutable_sample()->add_streams() = stream_named("s");
  data.on_record("a", record);
  data.on_record("a", record);
  data.with([](RunState& s) {
    const auto& series = s.tests[std::pair<int, std::string>{0, "a"}].series.at("s");
    ASSERT_EQ(series.bins().size(), 1u);
    EXPECT_EQ(series.bins()[0].samples, 1u);
  });
}

// What a stream's layout sample says of it is kept for the whole run, one per stream: its names
// and values are not, not even as room kept for reuse (20 names cost ~2 KiB of 16 per stream).
TEST(RunData, AStreamKeepsWhoItIsWithoutTheRoomOfItsNamesAndValues) {
  RunData data("run", {10});
  data.expect("a", 0, 1);
  proto::Record record = sample_record(0, 1);
  proto::StreamCounters& stream = *record.mutable_sample()->add_streams();
  stream.set_stream_id("rx:b/1");
  stream.set_kind("rx");
  stream.set_peer("b");
  for (int i = 0; i < 20; ++i) {
    stream.add_counter_names(fmt::format("a_counter_name_longer_than_sso_{}", i));
    stream.add_counter_values(static_cast<std::uint64_t>(i));
  }
  data.on_record("a", record);
  data.with([&](RunState& s) {
    const auto& series = s.tests[std::pair<int, std::string>{0, "a"}].series.at("rx:b/1");
    EXPECT_EQ(series.info().stream_id(), "rx:b/1");
    EXPECT_EQ(series.info().peer(), "b");
    EXPECT_EQ(series.info().counter_names().Capacity(), 0) << "a cleared field would keep its 20 names' room";
    EXPECT_EQ(series.info().counter_values().Capacity(), 0);
    EXPECT_EQ(series.latest_counters().size(), 20u);
  });
}

// Before: 300 samples of ~4 MiB each took the controller to 1.3 GiB in 25 s.
TEST(RunData, AStreamOrASampleBeyondItsByteBudgetIsDropped) {
  RunData data("run", {500});
  data.expect("a", 0, 4);
  proto::Record record = sample_record(0, 1);
  auto huge = stream_named("huge");
  for (int i = 0; i < 2000; ++i) (*huge.mutable_counters())["counter_with_a_long_name_" + std::to_string(i)] = 1;
  ASSERT_GT(huge.ByteSizeLong(), wire::kMaxStreamBytes);
  *record.mutable_sample()->add_streams() = huge;
  // Three streams of 14 KiB each: under a stream's bound, but 4 planned streams may take 32 KiB.
  for (int s = 0; s < 3; ++s) {
    auto big = stream_named("big" + std::to_string(s));
    for (int i = 0; i < 400; ++i) (*big.mutable_counters())["counter_with_a_long_name_" + std::to_string(i)] = 1;
    ASSERT_LT(big.ByteSizeLong(), wire::kMaxStreamBytes);
    ASSERT_GT(big.ByteSizeLong(), 12 * 1024u);
    *record.mutable_sample()->add_streams() = big;
  }
  data.on_record("a", record);
  data.with([](RunState& s) {
    const auto& series = s.tests[std::pair<int, std::string>{0, "a"}].series;
    ASSERT_EQ(series.size(), 2u);
    EXPECT_TRUE(series.contains("big0"));
    EXPECT_TRUE(series.contains("big1"));
  });
  const std::string faults = fault_text(data);
  EXPECT_NE(faults.find("a stream of more than 65536 bytes"), std::string::npos) << faults;
  EXPECT_NE(faults.find("streams of more than 32768 bytes in one record"), std::string::npos) << faults;
}

TEST(RunData, PathHopsPastTheProbesReachAreCut) {
  RunData data("run", {5});
  data.expect("a", 0, 4);
  proto::Record record = sample_record(0, 1);
  auto traced = stream_named("flow");
  for (unsigned ttl = 1; ttl <= 400; ++ttl) {
    auto* hop = traced.add_path();
    hop->set_ttl(ttl);
    hop->set_address("10.0.0.1");
  }
  *record.mutable_sample()->add_streams() = traced;
  data.on_record("a", record);
  const int hops = data.with([](RunState& s) {
    return s.tests[std::pair<int, std::string>{0, "a"}].series.at("flow").info().path_size();
  });
  EXPECT_EQ(hops, static_cast<int>(wire::kMaxPathHops));
  EXPECT_NE(fault_text(data).find("a path of more than 12 hops"), std::string::npos);
}

TEST(RunData, RecordsOfATestTheAgentWasHandedNoPlanForAreDropped) {
  RunData data("run", {5, 5});
  data.expect("a", 0, 4);
  data.on_record("a", sample_record(1, 1));
  data.on_record("b", sample_record(0, 1));
  data.with([](RunState& s) { EXPECT_TRUE(s.tests.empty()); });
  const std::string faults = fault_text(data);
  EXPECT_NE(faults.find("test 1, for which it was handed no plan"), std::string::npos) << faults;
  EXPECT_NE(faults.find("test 0, for which it was handed no plan"), std::string::npos) << faults;
}

// Before: events naming another run id went straight to the run's faults, 100k of them: 817 MiB.
TEST(RunData, EventsOfAnotherRunAreHeldToTheSameLimit) {
  RunData data("run", {5});
  data.expect("a", 0, 4);
  for (std::size_t i = 0; i < kMaxEventsPerAgentTest + 500; ++i) {
    proto::Record record = event_record(0);
    record.mutable_event()->set_run_id("another-run-" + std::to_string(i));
    data.on_record("a", record);
  }
  EXPECT_EQ(faults(data), kMaxEventsPerAgentTest + 1);
  EXPECT_NE(fault_text(data).find("events outside this run's tests"), std::string::npos);
}

proto::Record optics_record(int test_index, std::uint32_t index, std::int64_t end_ns, double celsius) {
  proto::Record record;
  auto* sample = record.mutable_optics();
  sample->set_run_id("run");
  sample->set_test_index(test_index);
  sample->set_index(index);
  sample->set_agent_time_ns(end_ns);
  *sample->add_ports() = testing::port_at_temperature("p0", celsius);
  return record;
}

TEST(RunData, OpticsIntervalsAreJudgedAsTheyComeOnceEachAndBounded) {
  RunData data("run", {10});
  data.expect("a", 0, 4);
  TestSpec spec;
  spec.duration = 10s;
  spec.optics.interval = 2s;
  spec.optics.thresholds.max_module_temp_c = 70;
  data.judge_optics_intervals(0, spec);
  data.on_record("a", optics_record(0, 1, 2'000'000'000, 40));
  data.on_record("a", optics_record(0, 2, 4'000'000'000, 80));
  data.on_record("a", optics_record(0, 2, 4'000'000'000, 80));   // a retry
  data.on_record("a", optics_record(0, 7, 14'000'000'000, 80));  // 10 s at 2 s: at most 7 (one to spare)
  EXPECT_EQ(faults(data), 0u);
  data.on_record("a", optics_record(0, 8, 16'000'000'000, 80));
  EXPECT_EQ(faults(data), 1u) << "past what the test's duration holds";
  // Ports past the bound: one fault, and the timelines stay at the bound.
  proto::Record many = optics_record(0, 3, 6'000'000'000, 40);
  for (std::size_t i = 0; i < kMaxOpticsPortsPerAgent + 5; ++i) {
    *many.mutable_optics()->add_ports() = testing::port_at_temperature(fmt::format("q{}", i), 40);
  }
  data.on_record("a", many);
  data.with([](RunState& s) {
    const auto& timelines = s.tests[std::pair<int, std::string>{0, "a"}].optics_timeline;
    EXPECT_EQ(timelines.size(), kMaxOpticsPortsPerAgent);
    const OpticsTimeline& p0 = timelines.at("p0");
    EXPECT_EQ(p0.intervals, 4u);  // 1, 2, 7 and 3
    EXPECT_EQ(p0.failing, 2u);
    EXPECT_EQ(p0.first_end_ns, 4'000'000'000);
  });
  EXPECT_EQ(faults(data), 1u) << "the many ports are dropped silently past the first fault";
  // A test whose optics are not read every interval takes none.
  RunData other("run", {10});
  other.expect("a", 0, 4);
  other.on_record("a", optics_record(0, 1, 2'000'000'000, 40));
  EXPECT_EQ(faults(other), 1u);
}

TEST(RunData, AJudgedTestIsHandedOverOnceAndWhatComesLateIsDropped) {
  RunData data("run", {10, 10});
  data.expect("a", 0, 4);
  data.expect("a", 1, 4);
  proto::Record record = sample_record(0, 1);
  *record.mutable_sample()->add_streams() = stream_named("s");
  data.on_record("a", record);
  data.on_record("a", sample_record(1, 1));
  const auto taken = data.take_test(0, {"a", "b"});
  ASSERT_EQ(taken.size(), 2u);
  EXPECT_EQ(taken.at("a").series.size(), 1u);
  EXPECT_TRUE(taken.at("b").series.empty()) << "an agent that sent nothing has its empty data";
  data.with([](RunState& s) {
    EXPECT_FALSE(s.tests.contains({0, "a"})) << "kept twice: in the run's state and in the outcome";
    EXPECT_TRUE(s.tests.contains({1, "a"}));
  });
  proto::Record late = sample_record(0, 2);
  *late.mutable_sample()->add_streams() = stream_named("s");
  data.on_record("a", late);
  proto::PlanAck ack;
  ack.set_run_id("run");
  ack.set_test_index(0);
  data.on_plan_ack("a", ack);
  data.with([](RunState& s) { EXPECT_FALSE(s.tests.contains({0, "a"})); });
  EXPECT_EQ(faults(data), 0u);
}

}  // namespace
}  // namespace tusk
