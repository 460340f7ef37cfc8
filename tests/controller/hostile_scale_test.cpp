// What an agent's or a file's size may cost the controller: every per-run step linear or n log n
// in what it is given. Each case is one a probe found super-linear (its time then in the comment);
// it runs in a fraction of a second now, and the unit label's ctest timeout fails it should the
// cost turn quadratic again. Correctness is asserted too, so no case passes by doing nothing.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include "tests/support/named_sample.hpp"

#include <fmt/format.h>

#include <sstream>
#include <string>
#include <vector>

#include "common/counter_names.hpp"
#include "common/json_text.hpp"
#include "common/wire_bounds.hpp"
#include "controller/profile/profile_loader.hpp"
#include "controller/report/reports.hpp"
#include "controller/topology/fabric_topology.hpp"
#include "controller/verdict/flow_table.hpp"
#include "controller/verdict/link_localisation.hpp"
#include "controller/verdict/unreceived_frames.hpp"

namespace tusk {
namespace {

namespace c = counters;

// Before: 160,000 "tx" streams naming a reporting peer were paired by a scan of every stream each:
// 335 s and 1.15 GB.
TEST(HostileScale, PairingEverySendersStreamWithItsReceiversIsOnePass) {
  constexpr std::uint32_t kFlows = 160'000;
  std::vector<AgentStream> streams;
  streams.reserve(2 * kFlows);
  for (std::uint32_t i = 1; i <= kFlows; ++i) {
    AgentStream tx{"a", {}};
    tx.stream.set_kind("tx");
    tx.stream.set_peer("b");
    tx.stream.set_stream_id(fmt::format("tx:b#{}", i));
    tx.stream.set_sender_stream_id(i);
    (*tx.stream.mutable_counters())[std::string(c::kTxFrames)] = 100;
    streams.push_back(std::move(tx));
  }
  for (std::uint32_t i = kFlows; i >= 2; --i) {  // every flow but the first arrived, in reverse order
    AgentStream rx{"b", {}};
    rx.stream.set_kind("rx");
    rx.stream.set_peer("a");
    rx.stream.set_stream_id(fmt::format("rx:a#{}", i));
    rx.stream.set_sender_stream_id(i);
    (*rx.stream.mutable_counters())[std::string(c::kRxFrames)] = i % 2 == 0 ? 100 : 90;
    streams.push_back(std::move(rx));
  }
  const auto problems = account_unreceived_frames(streams, {"a", "b"});
  ASSERT_EQ(problems, std::vector<std::string>{"b received none of the 100 frames a sent it on tx:b#1"});
  std::uint64_t tail = 0;
  for (const auto& entry : streams) {
    if (entry.stream.kind() == "rx") tail += entry.stream.counters().at(std::string(c::kTailLostFrames));
  }
  // 10 from each odd flow 3..159999, none from even ones, and flow 1's 100 on b's stream of it, appended.
  EXPECT_EQ(tail, 10u * (kFlows / 2 - 1) + 100u);
}

// Before: two agents with 16,000 streams each and 10 samples took 65 s and 1.4 GB to report:
// every stream's series looked for it in every sample. Now each stream's bins are its own.
TEST(HostileScale, EveryStreamsSeriesIsReadFromTheSamplesOnce) {
  constexpr int kStreams = 16'000;
  constexpr std::uint32_t kSamples = 10;
  RunOutcome outcome;
  outcome.run_id = "r";
  outcome.profile.name = "p";
  TestOutcome test;
  test.agents = {"a", "b"};
  for (const std::string agent : {"a", "b"}) {
    auto& data = test.per_agent[agent];
    for (std::uint32_t s = 1; s <= kSamples; ++s) {
      data.samples.insert(s);
      for (int i = 0; i < kStreams; ++i) {
        proto::StreamCounters stream;
        stream.set_stream_id(fmt::format("{}#{}", agent, i));
        (*stream.mutable_counters())["rx_bytes"] = 1250 * s;
        testing::add_named(data.series[stream.stream_id()], s, 1000 * s, std::move(stream));
      }
    }
    for (int i = 0; i < kStreams; ++i) {
      StreamVerdict verdict;
      verdict.agent = agent;
      verdict.stream.set_stream_id(fmt::format("{}#{}", agent, i));
      verdict.stream.set_kind("rx");
      test.streams.push_back(std::move(verdict));
    }
  }
  outcome.tests.push_back(std::move(test));
  const auto report = report_json(outcome);
  const auto& streams = report["tests"][0]["streams"];
  ASSERT_EQ(streams.size(), 2u * kStreams);
  for (const std::size_t at : {std::size_t{0}, std::size_t{kStreams + 17}, std::size_t{2 * kStreams - 1}}) {
    const auto& bins = streams[at]["bins"];
    ASSERT_EQ(bins["index"].size(), kSamples) << at;
    EXPECT_EQ(bins["index"][3], 4);
    EXPECT_EQ(bins["throughput_bps"][3], 10'000);
  }
}

// Before: 2,000 failing flows of 12 hops (0.74 MB of results) took 161 s to localise: every round
// sorted every link by votes that were summed again at each comparison.
TEST(HostileScale, LocalisingThousandsOfFailingFlowsOfTheLongestPathsIsNLogN) {
  constexpr int kFlows = 2000;
  constexpr int kHosts = 40;
  std::vector<StreamVerdict> streams;
  // Each failing flow has a passing sibling between the same hosts, so no host is to blame; every
  // flow crosses hops of its own, and past them 400 more that no probe could have reached.
  for (int f = 0; f < 2 * kFlows; ++f) {
    const bool fails = f % 2 == 0;
    const int pair = f / 2;
    const std::string sender = fmt::format("h{}", pair % kHosts);
    const std::string receiver = fmt::format("h{}", (pair % kHosts + 1 + pair / kHosts % (kHosts - 1)) % kHosts);
    StreamVerdict tx;
    tx.agent = sender;
    tx.stream.set_kind("tx");
    tx.stream.set_peer(receiver);
    tx.stream.set_stream_id(fmt::format("tx#{}", f));
    tx.stream.set_sender_stream_id(static_cast<std::uint32_t>(f + 1));
    auto& flow = *tx.stream.mutable_flow();
    flow.set_src_address(fmt::format("192.168.0.{}", pair % kHosts));
    flow.set_dst_address(fmt::format("192.168.1.{}", receiver.substr(1)));
    flow.set_src_port(static_cast<std::uint32_t>(1024 + f));
    for (std::uint32_t ttl = 1; ttl <= wire::kMaxPathHops + 400; ++ttl) {
      auto& hop = *tx.stream.add_path();
      hop.set_ttl(ttl);
      hop.set_address(fmt::format("10.{}.{}.{}", f / 250, f % 250, ttl % 250));
      hop.set_probes(100);
      hop.set_answers(100);
    }
    streams.push_back(tx);
    StreamVerdict rx;
    rx.agent = receiver;
    rx.stream.set_kind("rx");
    rx.stream.set_peer(sender);
    rx.stream.set_sender_stream_id(static_cast<std::uint32_t>(f + 1));
    *rx.stream.mutable_flow() = flow;
    ThresholdCheck check;
    check.threshold.metric = "loss_ratio";
    check.passed = !fails;
    rx.checks.push_back(check);
    streams.push_back(rx);
  }
  const Localisation found = localise(streams, nullptr);
  ASSERT_EQ(found.flows->size(), 2u * kFlows);
  EXPECT_EQ(found.flows->links_of(0).size(), wire::kMaxPathHops);
  EXPECT_TRUE(found.hosts.empty()) << found.conclusion.substr(0, 2000);
  // Each failing flow is alone on its links: one suspect a flow, its other links tied with it.
  ASSERT_EQ(found.suspects.size(), static_cast<std::size_t>(kFlows)) << found.conclusion.substr(0, 2000);
  EXPECT_EQ(found.suspects[0].tied.size(), wire::kMaxPathHops - 1);
  EXPECT_EQ(found.suspects[0].explains.size(), 1u);
}

// Before: a topology file with 80,000 duplicate addresses took 10.6 s to refuse (every error was
// compared with every earlier one); every hop placed was a scan of every interface.
TEST(HostileScale, ATopologyWithTensOfThousandsOfPortsLoadsAndAnswersInLogTime) {
  std::string yaml = "devices:\n  big:\n    interfaces:\n";
  for (int i = 0; i < 80'000; ++i)
    yaml += fmt::format("      p{}: [10.{}.{}.{}, 10.0.0.1]\n", i, i / 65536, i / 256 % 256, i % 256);
  yaml += "  peer:\n    interfaces:\n      up: 192.168.0.1\nlinks:\n  - big:p77 <-> peer:up\n";
  try {
    load_topology_text(yaml, "dup.yaml");
    FAIL() << "duplicate addresses were accepted";
  } catch (const TopologyFileInvalid& e) {
    EXPECT_EQ(e.errors().size(), 80'000u);  // every port but the first repeats 10.0.0.1, and p1 repeats 10.0.0.1
    EXPECT_NE(e.errors().front().message.find("10.0.0.1 is already big:p0's address"), std::string::npos)
        << e.errors().front().message;
  }
  std::string clean = "devices:\n  big:\n    interfaces:\n";
  for (int i = 0; i < 80'000; ++i)
    clean += fmt::format("      p{}: 10.{}.{}.{}\n", i, 1 + i / 65536, i / 256 % 256, i % 256);
  clean += "  peer:\n    interfaces:\n";
  for (int i = 0; i < 80'000; ++i)
    clean += fmt::format("      u{}: 172.{}.{}.{}\n", i, 16 + i / 65536, i / 256 % 256, i % 256);
  clean += "links:\n";
  for (int i = 0; i < 80'000; ++i) clean += fmt::format("  - big:p{0} <-> peer:u{0}\n", i);
  const FabricTopology topology = load_topology_text(clean, "big.yaml");
  for (int i = 0; i < 80'000; i += 7) {
    const auto named = topology.link_between(fmt::format("10.{}.{}.{}", 1 + i / 65536, i / 256 % 256, i % 256),
                                             fmt::format("172.{}.{}.{}", 16 + i / 65536, i / 256 % 256, i % 256));
    ASSERT_EQ(named.key, fmt::format("big:p{0} -> peer:u{0}", i));
  }
}

// Before: 2.5 KB of aliases of aliases ran past 120 s (yaml-cpp shares an aliased node, and the
// profile reader walked each share).
TEST(HostileScale, AYamlAliasBombIsRefusedAtOnce) {
  std::string yaml = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i < 12; ++i) {
    yaml += fmt::format("a{}: &a{} [", i, i);
    for (int k = 0; k < 10; ++k) yaml += fmt::format("{}*a{}", k ? ", " : "", i - 1);
    yaml += "]\n";
  }
  yaml += "name: bomb\ntests: []\n";
  try {
    load_profile_text(yaml, "bomb.yaml");
    FAIL() << "the alias bomb was read";
  } catch (const ProfileInvalid& e) {
    ASSERT_FALSE(e.errors().empty());
    EXPECT_NE(e.errors().front().to_string().find("more than 1000000 values once its aliases are followed"),
              std::string::npos)
        << e.errors().front().to_string();
  }
  // A file past a bound with no alias in it is told so, not asked about aliases it does not have.
  std::string deep = "name: deep\ntests: ";
  for (int i = 0; i < 70; ++i) deep += "[";
  for (int i = 0; i < 70; ++i) deep += "]";
  try {
    load_profile_text(deep + "\n", "deep.yaml");
    FAIL() << "70 levels were read";
  } catch (const ProfileInvalid& e) {
    ASSERT_FALSE(e.errors().empty());
    EXPECT_NE(e.errors().front().to_string().find("nests deeper than 64: more than Tusk reads from one file"),
              std::string::npos)
        << e.errors().front().to_string();
  }
}

// Before: a profile with "# café" saved as Latin-1 passed its test, then the run aborted writing
// report.json (which quotes the profile) and left no report and no history row.
TEST(HostileScale, AByteThatIsNotUtf8IsNamedAtItsLineAndColumn) {
  try {
    load_profile_text("name: latin\n# caf\xe9 au lait\ntests: []\n", "latin.yaml");
    FAIL() << "a Latin-1 profile was read";
  } catch (const ProfileInvalid& e) {
    ASSERT_EQ(e.errors().size(), 1u);
    EXPECT_EQ(e.errors().front().to_string(), "latin.yaml:2:6: byte 0xe9 is not UTF-8: save the file as UTF-8");
  }
}

// Before: a binary file given as a profile printed the parser's message with a raw control byte in it.
TEST(HostileScale, ABinaryFileGivenAsAProfileIsNamedWithoutPrintingItsBytes) {
  try {
    load_profile_text(std::string("name: x") + std::string(1, '\0') +
                          "\x01\x02"
                          "ELF\n",
                      "tusk-controller");
    FAIL() << "a binary file was read as a profile";
  } catch (const ProfileInvalid& e) {
    ASSERT_EQ(e.errors().size(), 1u);
    EXPECT_EQ(e.errors().front().to_string(),
              "tusk-controller:1:8: control byte 0x00: this is not a text file (a binary given as YAML?)");
  }
}

// Before: a report.json nested 200,000 deep crashed `report` and `history --import` (stack
// overflow in the recursive walk of the parsed document).
TEST(HostileScale, AJsonDocumentNestedTooDeepIsRefusedBeforeItIsParsed) {
  std::istringstream deep(std::string(200'000, '[') + std::string(200'000, ']'));
  EXPECT_THROW(parse_json<nlohmann::ordered_json>(deep), JsonTooDeep);
  std::istringstream fine(R"({"a": "[[[[[[[[ not brackets", "b": [[[1]]]})");
  EXPECT_EQ(parse_json<nlohmann::ordered_json>(fine)["b"][0][0][0], 1);
  EXPECT_EQ(json_depth(std::string(kMaxJsonDepth, '[') + std::string(kMaxJsonDepth, ']')), kMaxJsonDepth);
}

}  // namespace
}  // namespace tusk
