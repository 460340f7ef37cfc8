// What report.html draws, made from report.json: the run's facts and, per test, its streams as
// columns with their per-interval series, the BER table, the events on the time axis and the
// localisation. Every number is the report's; only the layout is the page's.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <functional>
#include <ostream>

namespace tusk {

// Throws std::runtime_error when `report` is not a Tusk report.json. Fields an older report lacks
// come out null or empty, never as an error: the page says what it does not have.
nlohmann::ordered_json report_page_model(const nlohmann::ordered_json& report);
// The same, with each stream's series taken from `whole_stream(test, stream)` (the stream's whole
// JSON, by its place in `report`'s tests and their streams), made as the model reaches it and let
// go after: `report` then needs no series of its own (StreamBins::Left), and one stream's are in
// memory at a time.
using WholeStream = std::function<nlohmann::ordered_json(std::size_t test, std::size_t stream)>;
nlohmann::ordered_json report_page_model(const nlohmann::ordered_json& report, const WholeStream& whole_stream);
// Its parts, for a page written a test at a time and a stream's series at a time: the model with
// "tests" an empty array, its last member; and each test's model in turn, handed to `take`
// (whole_stream as above, or none), with its streams' "series" column empty and each entry of it
// made by `series(i)`, valid while `take` runs.
nlohmann::ordered_json report_page_model_head(const nlohmann::ordered_json& report);
struct TestModel {
  nlohmann::ordered_json model;
  std::size_t streams = 0;
  std::function<nlohmann::ordered_json(std::size_t stream)> series;
};
void for_each_test_model(const nlohmann::ordered_json& report, const WholeStream& whole_stream,
                         const std::function<void(TestModel)>& take);

// report.html (report_html's page) written to `out` a test's model at a time, each stream's
// series from `whole_stream` when given (report_html.cpp).
void write_report_html(const nlohmann::ordered_json& report, const WholeStream& whole_stream, std::ostream& out);

}  // namespace tusk
