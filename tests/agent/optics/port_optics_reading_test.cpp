// The agent's optics reading of a test's ports, with a stand-in for ethtool (a script printing what
// ethtool 6.1 prints, tests/agent/optics/ethtool_optics_samples.hpp) and a sysfs tree of the test's
// own: FEC counters and received bytes at the start and the end, the module at the end; a program
// that is not there, or a name that is not a netdev, is a note and nothing else. And the runner:
// a test whose plan asks for them sends its result with its ports' optics, and one that does not,
// without.
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "agent/optics/port_optics_reading.hpp"
#include "agent/plan_runner.hpp"
#include "common/clock.hpp"
#include "common/optics_wire.hpp"
#include "tests/agent/optics/ethtool_optics_samples.hpp"

namespace tusk {
namespace {

namespace fs = std::filesystem;

class OpticsHost : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tusk-optics-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_ / "sys" / "class" / "net" / "eth9" / "statistics");
    std::ofstream(dir_ / "module.txt") << testing::kQsfp28Text;
    // Each FEC reading shows 1000 more corrected codewords than the last (a file counts them).
    std::ofstream(dir_ / "ethtool")
        << "#!/bin/sh\n"
           "dir="
        << dir_.string()
        << "\n"
           "case \"$1\" in\n"
           "  -m) cat \"$dir/module.txt\" ;;\n"
           "  --include-statistics)\n"
           "    n=$(( $(cat \"$dir/calls\" 2>/dev/null || echo 0) + 1 )); echo $n > \"$dir/calls\"\n"
           "    printf 'FEC parameters for %s:\\nActive FEC encoding: RS\\nStatistics:\\n"
           "  corrected_blocks: %d\\n  uncorrectable_blocks: 0\\n' \"$4\" $((n * 1000)) ;;\n"
           "  *) echo 'netlink error: Operation not supported' >&2; exit 1 ;;\n"
           "esac\n";
    fs::permissions(dir_ / "ethtool", fs::perms::owner_all);
    set_rx_bytes(5000);
    std::ofstream(dir_ / "sys" / "class" / "net" / "eth9" / "speed") << "100000\n";
  }
  void TearDown() override { fs::remove_all(dir_); }

  void set_rx_bytes(std::uint64_t bytes) {
    std::ofstream(dir_ / "sys" / "class" / "net" / "eth9" / "statistics" / "rx_bytes") << bytes << "\n";
  }
  optics::EthtoolSource source(const std::string& program = "") const {
    return {program.empty() ? (dir_ / "ethtool").string() : program, std::chrono::milliseconds(5000), dir_ / "sys"};
  }

  fs::path dir_;
};

