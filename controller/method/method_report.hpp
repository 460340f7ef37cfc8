// Views of a method test's result (controller/method/method_result.hpp): its report.json object
// and its summary-table lines. Both read the numbers the result holds; neither works one out.
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <string>
#include <vector>

#include "controller/method/method_result.hpp"

namespace tusk {

// `step_json` writes one step's outcome the way report.json writes a test.
nlohmann::ordered_json method_json(const MethodResult& result,
                                   const std::function<nlohmann::ordered_json(const TestOutcome&)>& step_json);

// The method's tables as rows of cells (a header row first): one row per step; then for a
// throughput search one row per frame size with its NDR and PDR, for congestion control one row
// per receiving port (empty for other kinds).
std::vector<std::vector<std::string>> method_step_rows(const MethodResult& result);
std::vector<std::vector<std::string>> method_throughput_rows(const MethodResult& result);

}  // namespace tusk
