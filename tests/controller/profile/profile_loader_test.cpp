#include "controller/profile/profile_loader.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "controller/engines/dpdk/dpdk_slice.hpp"
#include "controller/engines/rdma/rdma_slice.hpp"
#include "tests/support/profile_text.hpp"
#include "tests/support/yaml_errors.hpp"

namespace tusk {
namespace {

using testing::load_profile_yaml;
using testing::profile_error;
using testing::profile_errors;
using testing::text_of;

using namespace std::chrono_literals;

// Profiles below are raw strings that start with a newline so that their first key is on line 1
// as written; positions in the expected messages can be counted by eye.

// ---- a valid profile ---------------------------------------------------------------------------

constexpr std::string_view kFullProfile = R"(
name: rack-burn-in
description: every key once
agents:
  hosts: [a, b]
  patterns: ["rack1-*"]
  count: 4
  wait: 90s
safety:
  max_rate: 400Gbps
  max_duration: 2h
defaults:
  duration: 30s
  sample_interval: 2s
  frame_size: 9000       # dpdk only: ignored by the rdma test
  thresholds:
    max_flaps: 0
    max_ber: 1e-12       # dpdk only: ignored by the rdma test
tests:
  - name: ber
    engine: dpdk
    topology: ring
    port: "0000:3b:00.0"
    frame_sizes: imix
    rate: 1Mpps
    pattern: prbs23
    invert: true
    vlan: 100
    pcp: 3
    ethertype: 0x88b6
    mode: bidirectional
    confidence: 99%
    target_ber: 1e-13
    thresholds:
      max_loss: 0.1%
      max_errored_frames: 5
      max_lost_frames: 1k
      max_latency_p99: 20us
      max_host_drops: 0
      min_throughput: 1Gbps
      max_flaps: 2
  - name: write
    engine: rdma
    duration: 1h30m
    sample_interval: 500ms
    topology: mesh
    device: mlx5_1
    ib_port: 2
    gid_index: 3
    operation: write_imm
    message_sizes: [4KiB, 64KiB, 1MiB]
    qps_per_peer: 4
    outstanding: 32
    signal_every: 8
    inline_threshold: 256
    path_mtu: 4096
    traffic_class: 106
    rate: 100Gbps
    burst_period: 100ms
    burst_duty: 50%
    data_check: false
    thresholds:
      max_completion_errors: 0
      max_integrity_errors: 0
      max_retransmits: 1000
      min_throughput: 90Gbps
  - name: defaults-only
    engine: dpdk
    rate: max
)";

// Issue 57, before: a report.json given to validate was a wall of unknown-key errors.
TEST(ProfileLoader, ARunsReportIsSaidToBeOneAndNotReadAsAProfile) {
  EXPECT_EQ(profile_error(R"(
{"run_id": "20261205T020000Z-1a2b", "status": "finished", "profile": {"name": "x"},
 "agents": [{"name": "lab-a"}], "tests": [{"name": "t", "streams": []}]}
)"),
            "bad.yaml:1:1: this is a run's report (report.json), not a profile: tusk-controller report reads it");
}

// Found by the profile_loader fuzzer: run_id and tests without any agents key aborted the
// controller (yaml-cpp throws InvalidNode when a missing key's node is asked IsMap()).
TEST(ProfileLoader, RunIdAndTestsWithoutAgentsIsAnErrorNotAnAbort) {
  EXPECT_EQ(profile_error("run_id:\n  patterns: [\"leaf*\"]\ntests:\n  - name: t\n    engine: dpdk\n"),
            "bad.yaml:1:1: this is a run's report (report.json), not a profile: tusk-controller report reads it");
}

TEST(ProfileLoader, BaselineFailNeedsABaseline) {
  EXPECT_TRUE(load_profile_yaml(R"(
name: x
agents: {count: 2}
baseline: last
baseline_fail: true
tests:
  - {name: t, engine: rdma, duration: 1s}
)")
                  .baseline_fail);
  EXPECT_EQ(profile_error(R"(
name: x
agents: {count: 2}
baseline_fail: true
tests:
  - {name: t, engine: rdma, duration: 1s}
)"),
            "bad.yaml:3:16: baseline_fail: baseline_fail fails the run on a regression against the baseline: set "
            "baseline: too (last, or a run id)");
}

TEST(ProfileLoader, FullProfileTopLevel) {
  const Profile profile = load_profile_yaml(kFullProfile);
  EXPECT_EQ(profile.file, "bad.yaml");
  EXPECT_EQ(profile.name, "rack-burn-in");
  EXPECT_EQ(profile.description, "every key once");
  EXPECT_EQ(profile.agents.hosts, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(profile.agents.patterns, (std::vector<std::string>{"rack1-*"}));
  EXPECT_EQ(profile.agents.count, 4u);
  EXPECT_EQ(profile.agents.wait, 90s);
  EXPECT_DOUBLE_EQ(profile.safety.max_rate_bps, 400e9);
  EXPECT_EQ(profile.safety.max_duration, 2h);
  ASSERT_EQ(profile.tests.size(), 3u);
}

TEST(ProfileLoader, FullProfileDpdkTest) {
  const TestSpec test = load_profile_yaml(kFullProfile).tests.at(0);
  EXPECT_EQ(test.name, "ber");
  EXPECT_EQ(test.engine, "dpdk");
  EXPECT_EQ(test.duration, 30s);  // from defaults
  EXPECT_EQ(test.sample_interval, 2s);
  EXPECT_EQ(test.topology, Topology::Ring);
  EXPECT_EQ(test.pos.line, 19);
  EXPECT_EQ(test.pos.column, 5);
  const proto::DpdkTest& dpdk = dpdk::params(test);
  EXPECT_EQ(dpdk.port(), "0000:3b:00.0");
  EXPECT_EQ(dpdk.frame_size(), 1500u);  // frame_sizes replaces the default frame_size
  const std::vector<std::uint32_t> imix{64, 64, 64, 64, 64, 64, 64, 576, 576, 576, 576, 1500};
  EXPECT_EQ(std::vector<std::uint32_t>(dpdk.frame_sizes().begin(), dpdk.frame_sizes().end()), imix);
  EXPECT_DOUBLE_EQ(dpdk.rate_pps(), 1e6);
  EXPECT_DOUBLE_EQ(dpdk.rate_bps(), 0);
  EXPECT_EQ(dpdk.pattern(), "prbs23");
  EXPECT_TRUE(dpdk.invert());
  EXPECT_EQ(dpdk.vlan(), 100u);
  EXPECT_EQ(dpdk.pcp(), 3u);
  EXPECT_EQ(dpdk.ethertype(), 0x88B6u);
  EXPECT_EQ(dpdk.mode(), "bidirectional");
  EXPECT_DOUBLE_EQ(dpdk.confidence(), 0.99);
  EXPECT_DOUBLE_EQ(dpdk.target_ber(), 1e-13);
}

TEST(ProfileLoader, FullProfileDpdkThresholdsMergeWithDefaults) {
  const TestSpec test = load_profile_yaml(kFullProfile).tests.at(0);
  struct Expected {
    std::string key, metric;
    Bound bound;
    double value;
    int line;
  };
  // Inherited thresholds come first; the test's max_flaps replaces the default in place.
  const std::vector<Expected> expected{
      {"max_flaps", "link_flaps", Bound::Max, 2, 40},
      {"max_ber", "ber", Bound::Max, 1e-12, 17},
      {"max_loss", "loss_ratio", Bound::Max, 0.001, 34},
      {"max_errored_frames", "errored_frames", Bound::Max, 5, 35},
      {"max_lost_frames", "lost_frames", Bound::Max, 1000, 36},
      {"max_latency_p99", "latency_p99_ns", Bound::Max, 20000, 37},
      {"max_host_drops", "host_drops", Bound::Max, 0, 38},
      {"min_throughput", "throughput_bps", Bound::Min, 1e9, 39},
      // Safe defaults the profile did not relax, judged at zero, at the test's own position (-1).
      {"max_traffic_gaps", "traffic_gaps", Bound::Max, 0, -1},
      {"max_agents_lost", "agents_lost", Bound::Max, 0, -1},
  };
  ASSERT_EQ(test.thresholds.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    SCOPED_TRACE(expected[i].key);
    EXPECT_EQ(test.thresholds[i].key, expected[i].key);
    EXPECT_EQ(test.thresholds[i].metric, expected[i].metric);
    EXPECT_EQ(test.thresholds[i].bound, expected[i].bound);
    EXPECT_DOUBLE_EQ(test.thresholds[i].value, expected[i].value);
    EXPECT_EQ(test.thresholds[i].pos.file, "bad.yaml");
    EXPECT_EQ(test.thresholds[i].pos.line, expected[i].line < 0 ? test.pos.line : expected[i].line);
    EXPECT_EQ(test.thresholds[i].implicit, expected[i].line < 0);
  }
}

TEST(ProfileLoader, FullProfileRdmaTest) {
  const TestSpec test = load_profile_yaml(kFullProfile).tests.at(1);
  EXPECT_EQ(test.name, "write");
  EXPECT_EQ(test.engine, "rdma");
  EXPECT_EQ(test.duration, 90min);
  EXPECT_EQ(test.sample_interval, 500ms);
  EXPECT_EQ(test.topology, Topology::Mesh);
  const proto::RdmaTest& rdma = rdma::params(test);
  EXPECT_EQ(rdma.device(), "mlx5_1");
  EXPECT_EQ(rdma.port(), 2u);
  EXPECT_EQ(rdma.gid_index(), 3u);
  EXPECT_EQ(rdma.operation(), "write_imm");
  // A sweep: one step per message size, run by the method framework.
  ASSERT_TRUE(test.method.has_value());
  EXPECT_EQ(test.method->kind, MethodKind::Sweep);
  EXPECT_EQ(test.method->frame_sizes, (std::vector<std::uint32_t>{4096, 65536, 1048576}));
  EXPECT_EQ(rdma.message_sizes_size(), 0);
  EXPECT_EQ(rdma.qps_per_peer(), 4u);
  EXPECT_EQ(rdma.outstanding(), 32u);
  EXPECT_EQ(rdma.signal_every(), 8u);
  EXPECT_EQ(rdma.inline_threshold(), 256u);
  EXPECT_EQ(rdma.path_mtu(), 4096u);
  EXPECT_EQ(rdma.traffic_class(), 106u);
  EXPECT_DOUBLE_EQ(rdma.rate_bps(), 100e9);
  EXPECT_EQ(rdma.burst_period_ms(), 100u);
  EXPECT_DOUBLE_EQ(rdma.burst_duty(), 0.5);
  EXPECT_FALSE(rdma.data_check());
  // The dpdk-only default threshold max_ber does not apply to an rdma test.
  std::vector<std::string> keys;
  for (const auto& threshold : test.thresholds) keys.push_back(threshold.key);
  EXPECT_EQ(keys,
            (std::vector<std::string>{"max_flaps", "max_completion_errors", "max_integrity_errors", "max_retransmits",
                                      "min_throughput", "max_stalls", "max_connect_failures", "max_agents_lost"}));
}

TEST(ProfileLoader, UnsetKeysTakeTheirDefaults) {
  const TestSpec test = load_profile_yaml(kFullProfile).tests.at(2);
  EXPECT_EQ(test.duration, 30s);
  EXPECT_EQ(test.topology, Topology::Pairs);
  EXPECT_EQ(dpdk::params(test).frame_size(), 9000u);  // from defaults
  EXPECT_TRUE(dpdk::params(test).frame_sizes().empty());
  EXPECT_DOUBLE_EQ(dpdk::params(test).rate_pps(), 0);  // max: line rate
  EXPECT_DOUBLE_EQ(dpdk::params(test).rate_bps(), 0);
  EXPECT_EQ(dpdk::params(test).pattern(), "prbs31");
  EXPECT_FALSE(dpdk::params(test).invert());
  EXPECT_EQ(dpdk::params(test).vlan(), 0u);
  EXPECT_EQ(dpdk::params(test).ethertype(), 0x88B5u);
  EXPECT_EQ(dpdk::params(test).mode(), "peer");
  EXPECT_DOUBLE_EQ(dpdk::params(test).confidence(), 0.95);
  EXPECT_DOUBLE_EQ(dpdk::params(test).target_ber(), 1e-12);
}

TEST(ProfileLoader, RdmaDefaults) {
  const Profile profile = load_profile_yaml(R"(
name: p
agents: {count: 2}
tests:
  - {name: w, engine: rdma, duration: 1s}
)");
  const TestSpec& test = profile.tests.at(0);
  EXPECT_EQ(test.sample_interval, 1s);
  EXPECT_EQ(profile.agents.wait, 60s);
  EXPECT_EQ(profile.safety.max_duration, 24h);
  EXPECT_DOUBLE_EQ(profile.safety.max_rate_bps, 0);
  EXPECT_EQ(rdma::params(test).port(), 0u) << "no ib_port: the route's port, not checked";
  EXPECT_EQ(rdma::params(test).operation(), "write");
  EXPECT_EQ(rdma::params(test).message_size(), 65536u);
  EXPECT_EQ(rdma::params(test).qps_per_peer(), 1u);
  EXPECT_EQ(rdma::params(test).outstanding(), 16u);
  EXPECT_EQ(rdma::params(test).signal_every(), 1u);
  EXPECT_TRUE(rdma::params(test).data_check());
  EXPECT_DOUBLE_EQ(rdma::params(test).rate_bps(), 0);
  EXPECT_EQ(rdma::params(test).burst_period_ms(), 0u);
  // No thresholds written: the safe defaults judge every fault an rdma test measures at zero.
  std::vector<std::string> keys;
  for (const auto& threshold : test.thresholds) {
    EXPECT_TRUE(threshold.implicit) << threshold.key;
    EXPECT_DOUBLE_EQ(threshold.value, 0) << threshold.key;
    keys.push_back(threshold.key);
  }
  EXPECT_EQ(keys, (std::vector<std::string>{"max_flaps", "max_completion_errors", "max_integrity_errors", "max_stalls",
                                            "max_connect_failures", "max_agents_lost"}));
}

TEST(ProfileLoader, BitRateAndZeroCap) {
  const Profile profile = load_profile_yaml(R"(
name: p
agents: {count: 2}
safety: {max_rate: 0}
tests:
  - {name: d, engine: dpdk, duration: 1s, rate: 10Gbps, frame_size: 9KiB}
)");
  EXPECT_DOUBLE_EQ(profile.safety.max_rate_bps, 0);
  EXPECT_DOUBLE_EQ(dpdk::params(profile.tests.at(0)).rate_bps(), 10e9);
  EXPECT_EQ(dpdk::params(profile.tests.at(0)).frame_size(), 9216u);
}

TEST(ProfileLoader, ReadsAFile) {
  const auto path = std::filesystem::temp_directory_path() / "tusk_profile_loader_test.yaml";
  std::ofstream(path) << "name: f\nagents: {count: 1}\ntests:\n"
                         "  - {name: t, engine: rdma, duration: 1s, topology: loopback}\n";
  const Profile profile = load_profile_file(path.string());
  std::filesystem::remove(path);
  EXPECT_EQ(profile.file, path.string());
  EXPECT_EQ(profile.tests.at(0).pos.file, path.string());
  EXPECT_EQ(profile.tests.at(0).topology, Topology::Loopback);
}

// ---- errors: files and syntax ------------------------------------------------------------------

TEST(ProfileErrors, UnreadableFileNamesTheReason) {
  try {
    load_profile_file("/nonexistent/rack.yaml");
    FAIL() << "expected ProfileInvalid";
  } catch (const ProfileInvalid& invalid) {
    ASSERT_EQ(invalid.errors().size(), 1u);
    EXPECT_EQ(invalid.errors()[0].pos.line, 0);
    EXPECT_EQ(invalid.errors()[0].to_string(),
              "/nonexistent/rack.yaml: cannot read the profile: No such file or directory");
  }
}

TEST(ProfileErrors, YamlSyntaxErrorHasAPosition) {
  EXPECT_EQ(profile_error(R"(
name: x
agents:
  hosts: [a, b
tests: []
)"),
            "bad.yaml:4:6: YAML syntax error: end of sequence flow not found");
}

TEST(ProfileErrors, EmptyFile) {
  EXPECT_EQ(profile_error(""), "bad.yaml:1:1: the profile is empty: expected a mapping with name, agents and tests");
}

TEST(ProfileErrors, TopLevelIsNotAMapping) {
  EXPECT_EQ(profile_error("- name: x\n"),
            "bad.yaml:1:1: expected a mapping of profile keys (name, agents, safety, defaults, "
            "tests), got a list");
}

// ---- errors: unknown keys ----------------------------------------------------------------------

TEST(ProfileErrors, UnknownTopLevelKeySuggestsTheNearest) {
  EXPECT_EQ(profile_error(R"(
name: x
agents: {count: 2}
safty: {max_rate: 10Gbps}
tests:
  - {name: t, engine: rdma, duration: 1s}
)"),
            "bad.yaml:3:1: safty: unknown key (did you mean 'safety'?)");
}

TEST(ProfileErrors, UnknownTopLevelKeyListsTheValidOnes) {
  EXPECT_EQ(profile_error(R"(
name: x
agents: {count: 2}
owner: me
tests:
  - {name: t, engine: rdma, duration: 1s}
)"),
            "bad.yaml:3:1: owner: unknown key; expected one of: name, description, agents, "
            "safety, cabling, optics, actions, baseline, baseline_fail, series, defaults, tests");
}

TEST(ProfileActions, EachKeyIsReadAndTheDefaultsHold) {
  const Profile profile = load_profile_yaml(R"(
name: x
agents: {count: 2}
actions:
  slurm: true
  kubernetes: true
  exec: /usr/local/bin/ticket
  exec_timeout: 30s
  max_share: 10%
  dry_run: true
baseline: last
tests:
  - {name: t, engine: rdma, duration: 1s, outliers: fail, outlier_k: 3.5}
)");
  EXPECT_TRUE(profile.actions.slurm);
  EXPECT_TRUE(profile.actions.kubernetes);
  EXPECT_EQ(profile.actions.exec, "/usr/local/bin/ticket");
  EXPECT_EQ(profile.actions.exec_timeout, 30s);
  EXPECT_DOUBLE_EQ(profile.actions.max_share, 0.1);
  EXPECT_TRUE(profile.actions.dry_run);
  EXPECT_EQ(profile.baseline, "last");
  EXPECT_EQ(profile.tests.at(0).outliers, OutlierMode::Fail);
  EXPECT_DOUBLE_EQ(profile.tests.at(0).outlier_k, 3.5);

  const Profile plain = load_profile_yaml(R"(
name: x
agents: {count: 2}
tests:
  - {name: t, engine: rdma, duration: 1s}
)");
  EXPECT_FALSE(plain.actions.any());
  EXPECT_EQ(plain.baseline, "");
  EXPECT_EQ(plain.tests.at(0).outliers, OutlierMode::Warn);
  EXPECT_DOUBLE_EQ(plain.tests.at(0).outlier_k, kDefaultOutlierK);
}

TEST(ProfileActions, ActionsThatActNowhereOrBeyondEveryNodeAreRefusedByLine) {
  EXPECT_EQ(profile_error(R"(
name: x
agents: {count: 2}
actions:
  dry_run: true
tests:
  - {name: t, engine: rdma, duration: 1s}
)"),
            "bad.yaml:4:3: actions: say where to act: slurm: true, kubernetes: true or exec: COMMAND");
  EXPECT_EQ(profile_error(R"(
name: x
agents: {count: 2}
actions: {slurm: true, max_share: 0%}
tests:
  - {name: t, engine: rdma, duration: 1s}
)"),
            "bad.yaml:3:35: actions.max_share: a share of the run's nodes above 0 (and at most 100%)");
  EXPECT_THAT(profile_error(R"(
name: x
agents: {count: 2}
actions: {slurm: true, max_share: 150%}
tests:
  - {name: t, engine: rdma, duration: 1s}
)"),
              ::testing::HasSubstr("bad.yaml:3:35: actions.max_share: '150%' is not a ratio"));
  EXPECT_THAT(profile_error(R"(
name: x
agents: {count: 2}
actions: {slurm: true, drain: yes}
tests:
  - {name: t, engine: rdma, duration: 1s}
)"),
              ::testing::HasSubstr("drain: unknown key"));
  EXPECT_THAT(profile_error(R"(
name: x
agents: {count: 2}
tests:
  - {name: t, engine: rdma, duration: 1s, outliers: maybe}
)"),
              ::testing::HasSubstr("outliers"));
}

TEST(ProfileErrors, UnknownAgentsKey) {
  EXPECT_EQ(profile_error(R"(
name: x
agents:
  count: 2
  host: [a, b]
tests:
  - {name: t, engine: rdma, duration: 1s}
)"),
            "bad.yaml:4:3: agents.host: unknown key (did you mean 'hosts'?)");
}

TEST(ProfileErrors, UnknownSafetyKey) {
  EXPECT_EQ(profile_error(R"(
name: x
agents: {count: 2}
safety:
  max_duraton: 1h
tests:
  - {name: t, engine: rdma, duration: 1s}
)"),
            "bad.yaml:4:3: safety.max_duraton: unknown key (did you mean 'max_duration'?)");
}

TEST(ProfileErrors, UnknownDefaultsKey) {
  EXPECT_EQ(profile_error(R"(
name: x
agents: {count: 2}
defaults:
  duraton: 30s
tests:
  - {name: t, engine: rdma, duration: 1s}
)"),
            "bad.yaml:4:3: defaults.duraton: unknown key (did you mean 'duration'?)");
}

TEST(ProfileErrors, UnknownTestKey) {
  EXPECT_EQ(profile_error(R"(
name: x
agents: {count: 2}
tests:
  - name: t
    engine: rdma
    duration: 1s
    mesage_size: 4KiB
)"),
            "bad.yaml:7:5: tests[0].mesage_size: unknown key (did you mean 'message_size'?)");
}

TEST(ProfileErrors, UnknownTestKeyWithoutSuggestion) {
  EXPECT_EQ(profile_error(R"(
name: x
agents: {count: 2}
tests:
  - {name: t, engine: rdma, duration: 1s, zzzz: 1}
)"),
            "bad.yaml:4:43: tests[0].zzzz: unknown key");
}

TEST(ProfileErrors, UnknownThresholdKey) {
  EXPECT_EQ(profile_error(R"(
name: x
agents: {count: 2}
tests:
  - name: t
    engine: dpdk
    duration: 1s
    thresholds:
      max_bre: 1e-12
)"),
            "bad.yaml:8:7: tests[0].thresholds.max_bre: unknown key (did you mean 'max_ber'?)");
}

TEST(ProfileErrors, UnknownThresholdKeyListsTheCatalog) {
  EXPECT_EQ(
      profile_error(R"(
name: x
agents: {count: 2}
tests:
  - name: t
    engine: dpdk
    duration: 1s
    thresholds: {jitter: 1us}
)"),
      "bad.yaml:7:18: tests[0].thresholds.jitter: unknown key; expected one of: window, min_link_coverage, max_ber, "
      "max_bit_errors, max_loss, max_errored_frames, max_lost_frames, max_flaps, max_traffic_gaps, "
      "max_latency_p99, max_completion_errors, max_integrity_errors, max_stalls, max_connect_failures, "
      "max_retransmits, "
      "min_throughput, max_host_drops, max_out_of_sequence, max_packet_seq_errors, max_ack_timeouts, "
      "max_cnp, max_ecn_marked_packets, max_symbol_errors, max_pause_frames, max_rx_discards, max_pre_fec_ber, "
      "max_ce_marked, min_ce_marked, max_dscp_rewrites, max_agents_lost");
}

TEST(ProfileErrors, AThresholdWindowMustHoldWholeSampleIntervalsAndFitTheTest) {
  EXPECT_EQ(profile_error(R"(
name: x
agents: {count: 2}
tests:
  - name: t
    engine: dpdk
    duration: 60s
    sample_interval: 400ms
    thresholds: {window: 1s}
)"),
            "bad.yaml:8:26: tests[0].thresholds.window: window 1 s is not a whole number of sample intervals (400ms)");
  EXPECT_EQ(profile_error(R"(
name: x
agents: {count: 2}
tests:
  - name: t
    engine: dpdk
    duration: 60s
    thresholds: {window: 2m}
)"),
            "bad.yaml:7:26: tests[0].thresholds.window: window 2 m 0 s is longer than the test's duration 60s");
}

TEST(ProfileErrors, NameCannotBeADefault) {
  EXPECT_EQ(profile_error(R"(
name: x
agents: {count: 2}
defaults:
  name: t
tests:
  - {name: t, engine: rdma, duration: 1s}
)"),
            "bad.yaml:4:3: defaults.name: name cannot have a default: every test needs its own "
            "name");
}

TEST(ProfileErrors, RepeatedKey) {
  EXPECT_EQ(profile_error(R"(
name: x
agents: {count: 2}
tests:
  - name: t
    engine: dpdk
    duration: 1s
    rate: 1Mpps
    rate: 2Mpps
)"),
            "bad.yaml:8:5: tests[0].rate: duplicate key (first set at line 7)");
}

TEST(ProfileErrors, KeyThatIsNotAName) {
  EXPECT_EQ(profile_error(R"(
name: x
agents: {count: 2}
? [a, b]
: 1
tests:
  - {name: t, engine: rdma, duration: 1s}
)"),
            "bad.yaml:3:3: expected a key name, got a list");
}

// ---- errors: wrong types -----------------------------------------------------------------------

TEST(ProfileErrors, ExpectedAString) {
  EXPECT_EQ(profile_error(R"(
name: [x]
agents: {count: 2}
tests:
  - {name: t, engine: rdma, duration: 1s}
)"),
            "bad.yaml:1:7: name: expected a string, got a list");
}

TEST(ProfileErrors, ExpectedAList) {
  EXPECT_EQ(profile_error(R"(
name: x
agents:
  hosts: a
tests:
  - {name: t, engine: rdma, duration: 1s, topology: loopback}
)"),
            "bad.yaml:3:10: agents.hosts: expected a list, got a single value");
}

TEST(ProfileErrors, ExpectedAMapping) {
  EXPECT_EQ(profile_error(R"(
name: x
agents: [a, b]
tests:
  - {name: t, engine: rdma, duration: 1s}
)"),
            "bad.yaml:2:9: agents: expected a mapping with hosts, patterns, count or wait, got a "
            "list");
}

TEST(ProfileErrors, ExpectedAnInteger) {
  EXPECT_EQ(profile_error(R"(
name: x
agents:
  count: 1.5
tests:
  - {name: t, engine: rdma, duration: 1s, topology: loopback}
)"),
            "bad.yaml:3:10: agents.count: expected an integer, got '1.5'");
}

TEST(ProfileErrors, ExpectedABooleanNotAString) {
  EXPECT_EQ(profile_error(R"(
name: x
agents: {count: 2}
tests:
  - name: t
    engine: dpdk
    duration: 1s
    invert: "true"
)"),
            "bad.yaml:7:13: tests[0].invert: expected true or false, got the string 'true'");
}

TEST(ProfileErrors, ExpectedABoolean) {
  EXPECT_EQ(profile_error(R"(
name: x
agents: {count: 2}
tests:
  - name: t
    engine: rdma
    duration: 1s
    data_check: 1
)"),
            "bad.yaml:7:17: tests[0].data_check: expected true or false, got '1'");
}

TEST(ProfileErrors, EmptyValue) {
  EXPECT_EQ(profile_error(R"(
name: x
agents: {count: 2}
tests:
  - name: t
    engine: dpdk
    duration: 1s
    rate:
)"),
            "bad.yaml:7:5: tests[0].rate: expected a rate like 100Gbps, 1Mpps or max, got nothing");
}

TEST(ProfileErrors, EmptyString) {
  EXPECT_EQ(profile_error(R"(
name: ""
agents: {count: 2}
tests:
  - {name: t, engine: rdma, duration: 1s}
)"),
            "bad.yaml:1:7: name: name must not be empty");
}

TEST(ProfileErrors, TestsMustBeAList) {
  EXPECT_EQ(profile_error(R"(
name: x
agents: {count: 2}
tests:
  t: {engine: rdma, duration: 1s}
)"),
            "bad.yaml:4:3: tests: expected a list of tests, got a mapping");
}

TEST(ProfileErrors, TestMustBeAMapping) {
  EXPECT_EQ(profile_error(R"(
name: x
agents: {count: 2}
tests:
  - ber
)"),
            "bad.yaml:4:5: tests[0]: expected a mapping of test keys (name, engine, ...), got a "
            "single value");
}

TEST(ProfileErrors, ThresholdsMustBeAMapping) {
  EXPECT_EQ(profile_error(R"(
name: x
agents: {count: 2}
tests:
  - name: t
    engine: rdma
    duration: 1s
    thresholds: [max_flaps]
)"),
            "bad.yaml:7:17: tests[0].thresholds: expected a mapping of thresholds (e.g. max_ber: "
            "1e-12), got a list");
}

TEST(ProfileErrors, FrameSizesMustBeAListOrImix) {
  EXPECT_EQ(profile_error(R"(
name: x
agents: {count: 2}
tests:
  - name: t
    engine: dpdk
    duration: 1s
    frame_sizes: 1500
)"),
            "bad.yaml:7:18: tests[0].frame_sizes: expected a list of frame sizes or imix, got "
            "'1500'");
}

TEST(ProfileErrors, NotOneOfTheChoices) {
  EXPECT_EQ(profile_errors(R"(
name: x
agents: {count: 2}
tests:
  - name: t
    engine: dpdk
    duration: 1s
    topology: star
    pattern: prbs-31
    mode: peers
  - name: r
    engine: rdma
    duration: 1s
    operation: rdma_write
)"),
            (std::vector<std::string>{
                "bad.yaml:7:15: tests[0].topology: 'star' is not one of loopback, pairs, ring, "
                "mesh, pipeline, incast, permutation, shift",
                "bad.yaml:8:14: tests[0].pattern: 'prbs-31' is not one of prbs7, prbs9, prbs11, "
                "prbs15, prbs23, prbs31, zeros, ones, alternating (did you mean 'prbs31'?)",
                "bad.yaml:9:11: tests[0].mode: 'peers' is not one of loopback, peer, bidirectional "
                "(did you mean 'peer'?)",
                "bad.yaml:13:16: tests[1].operation: 'rdma_write' is not one of write, write_imm, "
                "send, read",
            }));
}

TEST(ProfileErrors, UnknownEngine) {
  EXPECT_EQ(profile_error(R"(
name: x
agents: {count: 2}
tests:
  - {name: t, engine: dpkd, duration: 1s}
)"),
            "bad.yaml:4:23: tests[0].engine: 'dpkd' is not one of rdma, dpdk (did you mean "
            "'dpdk'?)");
}

// ---- errors: units -----------------------------------------------------------------------------

TEST(ProfileErrors, BadSize) {
  EXPECT_EQ(profile_error(R"(
name: x
agents: {count: 2}
tests:
  - {name: t, engine: dpdk, duration: 1s, frame_size: abc}
)"),
            "bad.yaml:4:55: tests[0].frame_size: 'abc' is not a size: expected a number with an "
            "optional unit B, KB, MB, GB, TB, KiB, MiB, GiB, TiB (e.g. 4KiB)");
}

TEST(ProfileErrors, FractionalSize) {
  EXPECT_EQ(profile_error(R"(
name: x
agents: {count: 2}
tests:
  - {name: t, engine: rdma, duration: 1s, message_size: 1.3B}
)"),
            "bad.yaml:4:57: tests[0].message_size: '1.3B' is not a size: it is not a whole number "
            "of bytes (e.g. 1.5KiB is 1536 bytes)");
}

TEST(ProfileErrors, BadMessageSizesElement) {
  EXPECT_EQ(profile_error(R"(
name: x
agents: {count: 2}
tests:
  - name: t
    engine: rdma
    duration: 1s
    message_sizes: [4KiB, 64KiX]
)"),
            "bad.yaml:7:27: tests[0].message_sizes[1]: '64KiX' is not a size: expected a number "
            "with an optional unit B, KB, MB, GB, TB, KiB, MiB, GiB, TiB (e.g. 4KiB)");
}

TEST(ProfileErrors, DurationWithoutUnit) {
  EXPECT_EQ(profile_error(R"(
name: x
agents: {count: 2}
tests:
  - {name: t, engine: rdma, duration: 30}
)"),
            "bad.yaml:4:39: tests[0].duration: '30' is not a duration: it needs a unit, e.g. 30s "
            "(units: ns, us, ms, s, m, h)");
}

TEST(ProfileErrors, BadDuration) {
  EXPECT_EQ(profile_error(R"(
name: x
agents:
  count: 2
  wait: soon
tests:
  - {name: t, engine: rdma, duration: 1s}
)"),
            "bad.yaml:4:9: agents.wait: 'soon' is not a duration: expected a number with a unit "
            "ns, us, ms, s, m, h (e.g. 30s, 1.5s, 1h30m)");
}

TEST(ProfileErrors, DurationFinerThanAMillisecond) {
  EXPECT_EQ(profile_error(R"(
name: x
agents: {count: 2}
tests:
  - {name: t, engine: rdma, duration: 1500us}
)"),
            "bad.yaml:4:39: tests[0].duration: duration 1500us is not a whole number of "
            "milliseconds");
}

TEST(ProfileErrors, BadBurstPeriod) {
  EXPECT_EQ(profile_error(R"(
name: x
agents: {count: 2}
tests:
  - name: t
    engine: rdma
    duration: 1s
    burst_period: 100
    burst_duty: 50%
)"),
            "bad.yaml:7:19: tests[0].burst_period: '100' is not a duration: it needs a unit, e.g. "
            "30s (units: ns, us, ms, s, m, h)");
}

TEST(ProfileErrors, BadSafetyMaxRate) {
  EXPECT_EQ(profile_error(R"(
name: x
agents: {count: 2}
safety:
  max_rate: 100G
tests:
  - {name: t, engine: rdma, duration: 1s}
)"),
            "bad.yaml:4:13: safety.max_rate: '100G' is not a bit rate: expected a number with a "
            "unit bps, kbps, Mbps, Gbps, Tbps or bit/s, kbit/s, Mbit/s, Gbit/s, Tbit/s (e.g. "
            "100Gbps)");
}

TEST(ProfileErrors, BadRate) {
  EXPECT_EQ(profile_error(R"(
name: x
agents: {count: 2}
tests:
  - {name: t, engine: dpdk, duration: 1s, rate: 100G}
)"),
            "bad.yaml:4:49: tests[0].rate: '100G' is not a rate: expected a bit rate (e.g. "
            "100Gbps), a packet rate (e.g. 25Mpps) or max");
}

TEST(ProfileErrors, BadRatio) {
  EXPECT_EQ(profile_error(R"(
name: x
agents: {count: 2}
tests:
  - {name: t, engine: dpdk, duration: 1s, confidence: lots}
)"),
            "bad.yaml:4:55: tests[0].confidence: 'lots' is not a ratio: expected a number from 0 "
            "to 1 or a percentage (e.g. 1e-12, 0.5, 2.5%)");
}

TEST(ProfileErrors, BadThresholdValueOfEachKind) {
  EXPECT_EQ(profile_errors(R"(
name: x
agents: {count: 2}
tests:
  - name: t
    engine: dpdk
    duration: 1s
    thresholds:
      max_ber: high
      max_lost_frames: 1.5
      min_throughput: 10G
      max_latency_p99: 5
)"),
            (std::vector<std::string>{
                "bad.yaml:8:16: tests[0].thresholds.max_ber: 'high' is not a ratio: expected a "
                "number from 0 to 1 or a percentage (e.g. 1e-12, 0.5, 2.5%)",
                "bad.yaml:9:24: tests[0].thresholds.max_lost_frames: '1.5' is not a count: it is "
                "not a whole number (e.g. 1000)",
                "bad.yaml:10:23: tests[0].thresholds.min_throughput: '10G' is not a bit rate: "
                "expected a number with a unit bps, kbps, Mbps, Gbps, Tbps or bit/s, kbit/s, "
                "Mbit/s, Gbit/s, Tbit/s (e.g. 100Gbps)",
                "bad.yaml:11:24: tests[0].thresholds.max_latency_p99: '5' is not a duration: it "
                "needs a unit, e.g. 30s (units: ns, us, ms, s, m, h)",
            }));
}

TEST(ProfileErrors, ThresholdRatioAboveOne) {
  EXPECT_EQ(profile_error(R"(
name: x
agents: {count: 2}
tests:
  - name: t
    engine: dpdk
    duration: 1s
    thresholds: {max_loss: 150%}
)"),
            "bad.yaml:7:28: tests[0].thresholds.max_loss: '150%' is not a ratio: it must be "
            "between 0 and 1 (0% to 100%)");
}

// ---- errors: out of range ----------------------------------------------------------------------

TEST(ProfileErrors, BelowTheMinimum) {
  EXPECT_EQ(profile_error(R"(
name: x
agents: {count: 2}
tests:
  - name: t
    engine: dpdk
    duration: 1s
    frame_size: 20
)"),
            "bad.yaml:7:17: tests[0].frame_size: frame_size 20 is below the minimum 60");
}

TEST(ProfileErrors, MoreQueuesThanAnAgentOpensAreRefusedAtTheirLine) {
  EXPECT_EQ(profile_error(R"(
name: x
agents: {count: 2}
tests:
  - name: t
    engine: dpdk
    duration: 1s
    queues: 17
)"),
            "bad.yaml:7:13: tests[0].queues: queues 17 is above the maximum 16");
}

TEST(ProfileErrors, RailsBesideADeviceOrBeyondSixteenAreRefusedAtTheirLine) {
  EXPECT_EQ(profile_error(R"(
name: x
agents: {count: 2}
tests:
  - name: t
    engine: rdma
    duration: 1s
    device: mlx5_0
    rails: 2
)"),
            "bad.yaml:7:13: tests[0].device: device names one device for every flow; with rails each agent uses one "
            "device per rail (its first `rails` devices, in --rdma-device order): leave device out");
  EXPECT_EQ(profile_error(R"(
name: x
agents: {count: 2}
tests:
  - name: t
    engine: rdma
    duration: 1s
    rails: 17
)"),
            "bad.yaml:7:12: tests[0].rails: rails 17 is above the maximum 16");
  EXPECT_EQ(profile_error(R"(
name: x
agents: {count: 2}
tests:
  - name: t
    engine: rdma
    duration: 1s
    check_every: 0
)"),
            "bad.yaml:7:18: tests[0].check_every: check_every 0 is below the minimum 1");
}

TEST(ProfileErrors, RecoveryAndPacingTakeTheirWordsOnly) {
  EXPECT_NE(profile_error(R"(
name: x
agents: {count: 2}
tests:
  - name: t
    engine: rdma
    duration: 1s
    recovery: retry
)")
                .find("bad.yaml:7:15: tests[0].recovery:"),
            std::string::npos);
  EXPECT_NE(profile_error(R"(
name: x
agents: {count: 2}
tests:
  - name: t
    engine: rdma
    duration: 1s
    pacing: nic
)")
                .find("bad.yaml:7:13: tests[0].pacing:"),
            std::string::npos);
}

TEST(ProfileErrors, AboveTheMaximum) {
  EXPECT_EQ(profile_error(R"(
name: x
agents: {count: 2}
tests:
  - name: t
    engine: rdma
    duration: 1s
    message_size: 3GiB
)"),
            "bad.yaml:7:19: tests[0].message_size: message_size 3GiB is above the maximum 1GiB");
}

TEST(ProfileErrors, EveryIntegerRange) {
  EXPECT_EQ(profile_errors(R"(
name: x
agents: {count: 0}
tests:
  - name: t
    engine: dpdk
    duration: 1s
    vlan: 4095
    pcp: 8
    ethertype: 0x100
  - name: r
    engine: rdma
    duration: 1s
    ib_port: 0
    gid_index: 256
    qps_per_peer: 2000
    outstanding: 0
    signal_every: 9000
    traffic_class: -1
)"),
            (std::vector<std::string>{
                "bad.yaml:2:17: agents.count: count 0 is below the minimum 1",
                "bad.yaml:7:11: tests[0].vlan: vlan 4095 is above the maximum 4094",
                "bad.yaml:8:10: tests[0].pcp: pcp 8 is above the maximum 7",
                "bad.yaml:9:16: tests[0].ethertype: ethertype 0x100 is below the minimum 0x0600",
                "bad.yaml:13:14: tests[1].ib_port: ib_port 0 is below the minimum 1",
                "bad.yaml:14:16: tests[1].gid_index: gid_index 256 is above the maximum 255",
                "bad.yaml:15:19: tests[1].qps_per_peer: qps_per_peer 2000 is above the maximum "
                "1024",
                "bad.yaml:16:18: tests[1].outstanding: outstanding 0 is below the minimum 1",
                "bad.yaml:17:19: tests[1].signal_every: signal_every 9000 is above the maximum "
                "8192",
                "bad.yaml:18:20: tests[1].traffic_class: traffic_class -1 is below the minimum 0",
            }));
}

TEST(ProfileErrors, FrameSizesElementOutOfRange) {
  EXPECT_EQ(profile_error(R"(
name: x
agents: {count: 2}
tests:
  - name: t
    engine: dpdk
    duration: 1s
    frame_sizes: [64, 10000]
)"),
            "bad.yaml:7:23: tests[0].frame_sizes[1]: frame_sizes[1] 10000 is above the maximum "
            "9216");
}

TEST(ProfileErrors, InlineThresholdOutOfRange) {
  EXPECT_EQ(profile_error(R"(
name: x
agents: {count: 2}
tests:
  - {name: t, engine: rdma, duration: 1s, inline_threshold: 2KiB}
)"),
            "bad.yaml:4:61: tests[0].inline_threshold: inline_threshold 2KiB is above the maximum "
            "1024");
}

TEST(ProfileErrors, PathMtuNotAPowerOfTwo) {
  EXPECT_EQ(profile_error(R"(
name: x
agents: {count: 2}
tests:
  - {name: t, engine: rdma, duration: 1s, path_mtu: 1500}
)"),
            "bad.yaml:4:53: tests[0].path_mtu: path_mtu 1500 is not one of 256, 512, 1024, 2048, "
            "4096");
}

TEST(ProfileErrors, DurationMustBePositive) {
  EXPECT_EQ(profile_error(R"(
name: x
agents: {count: 2}
tests:
  - {name: t, engine: rdma, duration: 0s}
)"),
            "bad.yaml:4:39: tests[0].duration: duration 0s is below the minimum 1ms");
}

TEST(ProfileErrors, SampleIntervalRange) {
  EXPECT_EQ(profile_errors(R"(
name: x
agents: {count: 2}
tests:
  - {name: t, engine: rdma, duration: 1h, sample_interval: 50ms}
  - {name: u, engine: rdma, duration: 1h, sample_interval: 2m}
)"),
            (std::vector<std::string>{
                "bad.yaml:4:60: tests[0].sample_interval: sample_interval 50ms is below the "
                "minimum 100ms",
                "bad.yaml:5:60: tests[1].sample_interval: sample_interval 2m is above the maximum "
                "60s",
            }));
}

TEST(ProfileErrors, SampleIntervalLongerThanTheTest) {
  EXPECT_EQ(profile_error(R"(
name: x
agents: {count: 2}
tests:
  - {name: t, engine: rdma, duration: 500ms}
)"),
            "bad.yaml:4:39: tests[0].sample_interval: sample_interval 1s (the default) is longer "
            "than the test's duration 500ms");
}

TEST(ProfileErrors, AgentsWaitRange) {
  EXPECT_EQ(profile_error(R"(
name: x
agents: {count: 2, wait: 2d}
tests:
  - {name: t, engine: rdma, duration: 1s}
)"),
            "bad.yaml:2:26: agents.wait: '2d' is not a duration: expected a number with a unit "
            "ns, us, ms, s, m, h (e.g. 30s, 1.5s, 1h30m)");
  EXPECT_EQ(profile_error(R"(
name: x
agents: {count: 2, wait: 48h}
tests:
  - {name: t, engine: rdma, duration: 1s}
)"),
            "bad.yaml:2:26: agents.wait: wait 48h is above the maximum 24h");
}

TEST(ProfileErrors, SafetyMaxDurationRange) {
  EXPECT_EQ(profile_error(R"(
name: x
agents: {count: 2}
safety: {max_duration: 2000h}
tests:
  - {name: t, engine: rdma, duration: 1s}
)"),
            "bad.yaml:3:24: safety.max_duration: max_duration 2000h is above the maximum 1000h");
}

TEST(ProfileErrors, RatiosThatMustNotBeZeroOrOne) {
  EXPECT_EQ(profile_errors(R"(
name: x
agents: {count: 2}
tests:
  - name: t
    engine: dpdk
    duration: 1s
    confidence: 100%
    target_ber: 0
  - name: r
    engine: rdma
    duration: 1s
    burst_period: 10ms
    burst_duty: 0
)"),
            (std::vector<std::string>{
                "bad.yaml:7:17: tests[0].confidence: confidence 100% must be above 0 and below 1 "
                "(e.g. 95%)",
                "bad.yaml:8:17: tests[0].target_ber: target_ber must be above 0: no test can show "
                "a BER of exactly 0",
                "bad.yaml:13:17: tests[1].burst_duty: burst_duty 0 must be above 0 (e.g. 50%)",
            }));
}

// ---- errors: missing and repeated --------------------------------------------------------------

TEST(ProfileErrors, MissingTopLevelFields) {
  EXPECT_EQ(profile_errors("description: nothing else\n"), (std::vector<std::string>{
                                                               "bad.yaml:1:1: missing required field 'name'",
                                                               "bad.yaml:1:1: missing required field 'agents'",
                                                               "bad.yaml:1:1: missing required field 'tests'",
                                                           }));
}

TEST(ProfileErrors, MissingTestFields) {
  EXPECT_EQ(profile_errors(R"(
name: x
agents: {count: 2}
tests:
  - topology: pairs
)"),
            (std::vector<std::string>{
                "bad.yaml:4:5: tests[0]: missing required field 'name'",
                "bad.yaml:4:5: tests[0]: missing required field 'engine'",
                "bad.yaml:4:5: tests[0]: missing required field 'duration'",
            }));
}

TEST(ProfileErrors, EmptyAgentSelection) {
  EXPECT_EQ(profile_error(R"(
name: x
agents:
  wait: 10s
tests:
  - {name: t, engine: rdma, duration: 1s}
)"),
            "bad.yaml:3:3: agents: needs at least one of hosts, patterns or count");
  EXPECT_EQ(profile_error(R"(
name: x
agents: {hosts: [], patterns: []}
tests:
  - {name: t, engine: rdma, duration: 1s}
)"),
            "bad.yaml:2:9: agents: needs at least one of hosts, patterns or count");
}

TEST(ProfileErrors, NoTests) {
  EXPECT_EQ(profile_error(R"(
name: x
agents: {count: 2}
tests: []
)"),
            "bad.yaml:3:8: tests: tests is empty: a profile needs at least one test");
}

TEST(ProfileErrors, DuplicateTestNames) {
  EXPECT_EQ(profile_error(R"(
name: x
agents: {count: 2}
tests:
  - {name: soak, engine: rdma, duration: 1s}
  - {name: ber, engine: dpdk, duration: 1s}
  - {name: soak, engine: dpdk, duration: 1s}
)"),
            "bad.yaml:6:12: tests[2].name: test name 'soak' is already used by tests[0]");
}

TEST(ProfileErrors, DuplicateHosts) {
  EXPECT_EQ(profile_error(R"(
name: x
agents: {hosts: [a, b, a, c]}
tests:
  - {name: t, engine: rdma, duration: 1s}
)"),
            "bad.yaml:2:24: agents.hosts[2]: 'a' is already listed as hosts[0]");
}

TEST(ProfileErrors, CountMoreThanTheHostsListed) {
  EXPECT_EQ(profile_error(R"(
name: x
agents: {hosts: [a, b], count: 4}
tests:
  - {name: t, engine: rdma, duration: 1s}
)"),
            "bad.yaml:2:32: agents.count: count 4 is more than the 2 hosts listed");
}

TEST(ProfileErrors, SingleSizeAndSweepTogether) {
  EXPECT_EQ(profile_errors(R"(
name: x
agents: {count: 2}
tests:
  - name: t
    engine: dpdk
    duration: 1s
    frame_size: 1500
    frame_sizes: [64, 1500]
  - name: r
    engine: rdma
    duration: 1s
    message_sizes: [4KiB]
    message_size: 4KiB
)"),
            (std::vector<std::string>{
                "bad.yaml:8:5: tests[0].frame_sizes: frame_size and frame_sizes cannot both be "
                "set: frame_size is one size, frame_sizes a sweep",
                "bad.yaml:13:5: tests[1].message_size: message_size and message_sizes cannot both "
                "be set: message_size is one size, message_sizes a sweep",
            }));
}

TEST(ProfileErrors, EmptySweeps) {
  EXPECT_EQ(profile_errors(R"(
name: x
agents: {count: 2}
tests:
  - {name: t, engine: dpdk, duration: 1s, frame_sizes: []}
  - {name: r, engine: rdma, duration: 1s, message_sizes: []}
)"),
            (std::vector<std::string>{
                "bad.yaml:4:56: tests[0].frame_sizes: frame_sizes is empty: list at least one "
                "size, or leave it out",
                "bad.yaml:5:58: tests[1].message_sizes: message_sizes is empty: list at least one "
                "size, or leave it out",
            }));
}

// ---- errors: engines ---------------------------------------------------------------------------

TEST(ProfileErrors, RdmaKeyInADpdkTest) {
  EXPECT_EQ(profile_error(R"(
name: x
agents: {count: 2}
tests:
  - name: t
    engine: dpdk
    duration: 1s
    message_size: 4KiB
)"),
            "bad.yaml:7:5: tests[0].message_size: message_size is an rdma key; this test's engine "
            "is dpdk");
}

TEST(ProfileErrors, DpdkKeyInAnRdmaTest) {
  EXPECT_EQ(profile_error(R"(
name: x
agents: {count: 2}
defaults: {engine: rdma}
tests:
  - name: t
    duration: 1s
    port: "0000:3b:00.0"
)"),
            "bad.yaml:7:5: tests[0].port: port is a dpdk key; this test's engine is rdma");
}

TEST(ProfileErrors, ThresholdOfTheOtherEngine) {
  EXPECT_EQ(profile_errors(R"(
name: x
agents: {count: 2}
tests:
  - name: t
    engine: rdma
    duration: 1s
    thresholds: {max_ber: 1e-12}
  - name: u
    engine: dpdk
    duration: 1s
    thresholds: {max_retransmits: 0}
)"),
            (std::vector<std::string>{
                "bad.yaml:7:18: tests[0].thresholds.max_ber: max_ber is a dpdk threshold; this "
                "test's engine is rdma",
                "bad.yaml:11:18: tests[1].thresholds.max_retransmits: max_retransmits is an rdma "
                "threshold; this test's engine is dpdk",
            }));
}

TEST(ProfileErrors, PacketRateForRdma) {
  EXPECT_EQ(profile_error(R"(
name: x
agents: {count: 2}
tests:
  - {name: t, engine: rdma, duration: 1s, rate: 1Mpps}
)"),
            "bad.yaml:4:49: tests[0].rate: rdma rates are bit rates (e.g. 100Gbps) or max, got "
            "'1Mpps'");
}

TEST(ProfileErrors, BurstPeriodAndDutyGoTogether) {
  EXPECT_EQ(profile_errors(R"(
name: x
agents: {count: 2}
tests:
  - {name: t, engine: rdma, duration: 1s, burst_period: 10ms}
  - {name: u, engine: rdma, duration: 1s, burst_duty: 50%}
)"),
            (std::vector<std::string>{
                "bad.yaml:4:57: tests[0].burst_period: burst_period needs burst_duty (e.g. 50%)",
                "bad.yaml:5:55: tests[1].burst_duty: burst_duty needs burst_period (e.g. 100ms)",
            }));
}

TEST(ProfileErrors, SignalEveryAboveOutstanding) {
  EXPECT_EQ(profile_error(R"(
name: x
agents: {count: 2}
tests:
  - {name: t, engine: rdma, duration: 1s, outstanding: 4, signal_every: 8}
)"),
            "bad.yaml:4:73: tests[0].signal_every: signal_every 8 is above outstanding 4");
}

// ---- errors: topology and safety ---------------------------------------------------------------

TEST(ProfileErrors, PairsNeedAnEvenNumberOfAgents) {
  EXPECT_EQ(profile_errors(R"(
name: x
agents: {hosts: [a, b, c]}
tests:
  - {name: t, engine: rdma, duration: 1s}
  - {name: u, engine: rdma, duration: 1s, topology: pairs}
  - {name: v, engine: rdma, duration: 1s, topology: ring}
)"),
            (std::vector<std::string>{
                "bad.yaml:4:5: tests[0].topology: pairs topology (the default) needs an even "
                "number of agents; agents selects 3",
                "bad.yaml:5:53: tests[1].topology: pairs topology needs an even number of agents; "
                "agents selects 3",
            }));
}

TEST(ProfileErrors, RingNeedsTwoAgents) {
  EXPECT_EQ(profile_error(R"(
name: x
agents: {count: 1}
tests:
  - {name: t, engine: rdma, duration: 1s, topology: mesh}
)"),
            "bad.yaml:4:53: tests[0].topology: mesh topology needs at least 2 agents; agents "
            "selects 1");
}

TEST(ProfileErrors, BitRateAboveTheSafetyCap) {
  EXPECT_EQ(profile_error(R"(
name: x
agents: {count: 2}
safety: {max_rate: 10Gbps}
tests:
  - {name: t, engine: rdma, duration: 1s, rate: 40Gbps}
)"),
            "bad.yaml:5:49: tests[0].rate: rate 40Gbps is above safety.max_rate 10Gbps");
}

TEST(ProfileErrors, PacketRateAboveTheSafetyCapUsesTheLargestFrame) {
  EXPECT_EQ(profile_error(R"(
name: x
agents: {count: 2}
safety: {max_rate: 10Gbps}
tests:
  - name: small-frames-are-fine
    engine: dpdk
    duration: 1s
    rate: 1Mpps
    frame_size: 1000
  - name: sweep-to-9000
    engine: dpdk
    duration: 1s
    rate: 1Mpps
    frame_sizes: [64, 9000]
)"),
            "bad.yaml:13:11: tests[1].rate: rate 1Mpps with 9000-byte frames is 72.0 Gbit/s, "
            "above safety.max_rate 10Gbps");
}

TEST(ProfileErrors, ASizeListInheritedBesideADefaultFrameSizeIsCheckedOnTheList) {
  // defaults say 64 B, the test sends 1500 B frames: 1 Mpps of those is 12 Gbit/s.
  EXPECT_EQ(profile_error(R"(
name: x
agents: {count: 2}
safety: {max_rate: 10Gbps}
defaults:
  frame_size: 64
tests:
  - name: t
    engine: dpdk
    duration: 1s
    rate: 1Mpps
    frame_sizes: [1500]
)"),
            "bad.yaml:10:11: tests[0].rate: rate 1Mpps with 1500-byte frames is 12.0 Gbit/s, "
            "above safety.max_rate 10Gbps");
}

TEST(ProfileErrors, DurationAboveTheSafetyMaximum) {
  EXPECT_EQ(profile_error(R"(
name: x
agents: {count: 2}
safety: {max_duration: 1h}
tests:
  - {name: t, engine: rdma, duration: 90m}
)"),
            "bad.yaml:5:39: tests[0].duration: duration 90m is above safety.max_duration 1h");
}

TEST(ProfileErrors, InheritedDurationAboveTheSafetyMaximumPointsAtTheDefault) {
  EXPECT_EQ(profile_error(R"(
name: x
agents: {count: 2}
safety: {max_duration: 1h}
defaults:
  duration: 2h
tests:
  - {name: t, engine: rdma}
)"),
            "bad.yaml:5:13: tests[0].duration: duration 2h is above safety.max_duration 1h (set "
            "in defaults)");
}

TEST(ProfileErrors, DefaultDurationAboveTheDefaultSafetyMaximum) {
  EXPECT_EQ(profile_error(R"(
name: x
agents: {count: 2}
tests:
  - {name: t, engine: rdma, duration: 25h}
)"),
            "bad.yaml:4:39: tests[0].duration: duration 25h is above safety.max_duration 24h");
}

// ---- defaults ----------------------------------------------------------------------------------

TEST(ProfileErrors, BadDefaultIsReportedOnceEvenIfManyTestsInheritIt) {
  EXPECT_EQ(profile_error(R"(
name: x
agents: {count: 2}
defaults:
  duration: 1s
  sample_interval: soon
tests:
  - {name: t, engine: rdma}
  - {name: u, engine: rdma}
)"),
            "bad.yaml:5:20: defaults.sample_interval: 'soon' is not a duration: expected a number "
            "with a unit ns, us, ms, s, m, h (e.g. 30s, 1.5s, 1h30m)");
}

TEST(ProfileErrors, BadDefaultIsReportedEvenIfNoTestInheritsIt) {
  EXPECT_EQ(profile_error(R"(
name: x
agents: {count: 2}
defaults:
  frame_size: huge
tests:
  - {name: t, engine: rdma, duration: 1s}
)"),
            "bad.yaml:4:15: defaults.frame_size: 'huge' is not a size: expected a number with an "
            "optional unit B, KB, MB, GB, TB, KiB, MiB, GiB, TiB (e.g. 4KiB)");
}

TEST(ProfileLoader, TestValuesOverrideDefaults) {
  const Profile profile = load_profile_yaml(R"(
name: x
agents: {count: 2}
defaults:
  engine: dpdk
  duration: 10s
  rate: 1Mpps
  frame_sizes: imix
tests:
  - {name: t}
  - {name: u, engine: rdma, duration: 20s, rate: 1Gbps}
  - {name: v, frame_size: 64}
)");
  const auto& tests = profile.tests;
  EXPECT_EQ(tests.at(0).engine, "dpdk");
  EXPECT_EQ(tests.at(0).duration, 10s);
  EXPECT_EQ(dpdk::params(tests.at(0)).frame_sizes_size(), 12);
  EXPECT_EQ(tests.at(1).engine, "rdma");
  EXPECT_EQ(tests.at(1).duration, 20s);
  EXPECT_DOUBLE_EQ(rdma::params(tests.at(1)).rate_bps(), 1e9);
  EXPECT_EQ(dpdk::params(tests.at(2)).frame_size(), 64u);
  EXPECT_EQ(dpdk::params(tests.at(2)).frame_sizes_size(), 0);  // frame_size replaces the inherited sweep
}

// ---- collecting ------------------------------------------------------------------------------

TEST(ProfileErrors, EveryErrorInAFileIsReportedInFileOrder) {
  constexpr std::string_view yaml = R"(
nmae: rack
agents:
  hosts: [a, b]
  count: 1.5
safety: {max_rate: 10Gbps}
tests:
  - name: ber
    engine: dpdk
    duration: 30
    frame_size: 20
    rate: 1Mpps
  - name: soak
    engine: rdma
    duration: 1m
    frame_size: 1500
    thresholds:
      max_bre: 0
)";
  const std::vector<std::string> expected{
      "bad.yaml:1:1: nmae: unknown key (did you mean 'name'?)",
      "bad.yaml:1:1: missing required field 'name'",
      "bad.yaml:4:10: agents.count: expected an integer, got '1.5'",
      "bad.yaml:9:15: tests[0].duration: '30' is not a duration: it needs a unit, e.g. 30s "
      "(units: ns, us, ms, s, m, h)",
      "bad.yaml:10:17: tests[0].frame_size: frame_size 20 is below the minimum 60",
      "bad.yaml:11:11: tests[0].rate: rate 1Mpps with 1500-byte frames is 12.0 Gbit/s, above "
      "safety.max_rate 10Gbps",
      "bad.yaml:15:5: tests[1].frame_size: frame_size is a dpdk key; this test's engine is rdma",
      "bad.yaml:17:7: tests[1].thresholds.max_bre: unknown key (did you mean 'max_ber'?)",
  };
  EXPECT_EQ(profile_errors(yaml), expected);
  try {
    load_profile_yaml(yaml);
  } catch (const ProfileInvalid& invalid) {
    std::string joined;
    for (const auto& line : expected) joined += (joined.empty() ? "" : "\n") + line;
    EXPECT_EQ(std::string(invalid.what()), joined);
  }
}

TEST(ProfileError, ToStringLeavesOutWhatItDoesNotHave) {
  EXPECT_EQ((ProfileError{{"p.yaml", 3, 7}, "tests[0].rate", "bad"}).to_string(), "p.yaml:3:7: tests[0].rate: bad");
  EXPECT_EQ((ProfileError{{"p.yaml", 3, 7}, "", "bad"}).to_string(), "p.yaml:3:7: bad");
  EXPECT_EQ((ProfileError{{"p.yaml", 0, 0}, "", "bad"}).to_string(), "p.yaml: bad");
}

TEST(ProfileErrors, EthertypeThatIsAVlanTagType) {
  EXPECT_EQ(profile_error(R"(
name: x
agents: {count: 2}
tests:
  - name: t
    engine: dpdk
    duration: 1s
    ethertype: 0x8100
)"),
            "bad.yaml:7:16: tests[0].ethertype: ethertype 0x8100 is a VLAN tag type; tag frames with "
            "vlan: and pcp:");
}

}  // namespace
}  // namespace tusk

