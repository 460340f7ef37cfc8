// A run's history row when the history does not take it (a PostgreSQL server down as the run ends,
// a file that cannot be written): the report directory is complete already, the row is tried again
// and then queued there, and `history --import` records it later (issue 62).
#pragma once

#include <nlohmann/json.hpp>

#include <chrono>
#include <string>

namespace tusk {

// The queue file in a run directory: the history it was meant for, when and why it was not taken.
inline constexpr const char* kHistoryQueuedFile = "history-queued.json";

// Records `report` (from `run_directory`) in the history at `location`, trying `tries` times
// `pause` apart; where none succeeds, writes the queue file into `run_directory` (unless that is
// "-", a report written to stdout) and says so. Returns whether the run was recorded.
bool record_or_queue(const nlohmann::ordered_json& report, const std::string& run_directory,
                     const std::string& location, int tries = 3,
                     std::chrono::milliseconds pause = std::chrono::seconds(1));

// After `history --import` recorded `run_directory`'s report: removes its queue file; the time it
// was queued since, or "" when it had none.
std::string clear_queued(const std::string& run_directory);

}  // namespace tusk
