// For the series file's unit tests: a directory of the test's own, and the rows `series --json`
// prints of it, read as the command prints them (print_series, in process).
#pragma once

#include <unistd.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "controller/series/series_reader.hpp"

namespace tusk::testing {

// A directory named for `what` and this process, made empty and removed with everything in it.
struct ScratchDir {
  explicit ScratchDir(const std::string& what)
      : path(std::filesystem::temp_directory_path() / ("tusk-" + what + "-" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~ScratchDir() { std::filesystem::remove_all(path); }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  std::filesystem::path path;
};

inline std::vector<nlohmann::json> printed_series_rows(const std::string& run, const SeriesQuery& query,
                                                       SeriesResolution resolution = SeriesResolution::Night) {
  std::ostringstream out;
  print_series(run, query, SeriesFormat::Json, out, resolution);
  std::vector<nlohmann::json> rows;
  std::istringstream lines(out.str());
  for (std::string line; std::getline(lines, line);) rows.push_back(nlohmann::json::parse(line));
  return rows;
}

}  // namespace tusk::testing
