// A run's series file read as its user reads it: `tusk-controller series RUN_DIR --json`, a JSON
// object per stream and sample (counters as deltas). For the end-to-end and lab tests.
#pragma once

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <sstream>
#include <string>
#include <vector>

#include "tests/e2e/process.hpp"
#include "tests/support/build_paths.hpp"

namespace tusk::testing {

// The rows of RUN_DIR's series file that `filter` (series options such as {"--stream", "rx:lab-a/1"})
// picks; the command's output goes to `log_path`.
inline std::vector<nlohmann::json> series_rows(const std::string& run_dir, const std::string& log_path,
                                               const std::vector<std::string>& filter = {}) {
  std::vector<std::string> argv{tusk::build_paths::controller_bin(), "series", run_dir, "--json"};
  argv.insert(argv.end(), filter.begin(), filter.end());
  Process series(argv, log_path);
  EXPECT_EQ(series.wait(std::chrono::seconds(120)), 0) << series.log();
  std::vector<nlohmann::json> rows;
  std::istringstream lines(series.log());
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty() && line[0] == '{') rows.push_back(nlohmann::json::parse(line));
  }
  return rows;
}

// A stream's per-bin throughput from report.json (its "bins"), 0 for a bin without one.
inline std::vector<double> bin_throughputs(const nlohmann::json& stream) {
  std::vector<double> rates;
  for (const auto& rate : stream["bins"]["throughput_bps"])
    rates.push_back(rate.is_number() ? rate.get<double>() : 0.0);
  return rates;
}

}  // namespace tusk::testing
