// `tusk-controller report`, `history --import` and `compare RUN_DIR` read report.json files that
// may come from anywhere (an older version, a hand edit, a ticket attachment): any JSON must be
// drawn or refused with an error, and read into history rows or refused, never crash.
#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string_view>

#include "common/ordered_json.hpp"
#include "controller/history/history_rows.hpp"
#include "controller/report/reports.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  // Read as read_report_file and `report` read a file (OrderedJson), then handed on as ordered_json.
  const auto parsed = tusk::OrderedJson::parse(text, nullptr, false);
  if (parsed.is_discarded()) return 0;
  const nlohmann::ordered_json report = parsed;
  try {
    (void)tusk::report_html(report);
  } catch (const std::runtime_error&) {
  }
  try {
    (void)tusk::rows_of_report(report, "fuzz-run");
  } catch (const std::runtime_error&) {
  }
  return 0;
}
