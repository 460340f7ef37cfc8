// Everything a run collects, as it arrives: plan acknowledgements, samples, events, results and
// faults, per test and agent. Filled from the registry's io thread, read by the orchestrator;
// every access goes through with() under one lock.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "controller/outcome/agent_data.hpp"
#include "controller/profile/profile.hpp"
#include "controller/run/clock_sync.hpp"
#include "controller/series/series_file.hpp"
#include "tusk.pb.h"

namespace tusk {

// What one agent's result says of its samples, against what the test could have made.
struct SampleAccount {
  std::vector<std::uint32_t> missing;  // the first kMaxListedMissing indexes that never arrived
  std::uint64_t missing_count = 0;
  bool claim_beyond_test = false;  // the result claims more samples than the test could make
};

inline constexpr std::size_t kMaxListedMissing = 20;
// Events one agent may report for one test; past this they are counted in one fault, not kept.
inline constexpr std::size_t kMaxEventsPerAgentTest = 10'000;
// Connection-level faults (lost, gaps, refused) one agent may add per test; past this, one line says so.
inline constexpr std::size_t kMaxConnectionFaultsPerAgentTest = 100;

// Samples 1..claimed that never arrived, looking at no more than `most` (the test's bound), so a
// claim of 4 billion costs no more than the test's real length.
SampleAccount account_samples(const AgentTestData& data, std::uint64_t claimed, std::uint32_t most);

// The most samples a test of this length can make: one per interval, and one to spare.
std::uint32_t most_samples(std::chrono::milliseconds duration, std::chrono::milliseconds sample_interval);

// A test's clock for its samples: started at `start_ns` (this host's clock), one sample every
// `interval`. By `now_ns` no agent can have taken more than elapsed / interval samples; a sample
// index past that by more than the lead (3 intervals, and at least 2 s for clocks that disagree)
// is one an agent made up, and is dropped, so an agent cannot write a night's samples in seconds.
struct SamplePace {
  std::int64_t start_ns = 0;
  std::chrono::milliseconds interval{1000};
  std::uint64_t most_by(std::int64_t now_ns) const;
};

struct RunState {
  std::string run_id;
  int current_test = -1;
  // (test index, agent name) → data
  std::map<std::pair<int, std::string>, AgentTestData> tests;
  std::vector<Fault> faults;
};

// Records are bounded on arrival by what the plan made, not by what an agent sends: a test index
// the run does not have, a test the agent was handed no plan for, a sample index past what its
// test can make, streams past what its plan can make (most_streams_of) or past their byte budget
// (wire::kMaxStreamBytes, kSampleBytesPerPlannedStream per planned stream), path hops past
// wire::kMaxPathHops, and events past kMaxEventsPerAgentTest (those of another run too) are
// dropped, each kind reported once per agent and test as a fault, so one agent can neither grow
// the controller's memory without end nor flood the report. Every text in a record arrives cut and
// printable() (controller/run/peer_texts.hpp, where the agent's frame arrives), so no report or
// log can be forged or broken by it.
class RunData {
 public:
  // `most_samples[i]`: the most samples test i can make (most_samples()).
  RunData(std::string run_id, std::vector<std::uint32_t> most_samples);
  // A test added while the run goes (a method's step), with the most samples it can make; returns its index.
  int add_test(std::uint32_t most_samples);
  // What the plan handed to `agent` for test `test_index` lets it report: the most streams one of
  // its samples or results may hold. Records of a test an agent has no plan for are dropped.
  void expect(const std::string& agent, int test_index, std::size_t most_streams);
  // Test `test_index` starts at `start_ns` and samples every `interval`: from now on its samples
  // are admitted only as fast as its time passes (SamplePace).
  void pace(int test_index, std::int64_t start_ns, std::chrono::milliseconds interval);
  // Test `test_index` judges `spec`'s window thresholds in every window of spec.window (if any):
  // each stream's windows are tallied as its samples come. Before the test's first sample.
  void judge_windows(int test_index, const TestSpec& spec);
  // Test `test_index` judges each OpticsSample as it comes against `spec`'s optics thresholds, and
  // takes at most as many as its duration holds intervals. Before the test's first sample.
  void judge_optics_intervals(int test_index, const TestSpec& spec);

