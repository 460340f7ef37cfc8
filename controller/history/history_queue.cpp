#include "controller/history/history_queue.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "common/clock.hpp"
#include "common/json_text.hpp"
#include "controller/history/run_history.hpp"

namespace tusk {
namespace fs = std::filesystem;

bool record_or_queue(const nlohmann::ordered_json& report, const std::string& run_directory,
                     const std::string& location, int tries, std::chrono::milliseconds pause) {
  std::string why;
  for (int attempt = 1; attempt <= tries; ++attempt) {
    try {
      RunHistory history(location);
      history.record_run(report, run_directory);
      spdlog::info("run recorded in the history {}", history.path());
      return true;
    } catch (const ReportUnreadable& e) {
      why = e.what();
      break;  // the same report would be refused again
    } catch (const std::exception& e) {
      why = e.what();
      if (attempt < tries) {
        spdlog::warn("the history did not take the run (try {} of {}): {}", attempt, tries, why);
        std::this_thread::sleep_for(pause * attempt);
      }
    }
  }
  if (run_directory == "-") {
    spdlog::warn(
        "the run was not recorded in the history: {} (its report went to stdout: keep it, and "
        "`tusk-controller history --import` it later)",
        why);
    return false;
  }
  const fs::path queued = fs::path(run_directory) / kHistoryQueuedFile;
  nlohmann::ordered_json entry{{"history", location},
                               {"run_id", report.value("run_id", "")},
                               {"queued_at", utc_iso_time(realtime_ns())},
                               {"error", why}};
  std::ofstream file(queued);
  file << json_text(entry) << "\n";
  if (!file) {
    spdlog::warn(
        "the run was not recorded in the history: {}; nor could it be queued in {} (its report is kept: "
        "`tusk-controller history --import {} --history {}` records it)",
        why, queued.string(), run_directory, location);
    return false;
  }
  spdlog::warn(
      "the run was not recorded in the history: {}; queued in {}: `tusk-controller history --import {} "
      "--history {}` records it",
      why, queued.string(), run_directory, location);
  return false;
}

std::string clear_queued(const std::string& run_directory) {
  const fs::path queued = fs::path(run_directory) / kHistoryQueuedFile;
  std::error_code error;
  if (!fs::exists(queued, error)) return "";
  std::string since = "an earlier run's end";
  try {
    std::ifstream file(queued);
    since = nlohmann::json::parse(file).value("queued_at", since);
  } catch (const std::exception&) {
    // A queue file that cannot be read still goes: the run is recorded now.
  }
  fs::remove(queued, error);
  return since;
}

}  // namespace tusk
