// tusk-controller's `act REPORT`: takes a run's verdict to the scheduler: drains in Slurm the nodes
// the report blames and resumes those Tusk drained that now pass, labels and taints them in
// Kubernetes, and runs a command of the user's with the blame in its environment (tickets, a
// switch port shut), all through take_actions; with --dry-run prints what it would do. controller_main makes an
// ActCommand before parsing and asks it to run after.
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <ostream>
#include <string>

namespace tusk {

class ActCommand {
 public:
  explicit ActCommand(CLI::App& app);
  ActCommand(const ActCommand&) = delete;
  ActCommand& operator=(const ActCommand&) = delete;

  // The exit code of `act` when it was chosen; nullopt otherwise.
  std::optional<int> run_chosen(std::ostream& out, std::ostream& err) const;

 private:
  int act(std::ostream& out, std::ostream& err) const;

  CLI::App* act_ = nullptr;
  std::string report_;
  bool slurm_ = false;
  bool kubernetes_ = false;
  std::string exec_;
  std::string exec_timeout_ = "5m";
  std::string max_share_ = "5%";
  bool dry_run_ = false;
};

}  // namespace tusk
