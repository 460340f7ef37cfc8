// The history commands' tables for people (`history`, `fabric`).
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

namespace tusk {

// Columns padded to their widest cell; the last one is left as it is (a conclusion may be long).
inline std::string table_text(const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> widths;
  for (const auto& row : rows) {
    widths.resize(std::max(widths.size(), row.size()), 0);
    for (std::size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  std::string text;
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t i = 0; i < row.size(); ++i) {
      line += i + 1 < row.size() ? fmt::format("{:<{}}  ", row[i], widths[i]) : row[i];
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    text += "  " + line + "\n";
  }
  return text;
}

}  // namespace tusk
