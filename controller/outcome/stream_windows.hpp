// A finished test's receiving streams counted window by window, for localisation in time: each
// stream's series bins (stream_series.hpp) brought to the test's widest width, so window k is the
// same stretch of the test for every stream.
#pragma once

#include "controller/outcome/run_outcome.hpp"
#include "controller/verdict/flow_windows.hpp"

namespace tusk {

// Empty (no windows) when the test's streams have fewer than two bins between them.
FlowWindows stream_windows(const TestOutcome& test);

}  // namespace tusk
