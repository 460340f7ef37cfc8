// `tusk-controller run PROFILE --resume RUN_DIR`: the run in RUN_DIR, whose controller stopped
// (killed, the host rebooted) during a shift schedule, goes on from the step after the last one its
// ledger holds (controller/method/schedule_ledger.hpp), with the same profile, topology and agents.
#pragma once

#include <memory>
#include <string>

#include "controller/method/schedule_ledger.hpp"
#include "controller/topology/fabric_topology.hpp"

namespace tusk {

// Reads RUN_DIR's ledger and checks that the run can go on: the profile and topology files are
// the ones it ran with, and it did not finish (a signal may have interrupted it). Then sets the
// stopped run's files aside for the new one (report.json as report.RUN_ID.json, series.sqlite as
// series.RUN_ID.sqlite, an interrupted run's junit.xml and report.html too), so nothing of the
// first part is lost or overwritten. Throws std::runtime_error saying what is wrong (and
// then nothing was moved).
std::shared_ptr<ScheduleLedger> open_resumed_run(const std::string& run_directory, const std::string& profile_file,
                                                 const std::string& topology_file, const FabricTopology* topology);

}  // namespace tusk
