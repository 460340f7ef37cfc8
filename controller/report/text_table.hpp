// A plain-text table for the terminal: left-aligned columns, each as wide as its widest cell,
// every line indented by two spaces. The run's summary and `report --text` print with it.
#pragma once

#include <string>
#include <vector>

namespace tusk {

std::string text_table(const std::vector<std::vector<std::string>>& rows);

}  // namespace tusk
