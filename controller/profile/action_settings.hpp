// Where a run's verdict is taken and within what: `tusk-controller act`'s flags, or a profile's
// `actions:` block, which takes them at the run's end. Plain data.
#pragma once

#include <chrono>
#include <string>

namespace tusk {

inline constexpr double kDefaultMaxShare = 0.05;

struct ActionSettings {
  bool slurm = false;       // drain and resume in Slurm
  bool kubernetes = false;  // label and taint Kubernetes nodes
  std::string exec;         // a command with the blame in its environment ("" none)
  std::chrono::milliseconds exec_timeout{300'000};
  double max_share = kDefaultMaxShare;  // act on none when the run blames more of its nodes
  bool dry_run = false;                 // say what would be done, do nothing
  bool any() const { return slurm || kubernetes || !exec.empty(); }
};

}  // namespace tusk
