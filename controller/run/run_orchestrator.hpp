// `tusk-controller run`: waits for the profile's agents, then for each test synchronises clocks,
// hands out plans, starts every agent at one absolute instant, follows the run, and collects what
// came back into a RunOutcome for the verdict and the reports.
//
// Threads: the caller's thread runs the orchestration and polls; one io thread runs the network.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "controller/method/schedule_ledger.hpp"
#include "controller/outcome/run_outcome.hpp"
#include "controller/plan/flow_selection.hpp"
#include "controller/run/control_plane.hpp"
#include "controller/switches/switch_reader.hpp"
#include "controller/topology/fabric_topology.hpp"

namespace tusk {

class LiveMetrics;

struct RunOptions {
  ControlPlaneOptions control;
  std::optional<std::chrono::milliseconds> wait_override;  // --wait, else the profile's agents.wait
  // An agent away longer than this during a test is lost (its lease has long stopped its traffic).
  std::chrono::milliseconds lost_after{std::chrono::seconds(10)};
  std::chrono::milliseconds plan_ack_timeout{std::chrono::seconds(30)};
  bool progress_line = false;
  // --topology: names for the links localisation blames; none: links are named by addresses.
  std::shared_ptr<const FabricTopology> topology;
  // --snmp-credentials with the topology's management addresses: the switches read before and
  // after each test (controller/switches/); none: no switch is read.
  std::vector<SwitchQuery> switches;
  // How long after a test's traffic stops its switches are read: agents and switches refresh the
  // counters they serve every few seconds (net-snmp: 3 s), so a read at once would miss the end.
  std::chrono::milliseconds switch_settle{std::chrono::seconds(5)};
  // --snmp-interval: the switches are also read this often while a test runs (SwitchWatch); 0: not.
  std::chrono::milliseconds switch_interval{std::chrono::seconds(60)};
  // --only-through or --only-failing: only these flows are planned, and only the tests that had some.
  std::optional<FlowSelection> only_flows;
  // --only-failing: the earlier run whose failures these are (report.json's retest_of).
  std::string retest_of;
  // --metrics-listen: fed with every record and the run's progress while the run lasts.
  std::shared_ptr<LiveMetrics> live_metrics;
  // The run's directory, given its id (made when the run starts): its series file goes there as
  // samples arrive (controller/series/). None: no series file.
  std::function<std::string(const std::string& run_id)> run_directory;
  // Called as the run's first test starts, then every checkpoint_every while a test runs, with the
  // run so far: the tests done, and the one under way judged on its samples up to now
  // (RunOutcome::checkpoint_ns set), so a controller killed mid-run, even in its first interval,
  // leaves a report of everything up to its last checkpoint. None: no checkpoints.
  std::function<void(const RunOutcome&)> checkpoint;
  std::chrono::milliseconds checkpoint_every{std::chrono::minutes(1)};
  // --resume: the ledger of the run whose schedule this one goes on with (its finished steps are
  // restored from it, not run again; the run has a run id of its own). None: a run from the start.
  std::shared_ptr<ScheduleLedger> resume;
};

// Never throws for agent or network trouble: that ends up in the outcome and its exit code.
// Throws std::runtime_error when the control plane cannot start (bad TLS files, port in use).
RunOutcome run_profile(const Profile& profile, const RunOptions& options);

}  // namespace tusk