// ---- training-step replay ----------------------------------------------------------------------

namespace tusk {
namespace {

constexpr std::string_view kCollective = R"(
name: ring
agents:
  hosts: [a, b, c]
tests:
  - name: all-reduce
    engine: rdma
    collective: all_reduce
    collective_bytes: 3MB
    steps: 5
    step_period: 3s
    compute_time: 1s
    scale: 50%
)";

TEST(ProfileCollective, SetsTheRingAndADurationOfStepsTimesPeriod) {
  const Profile profile = load_profile_yaml(kCollective);
  const TestSpec& test = profile.tests.at(0);
  EXPECT_EQ(test.topology, Topology::Ring);
  EXPECT_EQ(test.duration, std::chrono::seconds(15));
  EXPECT_EQ(rdma::params(test).collective(), "all_reduce");
  EXPECT_EQ(rdma::params(test).collective_bytes(), 3'000'000u);
  EXPECT_EQ(rdma::params(test).compute_ms(), 1000u);
  EXPECT_DOUBLE_EQ(rdma::params(test).scale(), 0.5);
}

TEST(ProfileCollective, AllToAllRunsOnAMeshAndRefusesAnotherTopology) {
  std::string yaml(kCollective);
  yaml.replace(yaml.find("all_reduce\n"), 10, "all_to_all");
  EXPECT_EQ(load_profile_yaml(yaml).tests.at(0).topology, Topology::Mesh);
  yaml += "    topology: ring\n";
  EXPECT_EQ(profile_error(yaml),
            "bad.yaml:13:15: tests[0].topology: collective all_to_all runs on a mesh; remove "
            "topology or set it to mesh");
}

TEST(ProfileCollective, NeedsItsStepsAndLeavesTimeToCommunicate) {
  std::string yaml(kCollective);
  yaml.replace(yaml.find("    steps: 5\n"), 13, "");
  yaml.replace(yaml.find("compute_time: 1s"), 16, "compute_time: 3s");
  const auto errors = profile_errors(yaml);
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(errors[0], "bad.yaml:7:17: tests[0].collective: collective all_reduce needs steps");
  EXPECT_EQ(errors[1],
            "bad.yaml:10:19: tests[0].compute_time: compute_time 3s leaves no time to communicate in a "
            "step_period of 3000 ms");
}

TEST(ProfileCollective, ItsStepsMustFitTheSafetyCap) {
  std::string yaml(kCollective);
  yaml.replace(yaml.find("agents:"), 7, "safety:\n  max_duration: 10s\nagents:");
  EXPECT_EQ(profile_error(yaml),
            "bad.yaml:11:12: tests[0].steps: 5 steps of 3000 ms last longer than "
            "safety.max_duration 10s");
}

TEST(ProfileCollective, StepKeysWithoutACollectiveAreRefused) {
  EXPECT_EQ(profile_error(R"(
name: p
agents:
  hosts: [a, b]
tests:
  - name: t
    engine: rdma
    duration: 5s
    steps: 5
)"),
            "bad.yaml:8:12: tests[0].steps: steps is for training-step replay: it needs collective");
}

}  // namespace
}  // namespace tusk
