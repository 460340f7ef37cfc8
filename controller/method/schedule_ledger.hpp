// A shift schedule's ledger, RUN_DIR/schedule.ledger (schedule_ledger.proto): what its finished
// steps came to (their rows, the streams the schedule keeps of them, its flow table), rewritten
// whole as each step is judged: to a temporary file, synced, renamed over the last. It holds what
// the controller holds of the schedule (its passing streams left with their steps), so a night's
// ledger is as flat in steps as its memory. `tusk-controller run --resume RUN_DIR` reads it back
// and goes on from the next step: no finished step runs, or is judged, twice.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "controller/method/method_result.hpp"
#include "controller/outcome/agent_data.hpp"
#include "controller/topology/fabric_topology.hpp"

namespace tusk {

inline constexpr const char* kScheduleLedgerFileName = "schedule.ledger";
inline constexpr std::uint32_t kScheduleLedgerVersion = 1;

// Which run and schedule a ledger is of, and what a resumed run must match.
struct LedgerIdentity {
  std::string run_id;
  std::int64_t started_ns = 0;
  std::uint64_t profile_digest = 0;   // file_digest of the profile file
  std::uint64_t topology_digest = 0;  // of the topology file; 0: none
  int test_index = 0;                 // the schedule test among the profile's tests
  std::string test_name;
  std::vector<std::string> agents;  // the run's agents, in order: the schedule's indices are theirs
  // The tests before the schedule, as they ended: a resumed run's verdict counts them.
  std::vector<std::pair<std::string, TestVerdict>> tests_before;
  std::string series_file;  // where the steps' samples went
};

// What a ledger holds: the schedule as far as it got.
struct ScheduleLedger {
  LedgerIdentity identity;
  bool complete = true;
  std::vector<MethodStep> steps;
  // The steps' outcomes as the schedule kept them (step_fold.hpp), without their specs and
  // per-agent data (a resumed run plans each step's spec again).
  std::vector<TestOutcome> outcomes;
  std::shared_ptr<FlowTable> flows;  // null: no step had a flow
  std::vector<Fault> faults;         // the run's, up to the last step
};

// Writes `directory`/schedule.ledger. Throws std::runtime_error naming the file.
void write_schedule_ledger(const std::string& directory, const LedgerIdentity& identity, const MethodResult& so_far,
                           const std::vector<Fault>& faults, const FabricTopology* topology);
// Reads `directory`/schedule.ledger; `topology`: the run's, whose cables the flow table's links
// name again. Throws std::runtime_error naming the file and what is wrong with it.
ScheduleLedger read_schedule_ledger(const std::string& directory, const FabricTopology* topology);

// A file's bytes as a 64-bit FNV-1a digest; 0 when it cannot be read.
std::uint64_t file_digest(const std::string& path);

}  // namespace tusk