  // Takes what the run admits of `record`. With `want_kept`, returns what it kept of a sample or a
  // result (the plan's cut and every bound applied), a compact sample's values put back in its
  // streams' counter and gauge maps by the names the run holds: what a reader of maps (the live
  // metrics) may take, and nothing the run dropped.
  std::optional<proto::Record> on_record(const std::string& agent, proto::Record&& record, bool want_kept = false);
  void on_record(const std::string& agent, const proto::Record& record) { on_record(agent, proto::Record(record)); }
  void on_plan_ack(const std::string& agent, const proto::PlanAck& ack);
  void on_fault(const std::string& agent, const std::string& message);
  // Every sample admitted from now on is also appended to `file` (which must outlive this).
  void write_series_to(SeriesFile* file) {
    std::lock_guard lock(mutex_);
    series_file_ = file;
  }

  // Hands over what `agents` sent for test `test_index` and forgets it: a finished test's data
  // lives in its outcome only, not twice for the rest of the run. Records of it that come later
  // are dropped.
  std::map<std::string, AgentTestData> take_test(int test_index, const std::vector<std::string>& agents);

  // What `agents` sent for test `test_index` so far, as a checkpoint judges it while the test runs
  // (run_data_checkpoint.cpp): each agent's data with only its streams judged window by window,
  // and those only as judged (StreamSeries::for_judging), and for an agent that sent no result
  // yet, one made of its streams' latest values. The rest of a stream (its bins) stays here, lent
  // by stream_now as the checkpoint is written: a copy of every stream was most of its peak.
  struct TestSoFar {
    std::map<std::string, AgentTestData> per_agent;
    std::uint32_t widest_bins = 1;  // of any of its streams
  };
  TestSoFar test_so_far(int test_index, const std::vector<std::string>& agents);
  // A copy of one stream of test `test_index` as it is now; none when there is no such stream.
  std::optional<StreamSeries> stream_now(int test_index, const std::string& agent, const std::string& stream_id);

  template <typename Function>
  auto with(Function&& function) {
    std::lock_guard lock(mutex_);
    return function(state_);
  }

 private:
  // Adds a fault for (agent, test, what) unless one was added already.
  void fault_once(const std::string& agent, int test_index, const std::string& what, std::string message);

  std::mutex mutex_;
  RunState state_;
  // Keeps the streams the plan allows, each within its bounds; reports what it cut.
  void bound_streams(const std::string& agent, int test_index,
                     google::protobuf::RepeatedPtrField<proto::StreamCounters>& streams);
  // Whether one more event of (agent, test) fits under kMaxEventsPerAgentTest (test -1: events of
  // no test of this run); past it, one fault says so.
  bool admit_event(const std::string& agent, int test_index);
  // Writes an admitted sample to the series file and folds each stream into its series.
  void fold_sample(const std::string& agent, AgentTestData& data, proto::Sample& sample);
  // The window a test's end closes is judged as the test is (test_judgement.cpp): one that fails
  // keeps its rows in the series file past the retention, as the windows judged before it do.
  void keep_closing_windows(const AgentTestData& data);
  // Whether the agent's rows of `test` are still within its series-file budget
  // (kSeriesBytesPerStreamSample); past it, one fault says so.
  bool within_series_budget(const std::string& agent, int test);

  std::vector<std::uint32_t> most_samples_;
  std::map<int, SamplePace> paces_;        // by test
  std::optional<std::int64_t> origin_ns_;  // the first test's start: the run's clock starts there
  // Where sample `index` of `test` lies on the run's clock (the series file's retention goes by
  // it): the test's start and the sample's interval, both the run's, so no agent can age rows.
  std::uint64_t run_ms_of(int test, std::uint32_t index) const;
  std::map<std::pair<std::string, int>, std::size_t> most_streams_;
  std::map<int, WindowTally> window_rules_;  // by test: the window and its thresholds, nothing tallied
  struct OpticsRule {
    OpticsThresholds thresholds;
    std::uint32_t most_intervals = 0;
  };
  std::map<int, OpticsRule> optics_rules_;  // by test
  std::set<int> taken_;                     // tests whose data take_test handed over
  // Judges an admitted OpticsSample into the agent's timelines.
  void fold_optics(const std::string& agent, AgentTestData& data, const proto::OpticsSample& sample,
                   const OpticsThresholds& thresholds);
  std::map<std::pair<std::string, int>, std::size_t> event_counts_;
  std::set<std::tuple<std::string, int, std::string>> reported_;
  std::map<std::pair<std::string, int>, std::size_t> connection_faults_;
  SeriesFile* series_file_ = nullptr;
  std::map<std::pair<std::string, int>, std::uint64_t> series_bytes_;  // written by (agent, test)
};

}  // namespace tusk
