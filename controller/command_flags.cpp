#include "controller/command_flags.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>

#include "common/build_info.hpp"
#include "common/cli_completion.hpp"
#include "common/cli_suggestion.hpp"
#include "common/json_text.hpp"
#include "common/logging.hpp"
#include "common/printable.hpp"
#include "common/units.hpp"
#include "common/version.hpp"
#include "controller/actions/act_command.hpp"
#include "controller/actions/report_blame.hpp"
#include "controller/actions/take_actions.hpp"
#include "controller/history/baseline_check.hpp"
#include "controller/history/history_commands.hpp"
#include "controller/history/history_rows.hpp"
#include "controller/history/run_history.hpp"
#include "controller/metrics/metrics_endpoint.hpp"
#include "controller/model/training_model_loader.hpp"
#include "controller/model/training_model_printer.hpp"
#include "controller/profile/profile_loader.hpp"
#include "controller/report/plan_printer.hpp"
#include "controller/report/report_text.hpp"
#include "controller/report/reports.hpp"
#include "controller/run/run_orchestrator.hpp"
#include "controller/series/series_file.hpp"
#include "controller/series/series_outcome.hpp"
#include "controller/series/series_reader.hpp"
#include "controller/switches/snmp_credentials.hpp"
#include "controller/switches/switch_queries.hpp"
#include "controller/switches/topology_commands.hpp"

namespace tusk {

std::optional<Profile> load_or_report(const std::string& path) {
  try {
    return load_profile_file(path);
  } catch (const ProfileInvalid& invalid) {
    for (const auto& error : invalid.errors()) std::cerr << error.to_string() << "\n";
    std::cerr << fmt::format("{}: {} error(s); nothing was started\n", path, invalid.errors().size());
    return std::nullopt;
  }
}

// A duration flag's value; its error names the flag.
std::chrono::milliseconds duration_flag(std::string_view flag, const std::string& text) {
  try {
    return std::chrono::duration_cast<std::chrono::milliseconds>(units::parse_duration(text));
  } catch (const std::exception& e) {
    throw std::invalid_argument(fmt::format("{}: {}", flag, e.what()));
  }
}

// One socket per agent: a fabric of thousands of hosts needs more descriptors than the usual
// soft limit of 1024, so take what the hard limit allows.
void raise_descriptor_limit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur >= limit.rlim_max) return;
  limit.rlim_cur = limit.rlim_max;
  if (setrlimit(RLIMIT_NOFILE, &limit) != 0) spdlog::warn("cannot raise the open-file limit: {}", std::strerror(errno));
}

}  // namespace tusk
