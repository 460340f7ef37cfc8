// `tusk-controller fabric`: the fabric's record across the runs of a history (fabric_record.hpp),
// for people (the worst first) or as JSON.
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <ostream>
#include <string>

#include "controller/history/fabric_record.hpp"

namespace tusk {

class FabricCommand {
 public:
  explicit FabricCommand(CLI::App& app);
  FabricCommand(const FabricCommand&) = delete;
  FabricCommand& operator=(const FabricCommand&) = delete;

  // Its exit code when `fabric` was chosen (0, or 2 for a usage or history error); nullopt when not.
  std::optional<int> run_chosen(std::ostream& out, std::ostream& err) const;

 private:
  CLI::App* fabric_ = nullptr;
  std::string history_path_;
  std::string since_;
  std::string link_;
  bool as_json_ = false;
  FabricSettings settings_;
};

}  // namespace tusk
