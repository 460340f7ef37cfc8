// The commands that run nothing: validate, plan and model read their inputs and print, report
// draws an earlier run's report.html (or its summary), series prints its samples.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "controller/command_flags.hpp"
#include "controller/series/series_reader.hpp"

namespace tusk {

int command_validate(const std::vector<std::string>& files);
int command_plan(const std::string& file, const std::vector<std::string>& agents, const std::string& topology_file,
                 const std::string& inventory_file, bool as_json);
// The communication of a training job described by a model file; nothing is run.
int command_model(const std::string& file, bool as_json, bool binary_units);
// report.html from an earlier run: RUN_DIR/report.json (or that file named directly) drawn into
// RUN_DIR/report.html, or into --out.
int command_report(const std::string& given, const std::string& out, bool as_text);

// A run's samples from its series file; no sample is a usage error only where a filter matched none.
// `tusk-controller series`: a run's streams from its series file.
class SeriesCommand {
 public:
  explicit SeriesCommand(CLI::App& app);
  // The command's exit code, if it was the one chosen.
  std::optional<int> run_chosen();

 private:
  CLI::App* command_ = nullptr;
  std::string run_;
  SeriesQuery query_;
  bool csv_ = false, json_ = false, minutes_ = false, full_ = false;
};

}  // namespace tusk
