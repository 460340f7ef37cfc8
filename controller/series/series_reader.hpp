// `tusk-controller series RUN_DIR`: the run's series file (series_file.hpp) read back, one line per
// stream and sample (or minute, where no sample of it is left at full resolution), each counter as
// its change since the stream's previous line.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

#include "controller/series/series_rows.hpp"

namespace tusk {

enum class SeriesFormat {
  Table,  // a line per row: where, when, throughput and the counters that changed
  Csv,    // a column per counter (and per gauge, as gauge.NAME) of any row
  Json,   // JSON Lines: an object per row
};

// Prints the rows `query` picks from RUN_DIR/series.sqlite (or that file named directly), in
// test, agent, stream and sample order. Throws std::runtime_error naming the file when it cannot
// be read or is not a series file.
std::uint64_t print_series(const std::string& run, const SeriesQuery& query, SeriesFormat format, std::ostream& out,
                           SeriesResolution resolution = SeriesResolution::Night);

}  // namespace tusk
