#include "controller/report/text_table.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace tusk {

std::string text_table(const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> widths;
  for (const auto& row : rows) {
    widths.resize(std::max(widths.size(), row.size()));
    for (std::size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t i = 0; i < row.size(); ++i) {
      line += fmt::format("{:<{}}", row[i], i + 1 < row.size() ? widths[i] + 2 : 0);
    }
    out += "  " + line + "\n";
  }
  return out;
}

}  // namespace tusk
