// How long a run's series file keeps its full-resolution rows (the profile's `series:`,
// docs/profile.md; series_file.hpp does what it says).
#pragma once

#include <chrono>
#include <cstdint>

namespace tusk {

struct SeriesRetention {
  std::chrono::milliseconds full{std::chrono::minutes(15)};    // the last this much of the run's clock
  std::chrono::milliseconds margin{std::chrono::seconds(30)};  // around an event or a failed window
  std::uint64_t budget = std::uint64_t{20} << 30;              // bytes of the file's pages in use
  // How often (on the run's clock) old rows are pruned and the budget is checked.
  std::chrono::milliseconds prune_every{std::chrono::seconds(30)};
};

}  // namespace tusk
