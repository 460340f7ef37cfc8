// The finished run as the reports see it: what was asked, what each agent did, and the verdict.
#pragma once

#include <any>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/exit_codes.hpp"
#include "controller/outcome/agent_data.hpp"
#include "controller/profile/profile.hpp"
#include "controller/switches/switch_reading.hpp"
#include "controller/verdict/cabling_check.hpp"
#include "controller/verdict/link_coverage.hpp"
#include "controller/verdict/link_evidence_rows.hpp"
#include "controller/verdict/link_localisation.hpp"
#include "controller/verdict/path_faults.hpp"
#include "controller/verdict/port_optics.hpp"
#include "controller/verdict/stream_outliers.hpp"
#include "controller/verdict/switch_counters.hpp"
#include "controller/verdict/verdict.hpp"

namespace tusk {

struct MethodResult;

struct AgentStart {
  std::string agent;
  std::int64_t clock_offset_ns = 0;
  std::int64_t clock_rtt_ns = 0;
  std::optional<std::int64_t> start_error_ns;  // actual start minus planned, on the controller's clock
};

enum class TestVerdict { Pass, Fail, Incomplete };

struct TestOutcome {
  int index = 0;
  TestSpec spec;
  std::vector<std::string> agents;
  // The plans as sent, by agent: the values the planner resolved (scaled collective bytes, bytes
  // per peer and step, rates under a cap) that every later stage reads instead of working out again.
  std::map<std::string, proto::Plan> plans;
  std::int64_t planned_start_ns = 0;  // controller clock
  std::optional<std::int64_t> start_skew_ns;
  std::vector<AgentStart> starts;
  std::map<std::string, AgentTestData> per_agent;
  // The switches' counters and LLDP neighbours read over SNMP before the test and after it (none
  // without --snmp-credentials or a topology file that gives switches a management address).
  std::vector<SwitchReading> switches_before, switches_after;
  std::vector<StreamVerdict> streams;
  // Streams far from their class's median (profile `outliers:`), worst first; a warning each, or
  // a problem with `outliers: fail`.
  std::vector<StreamOutlier> outliers;
  // Flows that fail while their siblings between the same hosts pass.
  std::vector<PathFaultSign> path_faults;
  // Routed flows with their traced paths, the suspect links and host problems (link_localisation).
  Localisation localisation;
  // Which of the topology file's links the flows crossed, each way; none without the file or traces.
  std::optional<LinkCoverage> coverage;
  // What the switches counted on each cable over the test (from switches_before and _after).
  SwitchCounterEvidence switch_counters;
  // What they counted lost in each interval while it ran (--snmp-interval; a method's steps' in turn).
  std::vector<SwitchInterval> switch_intervals;
  // The host ports' optics and FEC over the test, judged (profile `optics:`); a failure among their
  // findings is among `problems`, a warning among `warnings`.
  std::vector<PortOpticsOutcome> optics;
  // The ports read every `optics: interval` while the test ran, one timeline a port.
  std::vector<OpticsTimeline> optics_timeline;
  // Per link with evidence against it: the flows', probes', counters' and optics' say, and what to
  // do first (link_evidence_rows, from the three above).
  std::vector<LinkEvidenceRow> link_evidence;
  std::vector<std::string> problems;  // agent lost, plan refused, no result, stopped early
  // What the verdict allowed but a reader must see: faults within a relaxed threshold, agents lost
  // within max_agents_lost, safe defaults nothing measured. Events are listed per agent.
  std::vector<std::string> warnings;
  bool agents_lost = false;  // more agents lost than the test allows
  // What the test's engine worked out of it beyond its streams (EngineSlice::conclude), read by
  // that engine's report extras; empty for an engine that has none.
  std::any engine_result;
  // A method test's steps and what they came to (controller/method/); null for a test of one step.
  std::shared_ptr<const MethodResult> method;
  TestVerdict verdict = TestVerdict::Incomplete;
  // A checkpoint's running test: its streams' bins stay in the run's live data (a copy of every
  // stream's bins was most of a checkpoint's peak), lent one stream at a time as report.json is
  // written, and only while it is; none when per_agent holds them.
  struct LentSeries {
    std::uint32_t width = 1;  // the widest bins of any stream when the checkpoint was taken
    std::function<std::optional<StreamSeries>(const std::string& agent, const std::string& stream_id)> lend;
  };
  std::optional<LentSeries> lent_series;
};

struct RunOutcome {
  std::string run_id;
  std::string retest_of;  // --only-failing: the run whose failures this one tests again
  // --resume: the run (of the same directory) whose schedule this one went on with after its
  // controller stopped, and the steps it had finished (restored from its ledger, not run again).
  std::string resumed_from;
  std::size_t steps_restored = 0;
  Profile profile;
  // The switches' LLDP against the topology file, before any traffic (none when no switch is read).
  std::optional<CablingCheck> cabling;
  std::int64_t started_ns = 0;
  std::int64_t finished_ns = 0;
  std::vector<AgentView> agents;
  std::vector<std::string> missing_agents;
  std::vector<TestOutcome> tests;
  std::vector<Fault> faults;
  int exit_code = kExitPass;
  std::string conclusion;           // one line: why the run passed or not
  std::int64_t interrupted_ns = 0;  // when a signal interrupted the run; 0: none did
  std::string series_file;          // where every sample went (controller/series/); "": nowhere
  // Non-zero: a checkpoint taken while the run went on (RunOptions::checkpoint), not its end.
  std::int64_t checkpoint_ns = 0;
};

std::string_view to_string(TestVerdict verdict);
// What a reader must see of a test that the verdict allowed: the test's warnings, then each
// stream's, named by stream_title.
std::vector<std::string> reader_warnings(const TestOutcome& test);

}  // namespace tusk
