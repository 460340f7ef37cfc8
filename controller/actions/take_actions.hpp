// Takes a run's verdict where the settings say (Slurm, Kubernetes, a command), each through its
// own file of controller/actions/, and prints each action or why none: one way for both
// `tusk-controller act` and a profile's `actions:` at the end of its run.
#pragma once

#include <ostream>
#include <string>

#include "controller/actions/report_blame.hpp"
#include "controller/profile/action_settings.hpp"

namespace tusk {

// True when every action was taken or none was needed; false when the share cap held or a
// scheduler or the command failed (each said on `err`). `report_file` is the run's report.json.
bool take_actions(const ActionSettings& settings, const RunBlame& blame, const std::string& report_file,
                  std::ostream& out, std::ostream& err);

}  // namespace tusk