TEST_F(OpticsHost, FecCountersAndBytesAtBothEndsAndTheModuleAtTheEnd) {
  optics::PortOpticsReading reading(source(), {{"0000:3b:00.0", "eth9", "192.168.101.11"}});
  set_rx_bytes(5000 + 125'000);
  const auto ports = reading.finish().whole;
  ASSERT_EQ(ports.size(), 1u);
  const proto::PortOptics& port = ports[0];
  EXPECT_EQ(port.port(), "0000:3b:00.0");
  EXPECT_EQ(port.netdev(), "eth9");
  EXPECT_EQ(port.address(), "192.168.101.11");
  EXPECT_EQ(port.note(), "");
  EXPECT_EQ(port.rx_bytes(), 125'000u);
  EXPECT_EQ(port.speed_mbps(), 100'000u);
  EXPECT_GT(port.interval_ns(), 0u);
  ASSERT_TRUE(port.has_fec_before() && port.has_fec_after());
  EXPECT_EQ(fec_from_proto(port.fec_before()).corrected_blocks.total, 1000u);
  EXPECT_EQ(fec_from_proto(port.fec_after()).corrected_blocks.total, 2000u);
  ASSERT_TRUE(port.has_module());
  const ModuleReading module = module_from_proto(port.module());
  EXPECT_EQ(module.status, ModuleStatus::diagnostics);
  EXPECT_EQ(module.part_number, "FTLC9551REPM");
  EXPECT_EQ(module.lanes.size(), 4u);
}

TEST_F(OpticsHost, EachIntervalIsReadSinceTheLastAndTheWholeTestSinceTheStart) {
  optics::PortOpticsReading reading(source(), {{"p0", "eth9", ""}});
  EXPECT_TRUE(reading.finish().last_interval.empty()) << "no interval was read";
  optics::PortOpticsReading timed(source(), {{"p0", "eth9", ""}});  // FEC reading 3: 1 and 2 were the first's
  set_rx_bytes(6000);
  const auto first = timed.interval();
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(fec_from_proto(first[0].fec_before()).corrected_blocks.total, 3000u);
  EXPECT_EQ(fec_from_proto(first[0].fec_after()).corrected_blocks.total, 4000u);
  EXPECT_EQ(first[0].rx_bytes(), 1000u);
  EXPECT_TRUE(first[0].has_module());
  set_rx_bytes(9000);
  const auto second = timed.interval();
  EXPECT_EQ(fec_from_proto(second[0].fec_before()).corrected_blocks.total, 4000u);
  EXPECT_EQ(fec_from_proto(second[0].fec_after()).corrected_blocks.total, 5000u);
  EXPECT_EQ(second[0].rx_bytes(), 3000u);
  set_rx_bytes(10000);
  const auto finished = timed.finish();
  ASSERT_EQ(finished.whole.size(), 1u);
  ASSERT_EQ(finished.last_interval.size(), 1u);
  EXPECT_EQ(fec_from_proto(finished.whole[0].fec_before()).corrected_blocks.total, 3000u);
  EXPECT_EQ(fec_from_proto(finished.whole[0].fec_after()).corrected_blocks.total, 6000u);
  EXPECT_EQ(finished.whole[0].rx_bytes(), 5000u);
  EXPECT_EQ(fec_from_proto(finished.last_interval[0].fec_before()).corrected_blocks.total, 5000u);
  EXPECT_EQ(finished.last_interval[0].rx_bytes(), 1000u);
  EXPECT_GE(finished.whole[0].interval_ns(), first[0].interval_ns() + second[0].interval_ns());
}

TEST_F(OpticsHost, AMissingProgramIsANoteAndNothingIsMadeUp) {
  optics::PortOpticsReading reading(source("tusk-no-such-ethtool"), {{"p0", "eth9", ""}});
  const auto ports = reading.finish().whole;
  ASSERT_EQ(ports.size(), 1u);
  EXPECT_NE(ports[0].note().find("tusk-no-such-ethtool"), std::string::npos) << ports[0].note();
  EXPECT_FALSE(ports[0].has_module());
  EXPECT_FALSE(ports[0].has_fec_before());
  EXPECT_FALSE(ports[0].has_fec_after());
}

TEST_F(OpticsHost, ANameThatIsNotOneNetdevIsNeverHandedToEthtoolOrJoinedToAPath) {
  optics::PortOpticsReading reading(source(), {{"p0", "../eth9", ""}, {"p1", "-m", ""}, {"p2", "", ""}});
  const auto ports = reading.finish().whole;
  ASSERT_EQ(ports.size(), 3u);
  for (const auto& port : ports) {
    EXPECT_NE(port.note().find("not read"), std::string::npos) << port.DebugString();
    EXPECT_FALSE(port.has_module() || port.has_fec_after());
  }
  EXPECT_FALSE(fs::exists(dir_ / "calls")) << "ethtool ran";
}

class ReadyEngine final : public Engine {
 public:
  void prepare(const proto::Plan&, EngineEventSink) override {}
  void start(std::int64_t) override {}
  std::vector<proto::StreamCounters> sample() override { return {}; }
  void stop() noexcept override {}
};

// The records a PlanRunner sends for `plan` on an engine whose one port is eth9, run to its end
// (`run_for` after the start).
std::vector<proto::Record> run_plan(const optics::EthtoolSource& ethtool, proto::Plan plan,
                                    std::chrono::seconds run_for) {
  boost::asio::io_context io;
  EngineCatalog engines;
  engines.engines["dpdk"] = {[] { return std::make_unique<ReadyEngine>(); },
                             [](const proto::Plan&) { return 1e6; },
                             {{"0000:3b:00.0", "eth9", "192.168.101.11"}}};
  std::vector<proto::Record> records;
  PlanRunner runner(
      io.get_executor(), engines, [&](proto::Record r) { records.push_back(std::move(r)); }, {}, ethtool);
  plan.set_run_id("run");
  plan.set_engine("dpdk");
  plan.set_max_rate_bps(1e9);
  std::vector<proto::PlanAck> answers;
  runner.on_plan(plan, [&](proto::PlanAck ack) { answers.push_back(std::move(ack)); });
  io.run_for(std::chrono::seconds(3));
  EXPECT_EQ(answers.size(), 1u);
  if (answers.size() != 1 || !answers[0].ok()) return {};
  proto::StartAt start;
  start.set_run_id("run");
  start.set_test_index(plan.test_index());
  start.set_agent_start_ns(realtime_ns() + 50'000'000);
  runner.on_start_at(start);
  io.restart();  // run_for above ran out of work once the answer was given
  io.run_for(run_for);
  return records;
}

TEST_F(OpticsHost, TheResultOfATestThatAsksCarriesItsPortsOpticsAndOfOneThatDoesNotNone) {
  for (const bool read : {true, false}) {
    proto::Plan plan;
    plan.set_duration_ms(200);
    plan.set_sample_interval_ms(100);
    plan.set_read_optics(read);
    const std::vector<proto::Record> records = run_plan(source(), plan, std::chrono::seconds(3));
    const proto::TestResult* result = nullptr;
    for (const auto& record : records) {
      if (record.has_result()) result = &record.result();
    }
    ASSERT_NE(result, nullptr) << "no result";
    if (!read) {
      EXPECT_EQ(result->optics_size(), 0);
      continue;
    }
    ASSERT_EQ(result->optics_size(), 1);
    EXPECT_EQ(result->optics(0).netdev(), "eth9");
    EXPECT_TRUE(result->optics(0).has_module());
    EXPECT_EQ(fec_from_proto(result->optics(0).fec_after()).corrected_blocks.total, 2000u);
  }
}

TEST_F(OpticsHost, ALongTestSendsItsPortsOpticsEveryIntervalBeforeItsResult) {
  proto::Plan plan;
  plan.set_test_index(3);
  plan.set_duration_ms(2500);
  plan.set_sample_interval_ms(500);
  plan.set_read_optics(true);
  plan.set_optics_interval_ms(200);  // below the agent's 1 s floor: read every second
  const std::vector<proto::Record> records = run_plan(source(), plan, std::chrono::seconds(5));
  std::vector<const proto::OpticsSample*> intervals;
  std::size_t result_at = records.size();
  for (std::size_t i = 0; i < records.size(); ++i) {
    if (records[i].has_optics()) intervals.push_back(&records[i].optics());
    if (records[i].has_result()) result_at = i;
  }
  ASSERT_LT(result_at, records.size()) << "no result";
  // Ticks at 1 and 2 s, and the last interval to the end at 2.5 s: each before the result, each
  // FEC reading the next one's start, none lost nor twice (a tick that finds the last reading
  // still under way begins none, so a slow machine may read two).
  ASSERT_GE(intervals.size(), 2u);
  ASSERT_LE(intervals.size(), 3u);
  std::uint64_t previous_end = 0;
  for (std::size_t i = 0; i < intervals.size(); ++i) {
    const proto::OpticsSample& sample = *intervals[i];
    EXPECT_EQ(sample.run_id(), "run");
    EXPECT_EQ(sample.test_index(), 3);
    EXPECT_EQ(sample.index(), i + 1);
    ASSERT_EQ(sample.ports_size(), 1);
    const auto before = fec_from_proto(sample.ports(0).fec_before()).corrected_blocks.total.value_or(0);
    const auto after = fec_from_proto(sample.ports(0).fec_after()).corrected_blocks.total.value_or(0);
    if (i > 0) {
      EXPECT_EQ(before, previous_end);
    }
    EXPECT_GT(after, before);
    previous_end = after;
  }
  EXPECT_TRUE(records.back().has_result());
  const proto::TestResult& result = records[result_at].result();
  ASSERT_EQ(result.optics_size(), 1);
  EXPECT_EQ(fec_from_proto(result.optics(0).fec_after()).corrected_blocks.total, previous_end);
}

}  // namespace
}  // namespace tusk
