// tusk-controller's run-history commands: `history` lists recorded runs or follows one link or
// stream across them, `compare` says whether a later run is worse than an earlier one (exit 1 when
// it is, for pipelines), and `run --history/--no-history` choose where a finished run is recorded.
// controller_main makes a HistoryCommands before parsing and asks it to run after.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstddef>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "controller/history/run_comparison.hpp"

namespace tusk {

// `run`'s choice of history file.
struct RunHistoryFlags {
  std::string path;  // "" for default_history_path()
  bool disabled = false;
  void add_to(CLI::App& run);
};

// Records a finished run's report in the history `flags` chose. Never throws, never changes the
// run's exit code: the report is already written, so a history that fails is a logged warning.
void record_in_history(const nlohmann::ordered_json& report, const std::string& run_directory,
                       const RunHistoryFlags& flags);

// A run named on the command line as a directory that exists (or a file in it): `given` itself;
// otherwise a run id, looked up in the history at `history_path` ("" for the default), which gives
// the directory it was recorded from. Throws std::runtime_error saying what it tried. So `report`,
// `series` and `act` take run ids as `compare` does.
std::string run_location(const std::string& given, const std::string& history_path = "");

// The `history` and `compare` subcommands with their flags, which CLI11 writes while parsing: the
// object stays where it was made (no copy, no move) until the command has run.
class HistoryCommands {
 public:
  explicit HistoryCommands(CLI::App& app);
  HistoryCommands(const HistoryCommands&) = delete;
  HistoryCommands& operator=(const HistoryCommands&) = delete;

  // The exit code of whichever of the two was chosen (ExitCode); nullopt when neither was.
  std::optional<int> run_chosen(std::ostream& out, std::ostream& err) const;

 private:
  int history(std::ostream& out, std::ostream& err) const;
  int compare(std::ostream& out, std::ostream& err) const;
  std::string history_path() const;

  CLI::App* history_ = nullptr;
  CLI::App* compare_ = nullptr;
  std::string history_path_;
  bool as_json_ = false;
  // history
  std::string profile_;
  std::string agent_;
  std::string link_;
  std::size_t last_ = 0;
  std::vector<std::string> imports_;
  // compare
  std::string run_before_;
  std::string run_after_;
  WorseThresholds thresholds_;
  double throughput_drop_percent_ = 5;
  double latency_rise_percent_ = 20;
};

}  // namespace tusk
