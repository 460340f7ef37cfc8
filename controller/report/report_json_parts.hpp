// report.json's parts, for report_json (report_json.cpp) and the writer that writes the document
// a test and a stream at a time (report_json_stream.cpp): the document and a test with their
// largest member (tests; streams) an empty array where it goes, and one stream of a test.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <vector>

#include "controller/outcome/run_outcome.hpp"
#include "controller/report/reports.hpp"

namespace tusk {

nlohmann::ordered_json report_json_head(const RunOutcome& outcome);
// The document's "agents" (report_agents_json.cpp).
nlohmann::ordered_json agents_inventory_json(const std::vector<AgentView>& views);
nlohmann::ordered_json test_json_head(const TestOutcome& test, StreamBins bins = StreamBins::Written);
nlohmann::ordered_json test_json(const TestOutcome& test, StreamBins bins = StreamBins::Written);
// A stream's id, or, where a schedule's steps are judged together, {step, stream}.
nlohmann::ordered_json stream_ref(const StreamVerdict& verdict);
// The widest bins of any stream of the test: the width every stream's bins are written at.
std::uint32_t test_bin_width(const TestOutcome& test);
nlohmann::ordered_json test_stream_json(const TestOutcome& test, const StreamVerdict& verdict, std::uint32_t bin_width,
                                        StreamBins bins = StreamBins::Written);

}  // namespace tusk
