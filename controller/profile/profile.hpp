// The validated, typed form of a YAML profile. Produced only by profile_loader; every value here
// has already been range-checked, so the planner and the run never re-validate.
#pragma once

#include <any>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/source_pos.hpp"
#include "common/units.hpp"
#include "controller/profile/action_settings.hpp"
#include "controller/profile/localisation_settings.hpp"
#include "controller/profile/optics_settings.hpp"
#include "controller/profile/series_settings.hpp"

namespace tusk {

// Which registered agents a run uses. Hosts and patterns are unioned; count then takes that many
// of the matches (sorted by name), or that many of all agents when no hosts/patterns are given.
struct AgentSelector {
  std::vector<std::string> hosts;     // exact agent names
  std::vector<std::string> patterns;  // shell globs over agent names, e.g. "rack1-gpu*"
  std::optional<std::uint32_t> count;
  std::chrono::milliseconds wait{std::chrono::seconds(60)};  // how long `run` waits for them
};

// Upper bounds that no test of the profile may exceed; the agents enforce them too.
struct SafetyCaps {
  double max_rate_bps = 0;  // 0: no cap
  std::chrono::milliseconds max_duration{std::chrono::hours(24)};
};

enum class Bound { Max, Min };

// One pass/fail rule, e.g. `max_ber: 1e-12` becomes {key "max_ber", metric "ber", Max, 1e-12}.
struct Threshold {
  std::string key;     // as written in the profile
  std::string metric;  // the metric the verdict computes (see threshold_catalog)
  Bound bound = Bound::Max;
  double value = 0;
  SourcePos pos;
  bool implicit = false;  // a safe default (threshold_catalog), not written in the profile
};

// How the selected agents are paired for a test.
enum class Topology {
  Loopback,     // each agent alone: port A to port B of one host
  Pairs,        // agents in name order, 0↔1, 2↔3, ...
  Ring,         // agent i sends to agent i+1 (mod n)
  Mesh,         // every agent to every other agent
  Pipeline,     // a chain: agent i sends to agent i+1, the last to nobody (pipeline stages)
  Incast,       // every other agent sends to agent 0 (checkpoint writes to a storage host)
  Permutation,  // agent i sends to agent i + n/2 (mod n): every flow crosses the bisection
  // A schedule (ShiftSpec): step k has agent i send to agent i + k (mod n), or the same counted in
  // groups (leaves); each step is a test of its own, and all steps together cover every pair.
  Shift,
  // RFC 2889 congestion control, set by that method only: agents 2 and 3 send to agent 0 (the
  // congested port), agent 2 also to agent 1 (the uncongested one); the rest send nothing.
  Congestion,
};

// A qualification method (controller/method/): the test runs as a series of steps, each a test of
// its own, where a step changes the frame size, the offered rate or the senders.
enum class MethodKind {
  Throughput,         // RFC 2544 26.1: per frame size, a binary search for the highest rate with no loss
                      // (NDR) and with loss under pdr_loss (PDR)
  FrameLossRate,      // RFC 2544 26.3: per frame size, loss at 100 % of the rate, then down in steps
  Sweep,              // every frame size at every rate, one after another, each step judged alone
  Incast,             // 2..N senders into one receiver, one step per fan-in
  CongestionControl,  // RFC 2889 5.5: two ports into one, one of them also to a fourth; loss on that
                      // uncongested flow is head-of-line blocking
  EcmpBalance,        // one step; per leaf, the bytes each equal-cost uplink carried (max/mean, Jain's index)
  LinkFailure,        // one step; a link taken down at a set time: per flow, traffic lost and time to resume
  BurstAbsorption,    // incast of trains of growing length into one port: the longest absorbed with no loss
  Shift,              // topology: shift: one step per shift of the schedule, judged and localised together
};

// `topology: shift`: which shifts run and how agents are counted. Step k of the schedule (1-based)
// is, without groups, every agent i sending to i + k (mod n): steps 1..n-1 cover every ordered
// pair once. With groups (leaves), a step is a group shift g and a member shift m: member j of
// group G sends to member j + m of group G + g (scope cross: every flow leaves its group, so
// crosses the spine layer), or of its own group (scope rack: g is 0).
struct ShiftSpec {
  enum class GroupBy { None, Leaf, Listed };
  enum class Scope { Cross, Rack };
  std::vector<std::uint32_t> shifts;  // the step numbers that run, ascending; empty: all
  std::string shifts_text = "all";
  GroupBy group_by = GroupBy::None;
  std::vector<std::pair<std::string, std::string>> groups;  // Listed: agent name, group name (profile order)
  Scope scope = Scope::Cross;
  SourcePos pos;
};

// A step's rate: a fraction of the test's `rate:`, or a bit or packet rate of its own.
struct StepRate {
  double fraction = 1;
  std::optional<double> bits_per_second;
  std::optional<double> packets_per_second;
  std::string text;  // as written: "50%", "8Mbit/s"
};

struct MethodSpec {
  MethodKind kind = MethodKind::Sweep;
  std::vector<std::uint32_t> frame_sizes;  // empty: the test's own frame size
  bool default_sizes = false;              // RFC 2544's list, not written: sizes the framing cannot hold are left out
  std::vector<StepRate> rates;             // sweep: in order; empty: the test's rate
  std::vector<std::uint32_t> fan_in;       // incast: senders per step
  std::chrono::milliseconds trial{0};      // each step's duration
  double resolution = 0.01;       // throughput: search ends when NDR and PDR are known this close (of the rate)
  std::uint32_t max_trials = 16;  // throughput: most trials per frame size
  double pdr_loss = 0.001;        // throughput: the loss a partial drop rate accepts;
                                  // congestion_control: the loss the uncongested flow may have
  double step = 0.1;              // frame_loss_rate: the rate goes down by this much of the rate
  bool latency = false;           // throughput: a trial at the NDR per size for its latency
  // ecmp_balance: the most a leaf's busiest uplink may carry over the mean of its uplinks, and the
  // least Jain's index; unset: only what hashing the flows at random would exceed (0.1 %) fails.
  std::optional<double> max_imbalance, min_fairness;
  // link_failure: the link (as the topology file names its ends), when it goes down (into the
  // test), the commands that take it down and bring it back, and the longest a flow may take to
  // resume on another path.
  std::string link;
  std::chrono::milliseconds at{0};
  std::string down_command, up_command;
  std::optional<std::chrono::milliseconds> max_convergence;
  // burst_absorption: each step's train length (frames back to back per sender), the senders into
  // the first agent, and the longest train the port must absorb without loss.
  std::vector<std::uint32_t> bursts;
  std::uint32_t burst_senders = 2;
  std::optional<std::uint32_t> min_absorbed;
  // The test's own rate, the one the shares above are of (set by the checks; none for incast).
  std::optional<units::Rate> rate;
  SourcePos pos;
};

// What a stream far from its siblings makes of the test (controller/verdict/stream_outliers.hpp).
enum class OutlierMode { Off, Warn, Fail };
// k: how many scaled median absolute deviations from its class's median flag a stream. Chosen
// with its false-alarm rate on clean lab runs (README, bench/outlier_false_alarms.sh).
inline constexpr double kDefaultOutlierK = 5.0;

struct TestSpec {
  std::string name;
  std::string engine;  // an engine of the table in controller/engines/
  std::chrono::milliseconds duration{0};
  std::chrono::milliseconds sample_interval{std::chrono::seconds(1)};
  Topology topology = Topology::Pairs;
  // The engine's own parameters, whatever type its slice keeps them in: only that slice reads or
  // writes them (controller/engines/<engine>/), so no other code names an engine's parameters.
  std::any params;
  std::vector<Threshold> thresholds;
  // thresholds.window: the count thresholds and min_throughput are also judged in every window of
  // this length (a whole number of sample intervals), so a fault of ten minutes in a night-long
  // soak fails the windows that hold it and says when.
  std::optional<std::chrono::milliseconds> window;
  SourcePos window_pos;
  std::optional<MethodSpec> method;
  std::optional<ShiftSpec> shift;  // topology: shift (then method is its steps' kind, Shift)
  // thresholds.min_link_coverage: the share of the topology file's links, each way, that the
  // test's flows must cross (needs --topology).
  std::optional<double> min_link_coverage;
  // The profile's `optics:` block, which holds for every test.
  OpticsSettings optics;
  OutlierMode outliers = OutlierMode::Warn;
  double outlier_k = kDefaultOutlierK;
  // The noise floor under which a link's loss or damage names no suspect.
  LocalisationSettings localisation;
  SourcePos pos;
};

// What a run does when the switches' LLDP says a cable is not where the topology file has it
// (controller/verdict/cabling_check.hpp): `check` says so and runs, `enforce` starts no traffic.
enum class CablingMode { Off, Check, Enforce };

struct Profile {
  std::string file;
  std::string name;
  std::string description;
  std::string source;  // the YAML as loaded: the reports show the profile as run
  AgentSelector agents;
  SafetyCaps safety;
  CablingMode cabling = CablingMode::Check;
  // Where the verdict is taken when the run ends (controller/actions/); none when !actions.any().
  ActionSettings actions;
  // An earlier run to compare this one with as it ends: "last" (of this profile) or a run id; ""
  // for none (controller/history/baseline_check.hpp).
  std::string baseline;
  // A regression against the baseline fails the run (exit 1) instead of being a warning.
  bool baseline_fail = false;
  // How long the run's series file keeps full-resolution rows, and its size.
  SeriesRetention series;
  std::vector<TestSpec> tests;
};

// The run's series retention: the profile's `series:`, with a full-resolution horizon of at least
// twice its longest window and the margin (a window is judged when the next one ends, and its
// rows must outlive that by the margin).
SeriesRetention series_retention_of(const Profile& profile);

std::string_view to_string(Topology topology);
std::string_view to_string(CablingMode mode);
std::string_view to_string(MethodKind kind);
std::string_view to_string(ShiftSpec::Scope scope);

}  // namespace tusk
